// Child process for the lock race: forked with an IPC channel, it waits for trials. Each trial names a
// folder and a start instant; at that instant it tries to take the folder lock. A winner marks its
// critical section with a file created O_EXCL (a second holder at the same time finds it: an
// overlap), holds for `holdMs`, removes the mark and releases. Every outcome goes back to the parent.
import { openSync, closeSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { FolderLock } from '../../src/storage/lock.js';

interface Trial {
  dir: string;
  at: number;
  holdMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const now = () => performance.timeOrigin + performance.now();

async function run(trial: Trial): Promise<Record<string, unknown>> {
  const early = trial.at - now() - 2;
  if (early > 0) await sleep(early);
  while (now() < trial.at); // spin the last ~2 ms so every contender starts at the same instant
  let lock: FolderLock;
  try {
    lock = await FolderLock.acquire(trial.dir);
  } catch (err) {
    const e = err as { code?: string; message: string };
    return { won: false, code: e.code, message: e.message };
  }
  const mark = join(trial.dir, 'HOLDER');
  let overlap = false;
  let marked = false;
  try {
    closeSync(openSync(mark, 'wx'));
    marked = true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    overlap = true;
  }
  await sleep(trial.holdMs);
  if (marked) rmSync(mark);
  lock.release();
  return { won: true, overlap };
}

process.on('message', (trial: Trial) => {
  run(trial).then(
    (outcome) => process.send!({ pid: process.pid, ...outcome }),
    (err: Error) => process.send!({ pid: process.pid, won: false, code: 'CRASH', message: err.stack }),
  );
});
process.on('disconnect', () => process.exit(0));
process.send!({ ready: true, pid: process.pid });
