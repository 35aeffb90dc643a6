// Postings a token index build spilled to disk when its held postings passed a budget (token-builder.ts):
// a run file, written beside the index and unlinked at once (so a crash leaves nothing; where the
// system cannot unlink an open file, it is removed when the build ends, and a data folder's unlisted
// files go on the next open). Per run and column, a section of records in increasing token id: the
// id, the byte length, then the token's posting bytes of that run. The final file is written by
// reading every run's section of a column in step, token by token, through a small buffer each.
import { readSync, rmSync, unlinkSync } from 'node:fs';
import { FileSink } from './file-sink.js';

/** A run file open for appending runs and reading them back. */
export class RunFile {
  readonly sink: FileSink;
  #path: string | null;

  constructor(path: string) {
    this.sink = new FileSink(path, 1 << 20, 'w+');
    this.#path = path;
    try {
      unlinkSync(path);
      this.#path = null;
    } catch {
      // Kept until close (a system that refuses to unlink an open file).
    }
  }

  /** Section readers over the byte ranges of one column in each run, in run order. */
  readers(sections: readonly (readonly [number, number])[], bufferBytes: number): RunReader[] {
    this.sink.flush();
    return sections.map(([from, to]) => new RunReader(this.sink.fd, from, to, bufferBytes));
  }

  close(): void {
    this.sink.abandon();
    if (this.#path !== null) rmSync(this.#path, { force: true });
  }
}

/** Reads one section's records in order: `id` is the current record's token (-1 when none is left). */
export class RunReader {
  readonly #fd: number;
  #at: number;
  readonly #end: number;
  readonly #buf: Buffer;
  #lo = 0;
  #hi = 0;
  id = -1;
  len = 0;

  constructor(fd: number, from: number, to: number, bufferBytes: number) {
    this.#fd = fd;
    this.#at = from;
    this.#end = to;
    this.#buf = Buffer.allocUnsafe(Math.max(16, bufferBytes));
    this.next();
  }

  /** Keeps the unread bytes and reads more behind them; false at the section's end. */
  #fill(): boolean {
    if (this.#at >= this.#end) return false;
    this.#buf.copy(this.#buf, 0, this.#lo, this.#hi);
    this.#hi -= this.#lo;
    this.#lo = 0;
    const want = Math.min(this.#buf.length - this.#hi, this.#end - this.#at);
    const n = readSync(this.#fd, this.#buf, this.#hi, want, this.#at);
    if (n <= 0) throw new Error('token index build: short read of a run file');
    this.#hi += n;
    this.#at += n;
    return true;
  }

  #varint(): number {
    let v = 0;
    let mul = 1;
    for (;;) {
      if (this.#lo === this.#hi && !this.#fill()) throw new Error('token index build: cut run record');
      const b = this.#buf[this.#lo++]!;
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 128;
    }
  }

  /** Moves to the next record (its bytes must have been copied). */
  next(): void {
    if (this.#lo === this.#hi && !this.#fill()) {
      this.id = -1;
      return;
    }
    this.id = this.#varint();
    this.len = this.#varint();
  }

  /** Copies the current record's bytes to `out` and moves to the next record. */
  copyTo(out: FileSink): void {
    let left = this.len;
    while (left > 0) {
      if (this.#lo === this.#hi && !this.#fill()) throw new Error('token index build: cut run record');
      const take = Math.min(left, this.#hi - this.#lo);
      out.write(this.#buf.subarray(this.#lo, this.#lo + take));
      this.#lo += take;
      left -= take;
    }
    this.next();
  }
}

/** A run's sections, one per column: [from, to) in the run file. */
export type RunSections = readonly (readonly [number, number])[];
