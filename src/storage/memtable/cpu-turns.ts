// Turns on the main thread for the CPU-heavy steps of writes (validate and flatten a request, build
// and encode its batch). Without them, concurrent writers chain through promise continuations, several
// requests' work runs back to back in one task, and a read's DuckDB results (delivered between tasks)
// wait behind whole batches of that work, far longer than a read takes. A turn
// starts in a setImmediate callback, one per loop iteration, so completed reads and I/O are handled
// between any two writes' steps. Reads take no turn: they are what the turns make room for.

const waiting: (() => void)[] = [];
let scheduled = false;

function next(): void {
  scheduled = false;
  waiting.shift()?.();
  // Immediates queued while the check phase runs wait for the next loop iteration, after its poll.
  if (waiting.length > 0) schedule();
}

function schedule(): void {
  scheduled = true;
  setImmediate(next);
}

/** Resolves when the caller may run its next CPU-heavy synchronous step (FIFO, one per loop turn). */
export function cpuTurn(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (!scheduled) schedule();
  });
}
