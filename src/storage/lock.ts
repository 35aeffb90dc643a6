// One writer per data folder, enforced by the kernel. The holder keeps an exclusive fcntl lock on
// <data>/lock.duckdb for as long as the store is open: DuckDB takes that lock when it opens a database
// file read-write (and names the holder's pid when it cannot), so no native addon of our own is needed.
// The kernel drops the lock when its process dies, however it dies, so there is no pid to trust, no
// stale lock and no takeover.
//
// fcntl locks belong to a process: they never conflict inside it, and closing ANY descriptor of the
// file in the process drops them. Hence a process-wide registry that refuses a second open of a folder
// before DuckDB touches the file, and a rule: nothing else opens lock.duckdb.
import { DuckDBInstance } from '../vendor/duckdb.js';
import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ConflictError, StorageError } from '../errors.js';
import { fsyncDir, fsyncFile } from './fs-util.js';

export const LOCK_FILE = 'lock.duckdb';
/** The pid file of earlier versions: no authority any more, removed by the holder. */
const LEGACY_LOCK = 'LOCK';
const TMP_PREFIX = `${LOCK_FILE}.tmp-`;
/** The lock database is never queried: one thread, a token of memory. */
const LOCK_DB_CONFIG = { threads: '1', memory_limit: '16MB', access_mode: 'READ_WRITE' };

// Folders (by real path) open in this process. On globalThis so that every copy of this module loaded in
// the process (a bundle and the package, say) shares it; worker threads each have their own.
const REGISTRY = Symbol.for('tracelake.folder-locks');
const held: Set<string> = ((globalThis as Record<symbol, unknown>)[REGISTRY] ??= new Set<string>()) as Set<string>;

export class FolderLock {
  readonly #dir: string;
  #db: DuckDBInstance | undefined;

  private constructor(dir: string, db: DuckDBInstance) {
    this.#dir = dir;
    this.#db = db;
  }

  /** Locks the (existing) folder `dir`, or fails with ConflictError STORE_LOCKED naming the holder. */
  static async acquire(dir: string): Promise<FolderLock> {
    const root = realpathSync.native(dir);
    if (held.has(root)) throw locked(root, process.pid, 'this process has it open already; close that store first');
    held.add(root); // synchronously, so two opens started together in this process cannot both pass
    try {
      const db = await lockFolder(root);
      // From here on this process is the only one in the folder: leftovers of earlier holders are ours.
      removeLeftovers(root);
      return new FolderLock(root, db);
    } catch (err) {
      held.delete(root);
      throw err;
    }
  }

  release(): void {
    const db = this.#db;
    if (!db) return;
    this.#db = undefined;
    try {
      db.closeSync(); // closes the file, which drops the kernel lock
    } finally {
      held.delete(this.#dir);
    }
  }
}

async function lockFolder(root: string): Promise<DuckDBInstance> {
  const path = join(root, LOCK_FILE);
  await ensureLockFile(root, path);
  try {
    return await DuckDBInstance.create(path, LOCK_DB_CONFIG);
  } catch (err) {
    const message = (err as Error).message;
    if (/Could not set lock on file/i.test(message)) {
      const pid = Number(/\(PID (\d+)\)/.exec(message)?.[1] ?? 0); // 0: the holder is outside our pid namespace
      throw locked(root, pid > 0 ? pid : undefined, 'stop it or open another folder', err);
    }
    throw new StorageError(`cannot open the lock file ${path}: ${message}`, { cause: err });
  }
}

/**
 * DuckDB refuses an empty or half-written database file, and a lock file must never be deleted (a
 * process could lock the old inode while another locks a new one). So the file is created complete
 * under a unique name and linked into place, which fails harmlessly when another process did it first.
 */
async function ensureLockFile(root: string, path: string): Promise<void> {
  if (existsSync(path)) return;
  const tmp = join(root, `${TMP_PREFIX}${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    (await DuckDBInstance.create(tmp, LOCK_DB_CONFIG)).closeSync();
    // Its bytes are durable before its name is: after a power cut the lock file is whole or absent
    // (an empty one would refuse every later open).
    fsyncFile(tmp);
    linkSync(tmp, path);
    fsyncDir(root);
  } catch (err) {
    // EEXIST: another process linked its file first. ENOENT: a holder removed our temporary file as a
    // leftover, so the lock file exists. Either way there is a lock file to open.
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EEXIST' && code !== 'ENOENT')
      throw new StorageError(`cannot create the lock file ${path}: ${(err as Error).message}`, { cause: err });
  } finally {
    rmSync(tmp, { force: true });
    rmSync(`${tmp}.wal`, { force: true });
  }
}

function removeLeftovers(root: string): void {
  for (const name of readdirSync(root)) {
    if (name === LEGACY_LOCK || name.startsWith(TMP_PREFIX)) rmSync(join(root, name), { force: true });
  }
}

function locked(root: string, pid: number | undefined, advice: string, cause?: unknown): ConflictError {
  const who = pid === undefined ? 'another process' : `process ${pid}`;
  const err = new ConflictError('STORE_LOCKED', `data folder is in use by ${who} (${root}); ${advice}`);
  if (cause !== undefined) (err as { cause?: unknown }).cause = cause;
  return err;
}
