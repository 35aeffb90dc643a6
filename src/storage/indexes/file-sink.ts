// Sequential writing of an index file through a fixed buffer, with the CRC-32 of everything written
// carried along, so a file of any size is written without holding it (the layout of our index files:
// the bytes, then their CRC-32, little-endian; crc32.ts withCrc for one held in memory).
import { closeSync, openSync, writeSync } from 'node:fs';
import { crc32 } from '../crc32.js';

export class FileSink {
  readonly fd: number;
  #buf: Buffer;
  #n = 0;
  #flushed = 0;
  #crc = 0;
  #closed = false;

  /** Creates (or truncates) `path`; `bufferBytes` of writes are gathered before each write to the file. */
  constructor(path: string, bufferBytes = 1 << 20, flags = 'w') {
    this.fd = openSync(path, flags);
    this.#buf = Buffer.allocUnsafe(bufferBytes);
  }

  /** Bytes written so far (flushed or not). */
  get position(): number {
    return this.#flushed + this.#n;
  }

  write(b: Uint8Array): void {
    if (this.#n + b.length > this.#buf.length) this.flush();
    if (b.length > this.#buf.length) {
      this.#out(b);
      return;
    }
    this.#buf.set(b, this.#n);
    this.#n += b.length;
  }

  byte(v: number): void {
    if (this.#n === this.#buf.length) this.flush();
    this.#buf[this.#n++] = v;
  }

  u32(v: number): void {
    if (this.#n + 4 > this.#buf.length) this.flush();
    this.#buf.writeUInt32LE(v >>> 0, this.#n);
    this.#n += 4;
  }

  varint(v: number): void {
    if (this.#n + 5 > this.#buf.length) this.flush();
    const b = this.#buf;
    let n = this.#n;
    while (v >= 0x80) {
      b[n++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    b[n++] = v;
    this.#n = n;
  }

  /** Writes out what the buffer holds. */
  flush(): void {
    if (this.#n === 0) return;
    this.#out(this.#buf.subarray(0, this.#n));
    this.#n = 0;
  }

  #out(b: Uint8Array): void {
    let off = 0;
    while (off < b.length) off += writeSync(this.fd, b, off, b.length - off, this.#flushed + off);
    this.#crc = crc32(b, this.#crc);
    this.#flushed += b.length;
  }

  /** Appends the CRC-32 of all written before it, writes everything out and closes the file. */
  finishWithCrc(): void {
    this.flush();
    this.u32(this.#crc);
    this.close();
  }

  /** Writes out the buffer and closes the file. */
  close(): void {
    if (this.#closed) return;
    this.flush();
    this.abandon();
  }

  /** Closes the file without writing what is buffered (the cleanup of a failed build; idempotent). */
  abandon(): void {
    if (this.#closed) return;
    this.#closed = true;
    closeSync(this.fd);
  }
}

/** Bytes of v as a varint. */
export function varintSize(v: number): number {
  let n = 1;
  while (v >= 0x80) {
    v >>>= 7;
    n++;
  }
  return n;
}
