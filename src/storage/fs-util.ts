// Durable file primitives: every file that must survive a crash is written to a temporary name,
// fsynced, renamed over the old one, and its folder fsynced, so a reader sees old or new, never half.
import { closeSync, existsSync, fstatSync, fsync, fsyncSync, mkdirSync, openSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export function fsyncFile(path: string): void {
  const fd = openSync(path, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * fsync on libuv's thread pool: a segment of tens or hundreds of MiB takes from tens of ms to seconds
 * to reach the disk, and an fsyncSync would stall every request of the server for that long.
 */
export async function fsyncPathAsync(path: string, flags: 'r' | 'r+' = 'r+'): Promise<void> {
  const fd = openSync(path, flags);
  try {
    await new Promise<void>((resolve, reject) => fsync(fd, (err) => (err ? reject(err) : resolve())));
  } finally {
    closeSync(fd);
  }
}

export function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o644): void {
  const tmp = `${path}.tmp-${process.pid}`;
  const fd = openSync(tmp, 'w', mode);
  try {
    const buf = typeof data === 'string' ? Buffer.from(data) : data;
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(tmp, { force: true }); // a failed write (a full disk) leaves no half file behind
    throw err;
  }
  closeSync(fd);
  renameSync(tmp, path);
  try {
    fsyncDir(dirname(path));
  } catch (err) {
    // The new file already replaced the old one (not durably): a crash may leave either, so whatever
    // either names must stay. The caller learns the write did not (surely) take.
    throw new ReplacedError(path, err);
  }
}

/** writeFileAtomic failed after the rename: `path` holds the new content now, perhaps not durably. */
export class ReplacedError extends Error {
  constructor(path: string, cause: unknown) {
    super(`${path} was replaced but its folder could not be synced: ${(cause as Error).message}`, { cause });
  }
}

export function ensureDir(dir: string): void {
  mkdirSync(dir, { recursive: true });
}

export function removeQuietly(path: string): void {
  rmSync(path, { force: true, recursive: true });
}

/**
 * Creates `dir` (and missing parents below `root`), fsyncing each new folder's parent, so a file later
 * made durable inside it is also reachable after a power loss (POSIX does not promise that a new
 * folder's entry survives without an fsync of its parent).
 */
export function ensureDirDurable(dir: string, root: string): void {
  if (existsSync(dir)) return;
  const missing: string[] = [];
  for (let d = dir; !existsSync(d) && d.startsWith(root) && d !== root; d = dirname(d)) missing.unshift(d);
  mkdirSync(dir, { recursive: true });
  for (const d of missing) fsyncDir(dirname(d));
}

/** Fills `buf` from file position `at` as far as the file goes; returns the bytes read. */
export function readFully(fd: number, buf: Uint8Array, at: number): number {
  let n = 0;
  while (n < buf.length) {
    const got = readSync(fd, buf, n, buf.length - n, at + n);
    if (got === 0) break;
    n += got;
  }
  return n;
}

/** Whether typed arrays are little-endian here (the index files' byte order: read in place when so). */
export const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** `length` bytes at `position` of an open file (fewer only at its end). */
export function readAt(fd: number, length: number, position: number): Uint8Array {
  const buf = new Uint8Array(length);
  return buf.subarray(0, readFully(fd, buf, position));
}

/**
 * A buffer kept for bytes used at once and never kept (index sections read, then decoded): memory's
 * first touch can cost more than the read itself (this machine: 1 MB read into a new buffer 3.5-4.4 ms,
 * into one used before 0.1-0.3 ms). Asks up to `keepUpTo` bytes share it; larger asks get new memory.
 */
export class ScratchBuffer {
  #buf = new Uint8Array(0);

  constructor(readonly keepUpTo: number) {}

  /** `n` bytes from the buffer's start (so aligned for any typed array), holding whatever they held; valid until the next call. */
  get(n: number): Uint8Array {
    if (n > this.keepUpTo) return new Uint8Array(n);
    // Grown by doubling, not made whole at once: V8 counts an ArrayBuffer's whole size against its
    // external memory, and 100 MB of them at a first question set off a full collection (its wall
    // time doubled).
    if (this.#buf.length < n) this.#buf = new Uint8Array(Math.min(this.keepUpTo, Math.max(n, 2 * this.#buf.length, 1 << 16)));
    return this.#buf.subarray(0, n);
  }

  /** `n` bytes of the buffer as 32-bit words, zeroed. */
  words(n: number): Uint32Array {
    const b = this.get(4 * n);
    return new Uint32Array(b.buffer, b.byteOffset, n).fill(0);
  }
}

/**
 * Where index files' parts (value postings, metric sections, token postings) are read: each read is
 * decoded before the next starts, so they share one buffer.
 */
export const indexReads = new ScratchBuffer(32 << 20);

/** `use(fd, size)` on a file opened for reading; null when it is missing or anything throws. */
export function withFile<T>(path: string, use: (fd: number, size: number) => T | null): T | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null;
  }
  try {
    return use(fd, fstatSync(fd).size);
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}
