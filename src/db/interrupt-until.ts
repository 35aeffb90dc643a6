// Stopping work that runs several statements on one connection: an interrupt between two statements
// is lost, so it is repeated until the work has settled (index repair, fact backfill).

/** Interrupts `conn()` every 20 ms until `task` settles (either way). */
export async function interruptUntilSettled(task: Promise<unknown>, conn: () => { interrupt(): void } | null | undefined): Promise<void> {
  let done = false;
  const settled = task.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  while (!done) {
    conn()?.interrupt();
    await Promise.race([settled, new Promise((r) => setTimeout(r, 20))]);
  }
}
