// Write-ahead log: numbered NDJSON files of record rows. Each append ends with a commit line, so a
// write torn by a crash is cut off on open and a request is either wholly in the log or not at all.
// `reliable` appends wait for fsync; concurrent ones share one fsync (group commit). Closed files
// are read by DuckDB (read_json) into the in-memory batch and deleted once sealed into Parquet.
import { closeSync, fsync, ftruncateSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { StorageError } from '../errors.js';
import { ensureDir, fsyncDir } from './fs-util.js';

const COMMIT_PREFIX = '{"commit":';
const FILE_RE = /^wal-(\d{9})\.ndjson$/;

export interface WalFile {
  readonly number: number;
  readonly path: string;
}

interface Waiter {
  ticket: number;
  resolve: () => void;
  reject: (e: unknown) => void;
}

export class WriteAheadLog {
  readonly #dir: string;
  #fd = -1;
  #number = 0;
  #bytes = 0;
  #closed: WalFile[] = [];
  // Durability is tracked by ticket: every append gets the next one; fsync rounds make a prefix durable.
  #written = 0;
  #waiters: Waiter[] = [];
  #rolled: number[] = []; // fds no longer written to, closed by the sync loop (never under an fsync)
  #looping = false;
  /** A failed write may have left bytes after `#bytes` in the open file. */
  #torn = false;
  readonly rollBytes: number;

  private constructor(dir: string, rollBytes: number) {
    this.#dir = dir;
    this.rollBytes = rollBytes;
  }

  /** Opens the log folder, trims a torn tail, and returns the log plus the files to replay. */
  static open(dir: string, rollBytes = 8 << 20): { wal: WriteAheadLog; replay: WalFile[] } {
    ensureDir(dir);
    const wal = new WriteAheadLog(dir, rollBytes);
    const files = readdirSync(dir)
      .map((f) => FILE_RE.exec(f))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => ({ number: Number(m[1]), path: join(dir, m[0]) }))
      .sort((a, b) => a.number - b.number);
    for (const f of files) trimTornTail(f.path);
    const replay = files.filter((f) => statSync(f.path).size > 0);
    for (const f of files) if (statSync(f.path).size === 0) rmSync(f.path, { force: true });
    wal.#number = files.length ? files[files.length - 1]!.number : 0;
    wal.#openNext();
    // The caller loads `replay` itself; roll() only hands out files closed from now on.
    return { wal, replay };
  }

  #openNext(): void {
    this.#number += 1;
    this.#fd = openSync(join(this.#dir, fileName(this.#number)), 'a');
    this.#bytes = 0;
    this.#torn = false;
    fsyncDir(this.#dir);
  }

  /**
   * Appends rows (already JSON lines) and a commit line; resolves once durable if `sync`. Throws, with
   * nothing left in the file, when the write fails or is cut short (a full disk): a torn request left
   * in the middle of the file would glue itself to the next one and take it down on load.
   */
  append(lines: string, lastSeq: number, sync: boolean): Promise<void> {
    if (this.#fd < 0) return Promise.reject(new Error('write-ahead log is closed'));
    if (this.#torn) this.#cutBack();
    const text = `${lines}${COMMIT_PREFIX}${lastSeq}}\n`;
    // Writing the string lets Node encode straight into the write (4x faster than Buffer.from first).
    const bytes = Buffer.byteLength(text);
    let written: number;
    try {
      written = writeSync(this.#fd, text);
    } catch (err) {
      this.#torn = true;
      this.#cutBack();
      throw new StorageError('writing the write-ahead log failed', { cause: err });
    }
    if (written !== bytes) {
      this.#torn = true;
      this.#cutBack();
      throw new StorageError(`writing the write-ahead log failed: wrote ${written} of ${bytes} bytes`);
    }
    this.#bytes += bytes;
    const ticket = ++this.#written;
    return sync ? this.#durable(ticket) : Promise.resolve();
  }

  /** Cuts a failed write off the open file; if that fails too, the next append tries again first. */
  #cutBack(): void {
    try {
      ftruncateSync(this.#fd, this.#bytes);
      this.#torn = false;
    } catch (err) {
      throw new StorageError('the write-ahead log holds a torn write that cannot be cut off', { cause: err });
    }
  }

  /** Bytes in the open file; the engine rolls it when this passes `rollBytes`. */
  get openBytes(): number {
    return this.#bytes;
  }

  /** Resolves once everything appended so far is on disk. */
  sync(): Promise<void> {
    return this.#durable(this.#written);
  }

  #durable(ticket: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#waiters.push({ ticket, resolve, reject });
      this.#kick();
    });
  }

  #kick(): void {
    if (this.#looping) return;
    this.#looping = true;
    setImmediate(() => void this.#loop());
  }

  async #loop(): Promise<void> {
    try {
      while (this.#waiters.length > 0 || this.#rolled.length > 0) {
        const target = this.#written;
        const rolled = this.#rolled;
        this.#rolled = [];
        const fds = this.#waiters.length > 0 && this.#fd >= 0 ? [...rolled, this.#fd] : rolled;
        let failure: unknown = null;
        try {
          await Promise.all(fds.map((fd) => new Promise<void>((res, rej) => fsync(fd, (e) => (e ? rej(e) : res())))));
        } catch (err) {
          failure = err;
        }
        for (const fd of rolled) closeSync(fd);
        const still: Waiter[] = [];
        for (const w of this.#waiters) {
          if (w.ticket > target) still.push(w);
          else if (failure) w.reject(failure);
          else w.resolve();
        }
        this.#waiters = still;
      }
    } finally {
      this.#looping = false;
    }
  }

  /** Closes the open file (if it holds anything) so it can be loaded; returns the closed files not yet taken. */
  roll(): WalFile[] {
    if (this.#bytes > 0 && this.#fd >= 0) {
      this.#closed.push({ number: this.#number, path: join(this.#dir, fileName(this.#number)) });
      this.#rolled.push(this.#fd);
      this.#openNext();
      this.#kick();
    }
    const out = this.#closed;
    this.#closed = [];
    return out;
  }

  /** Deletes closed files up to and including `number` (their rows are sealed). */
  dropThrough(number: number): void {
    for (const f of readdirSync(this.#dir)) {
      const m = FILE_RE.exec(f);
      const n = m ? Number(m[1]) : NaN;
      if (n <= number && n !== this.#number) rmSync(join(this.#dir, f), { force: true });
    }
  }

  async close(): Promise<void> {
    if (this.#fd < 0) return;
    await this.sync();
    const fd = this.#fd;
    this.#fd = -1;
    closeSync(fd);
    while (this.#looping || this.#rolled.length > 0) await new Promise((r) => setImmediate(r));
  }
}

function fileName(n: number): string {
  return `wal-${String(n).padStart(9, '0')}.ndjson`;
}

/** Cuts a file after its last complete commit line (a crash can leave a partial request behind). */
function trimTornTail(path: string): void {
  const text = readFileSync(path);
  let end = text.length;
  // Walk back line by line to the last commit marker.
  while (end > 0) {
    const lineEnd = text[end - 1] === 0x0a ? end - 1 : end;
    const lineStart = text.lastIndexOf(0x0a, lineEnd - 1) + 1;
    const line = text.subarray(lineStart, lineEnd).toString();
    if (text[end - 1] === 0x0a && line.startsWith(COMMIT_PREFIX) && line.endsWith('}')) break;
    end = lineStart;
  }
  if (end !== text.length) {
    const fd = openSync(path, 'r+');
    try {
      ftruncateSync(fd, end);
    } finally {
      closeSync(fd);
    }
  }
}
