// One writer per data folder. The lock file holds the owner's pid; a lock left by a process that
// no longer exists (killed with SIGKILL) is taken over, a live owner makes open fail with a clear error.
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ConflictError } from '../errors.js';

export class FolderLock {
  readonly #path: string;
  #held = false;

  private constructor(path: string) {
    this.#path = path;
  }

  static acquire(dir: string): FolderLock {
    const lock = new FolderLock(join(dir, 'LOCK'));
    lock.#take();
    return lock;
  }

  #take(): void {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const fd = openSync(this.#path, 'wx', 0o600);
        writeSync(fd, String(process.pid));
        closeSync(fd);
        this.#held = true;
        return;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const owner = Number.parseInt(readOwner(this.#path), 10);
      if (Number.isInteger(owner) && owner > 0 && isAlive(owner)) {
        throw new ConflictError(
          'STORE_LOCKED',
          `data folder is in use by process ${owner} (${this.#path}); stop it or open another folder`,
        );
      }
      rmSync(this.#path, { force: true }); // stale: its owner is gone
    }
    throw new ConflictError('STORE_LOCKED', `could not lock ${this.#path}`);
  }

  release(): void {
    if (!this.#held) return;
    this.#held = false;
    if (readOwner(this.#path) === String(process.pid)) rmSync(this.#path, { force: true });
  }
}

function readOwner(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return '';
  }
}

function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
