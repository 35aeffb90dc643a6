// Write-ahead log: numbered files in the Arrow IPC stream format (`wal-000000042.arrows`), readable by
// any Arrow reader (pyarrow.ipc.open_stream, arrow-rs, apache-arrow). A file starts with the record
// schema; each request is one RecordBatch message whose custom metadata `tracelake.commit` holds
// {last_seq, rows, dead, childless?, awaits?, crc}: the highest sequence number it used, the sequence
// numbers it deletes or replaces, those whose has_children now reads false (parents a delete left
// without children), the ids of parent spans its rows wait for (logged before their parent), and the
// CRC-32 of its body. Long lists of seqs are packed instead (`dead_packed`, `childless_packed`:
// seq-pack.ts) with a CRC-32 of their text (`packed_crc`). A message that is cut short, or whose body
// or packed lists do not match their CRC, ends the file: on open the file is cut there, so a request is wholly in the log or
// not at all. A delete without rows is a zero-row batch. `reliable` appends wait for fsync;
// concurrent ones share one fsync (group commit).
import { closeSync, fstatSync, fsync, ftruncateSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Message, RecordBatch, RecordBatchStreamReader, Schema, Table, tableToIPC } from 'apache-arrow';
import { StorageError } from '../../errors.js';
import { BatchBuilder, RECORD_SCHEMA } from '../memtable/batch-builder.js';
import { crc32 } from '../crc32.js';
import { PACK_FROM, packSeqs, unpackSeqs } from '../seq-pack.js';
import { ensureDir, fsyncDir, readFully } from '../fs-util.js';

const FILE_RE = /^wal-(\d{9})\.arrows$/;
const COMMIT_KEY = 'tracelake.commit';
const CRC_PLACEHOLDER = '~~~~~~~~';
/** End-of-stream marker: written when a file is closed; a crash leaves none, which readers accept too. */
const EOS = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);

export interface WalFile {
  readonly number: number;
  readonly path: string;
}

/** One request as the log holds it. */
export interface WalEntry {
  /** The rows (null for a delete without rows). */
  readonly batch: RecordBatch | null;
  /** Sequence numbers this request deletes or replaces. */
  readonly dead: readonly number[];
  /** Sequence numbers of rows whose has_children reads false from here on (overrides, see snapshot.ts). */
  readonly childless: readonly number[];
  /** Ids of parent spans (in the rows' run) that the rows wait for: the parent gets has_children. */
  readonly awaits: readonly string[];
  readonly lastSeq: number;
}

interface Waiter {
  ticket: number;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/**
 * The schema message that opens a file. Its metadata carries the format and the first sequence number
 * the file's memory table was given (deletes in the file at or above it hit rows of the same file).
 */
function header(firstSeq: number): Uint8Array {
  const schema = new Schema(
    RECORD_SCHEMA.fields,
    new Map([
      ['tracelake.wal', '2'],
      ['tracelake.first_seq', String(firstSeq)],
    ]),
  );
  const bytes = tableToIPC(new Table(schema), 'stream');
  return bytes.subarray(0, bytes.length - EOS.length);
}
const BATCH_PREFIX = tableToIPC(new Table(RECORD_SCHEMA), 'stream').length - EOS.length;
const EMPTY = new BatchBuilder().build([]);

/** One request as the bytes of a RecordBatch message, CRC patched into its metadata. */
export function encodeEntry(
  batch: RecordBatch | null,
  dead: readonly number[],
  lastSeq: number,
  childless: readonly number[] = [],
  awaits: readonly string[] = [],
): Uint8Array {
  const rows = batch?.numRows ?? 0;
  // `childless` and `awaits` only when there are some: entries of older versions read the same.
  // A long list of seqs (a large delete's) is packed (seq-pack.ts); a short one stays a JSON array.
  const deadPacked = dead.length >= PACK_FROM ? packSeqs(dead) : null;
  const childlessPacked = childless.length >= PACK_FROM ? packSeqs(childless) : null;
  const meta = JSON.stringify({
    v: 1,
    last_seq: lastSeq,
    rows,
    ...(deadPacked !== null ? { dead_packed: deadPacked } : { dead }),
    ...(childlessPacked !== null ? { childless_packed: childlessPacked } : childless.length > 0 ? { childless } : {}),
    ...(deadPacked !== null || childlessPacked !== null ? { packed_crc: packedCrc(deadPacked, childlessPacked) } : {}),
    ...(awaits.length > 0 ? { awaits } : {}),
    crc: CRC_PLACEHOLDER,
  });
  const withMeta = new RecordBatch(RECORD_SCHEMA, (batch ?? EMPTY).data, new Map([[COMMIT_KEY, meta]]));
  const ipc = tableToIPC(new Table([withMeta]), 'stream');
  const msg = Buffer.from(ipc.buffer, ipc.byteOffset + BATCH_PREFIX, ipc.length - BATCH_PREFIX - EOS.length);
  const metaLen = msg.readInt32LE(4);
  const crc = crc32(msg.subarray(8 + metaLen));
  // The placeholder is ours and unique in the header (it holds no request data): same length, patched in place.
  const at = msg.indexOf(CRC_PLACEHOLDER);
  if (at < 0 || at > 8 + metaLen) throw new Error('commit metadata not found in the encoded batch');
  msg.write(crc.toString(16).padStart(8, '0'), at, 'latin1');
  return msg;
}

/** The CRC-32 of an entry's packed lists (the body's CRC does not cover the metadata they sit in). */
function packedCrc(dead: string | null, childless: string | null): string {
  return crc32(Buffer.from(`${dead ?? ''}/${childless ?? ''}`, 'latin1'))
    .toString(16)
    .padStart(8, '0');
}

/** Reads a log file: the whole requests it holds, and the byte length they end at (the rest is torn). */
export function readWalFile(path: string): { entries: WalEntry[]; firstSeq: number; validBytes: number; fileBytes: number } {
  return parseWal(readFileSync(path));
}

/**
 * The whole requests of a log file from byte `from` on (the end of the requests read before, or 0),
 * read without changing the file (a read-only store follows the writer's log this way): `validBytes`
 * is where they end in the file, `ino` which file it was (a file of the same name made anew is
 * another file). A file cut short or not yet headed reads as no requests.
 */
export function readWalFrom(path: string, from: number): { entries: WalEntry[]; firstSeq: number; validBytes: number; ino: number } {
  const fd = openSync(path, 'r');
  try {
    const { ino, size } = fstatSync(fd);
    if (from === 0) {
      const buf = Buffer.alloc(size);
      const { entries, firstSeq, validBytes } = parseWal(buf.subarray(0, readFully(fd, buf, 0)));
      return { entries, firstSeq, validBytes, ino };
    }
    // The schema message heads every file: decoding the requests after `from` needs it.
    const frame = Buffer.alloc(8);
    if (readFully(fd, frame, 0) < 8) return { entries: [], firstSeq: 0, validBytes: 0, ino };
    const headLen = 8 + frame.readInt32LE(4);
    const buf = Buffer.alloc(headLen + Math.max(0, size - from));
    const got = readFully(fd, buf.subarray(0, headLen), 0);
    const tail = readFully(fd, buf.subarray(headLen), from);
    if (got < headLen) return { entries: [], firstSeq: 0, validBytes: 0, ino };
    const { entries, firstSeq, validBytes } = parseWal(buf.subarray(0, headLen + tail));
    return { entries, firstSeq, validBytes: from + Math.max(0, validBytes - headLen), ino };
  } finally {
    closeSync(fd);
  }
}

/** The whole requests of a log file's bytes (see readWalFile). */
function parseWal(buf: Buffer): { entries: WalEntry[]; firstSeq: number; validBytes: number; fileBytes: number } {
  const spans: { start: number; metaLen: number; end: number }[] = [];
  let o = 0;
  while (o + 8 <= buf.length) {
    if (buf.readUInt32LE(o) !== 0xffffffff) break;
    const metaLen = buf.readInt32LE(o + 4);
    if (metaLen === 0 || o + 8 + metaLen > buf.length) break; // end of stream, or cut short
    let body: number;
    try {
      body = Number(Message.decode(buf.subarray(o + 8, o + 8 + metaLen)).bodyLength);
    } catch {
      break;
    }
    if (o + 8 + metaLen + body > buf.length) break;
    spans.push({ start: o, metaLen, end: o + 8 + metaLen + body });
    o += 8 + metaLen + body;
  }
  if (spans.length === 0) return { entries: [], firstSeq: 0, validBytes: 0, fileBytes: buf.length };
  const entries: WalEntry[] = [];
  let validBytes = spans[0]!.end; // the schema message
  let batches: RecordBatch[] = [];
  let firstSeq = 0;
  try {
    const reader = RecordBatchStreamReader.from(buf.subarray(0, spans[0]!.end));
    reader.open();
    firstSeq = Number(reader.schema.metadata.get('tracelake.first_seq') ?? 0);
  } catch {
    return { entries: [], firstSeq: 0, validBytes: 0, fileBytes: buf.length };
  }
  try {
    batches = [...RecordBatchStreamReader.from(buf.subarray(0, spans[spans.length - 1]!.end))];
  } catch {
    // A message that frames correctly but does not decode: keep what decodes, message by message below.
    batches = [];
    for (let i = 1; i < spans.length; i++) {
      try {
        const [b] = [
          ...RecordBatchStreamReader.from(Buffer.concat([buf.subarray(0, spans[0]!.end), buf.subarray(spans[i]!.start, spans[i]!.end)])),
        ];
        if (!b) break;
        batches.push(b);
      } catch {
        break;
      }
    }
  }
  for (let i = 0; i < batches.length && i + 1 < spans.length; i++) {
    const span = spans[i + 1]!;
    const meta = batches[i]!.metadata.get(COMMIT_KEY);
    if (!meta) break;
    let commit: {
      last_seq: number;
      rows: number;
      dead?: number[];
      dead_packed?: string;
      childless?: number[];
      childless_packed?: string;
      packed_crc?: string;
      awaits?: string[];
      crc: string;
    };
    try {
      commit = JSON.parse(meta) as typeof commit;
    } catch {
      break;
    }
    if (
      crc32(buf.subarray(span.start + 8 + span.metaLen, span.end))
        .toString(16)
        .padStart(8, '0') !== commit.crc
    )
      break;
    let dead: readonly number[];
    let childless: readonly number[];
    const packed = commit.dead_packed !== undefined || commit.childless_packed !== undefined;
    if (packed && packedCrc(commit.dead_packed ?? null, commit.childless_packed ?? null) !== commit.packed_crc) break;
    try {
      dead = commit.dead_packed !== undefined ? unpackSeqs(commit.dead_packed) : (commit.dead ?? []);
      childless = commit.childless_packed !== undefined ? unpackSeqs(commit.childless_packed) : (commit.childless ?? []);
    } catch {
      break;
    }
    entries.push({
      batch: commit.rows > 0 ? batches[i]! : null,
      dead,
      childless,
      awaits: commit.awaits ?? [],
      lastSeq: commit.last_seq,
    });
    validBytes = span.end;
  }
  return { entries, firstSeq, validBytes, fileBytes: buf.length };
}

export class WriteAheadLog {
  readonly #dir: string;
  #fd = -1;
  #number = 0;
  #bytes = 0;
  /** Bytes written to log files since open (write amplification: what the log costs). */
  #total = 0;
  // Durability is tracked by ticket: every append gets the next one; fsync rounds make a prefix durable.
  #written = 0;
  #waiters: Waiter[] = [];
  #rolled: number[] = []; // fds no longer written to, closed by the sync loop (never under an fsync)
  #looping = false;
  /** A failed write may have left bytes after `#bytes` in the open file. */
  #torn = false;
  /** Set when an fsync failed: the kernel may have dropped those pages, so the file is not trusted again. */
  #failed: unknown = null;

  private constructor(dir: string) {
    this.#dir = dir;
  }

  /** A log that never opens a file (a read-only store's): every append is refused. */
  static detached(dir: string): WriteAheadLog {
    return new WriteAheadLog(dir);
  }

  /**
   * Opens the log folder: deletes files up to `afterNumber` (sealed), cuts torn tails, and returns the
   * files to replay. Call `start` to open a new file for appends once replay is done.
   */
  static open(dir: string, afterNumber = 0): { wal: WriteAheadLog; replay: WalFile[] } {
    ensureDir(dir);
    const wal = new WriteAheadLog(dir);
    const files = listWalFiles(dir);
    const replay: WalFile[] = [];
    for (const f of files) {
      // Sealed already (a crash came between the manifest and the deletion): leftovers.
      if (f.number <= afterNumber) {
        rmSync(f.path, { force: true });
        continue;
      }
      const { validBytes, fileBytes, entries } = readWalFile(f.path);
      if (validBytes < fileBytes) truncate(f.path, validBytes);
      if (entries.length > 0) replay.push(f);
      else rmSync(f.path, { force: true });
    }
    wal.#number = Math.max(afterNumber, files.length ? files[files.length - 1]!.number : 0);
    return { wal, replay };
  }

  /** Opens the file appends go to (the first after the replayed ones); rows from `firstSeq` on go there. */
  start(firstSeq: number): number {
    this.#openNext(firstSeq);
    return this.#number;
  }

  /** Creates the next file; the log switches to it only once it exists, headed, with its folder entry synced. */
  #openNext(firstSeq: number): void {
    const path = join(this.#dir, fileName(this.#number + 1));
    const fd = openSync(path, 'w');
    try {
      const head = header(firstSeq);
      writeAll(fd, head);
      fsyncDir(this.#dir);
      this.#fd = fd;
      this.#bytes = head.length;
      this.#total += head.length;
    } catch (err) {
      closeSync(fd);
      rmSync(path, { force: true });
      throw err;
    }
    this.#number += 1;
    this.#torn = false;
  }

  /** Number of the file appends go to now. */
  get number(): number {
    return this.#number;
  }

  /**
   * Appends one request; resolves once durable if `sync`. Throws, with nothing left in the file, when
   * the write fails or is cut short (a full disk): a torn request left in the middle of the file would
   * end the file there on the next open and take the requests after it along.
   */
  append(bytes: Uint8Array, sync: boolean): Promise<void> {
    if (this.#fd < 0) return Promise.reject(new StorageError('write-ahead log is closed'));
    if (this.#failed)
      return Promise.reject(
        new StorageError('the write-ahead log could not be synced to disk; writes are refused until it is replaced', {
          cause: this.#failed,
        }),
      );
    if (this.#torn) this.#cutBack();
    let written: number;
    try {
      written = writeSync(this.#fd, bytes);
    } catch (err) {
      this.#torn = true;
      this.#cutBack();
      throw new StorageError('writing the write-ahead log failed', { cause: err });
    }
    if (written !== bytes.length) {
      this.#torn = true;
      this.#cutBack();
      throw new StorageError(`writing the write-ahead log failed: wrote ${written} of ${bytes.length} bytes`);
    }
    this.#bytes += bytes.length;
    this.#total += bytes.length;
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

  /** Bytes appended to log files since open (headers and entries). */
  get bytesWritten(): number {
    return this.#total;
  }

  /** Bytes in the open file. */
  get openBytes(): number {
    return this.#bytes;
  }

  /** The fsync failure that made the log refuse writes, if any. */
  get failed(): unknown {
    return this.#failed;
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
        let failure: unknown = this.#failed;
        if (!failure) {
          try {
            await Promise.all(fds.map((fd) => new Promise<void>((res, rej) => fsync(fd, (e) => (e ? rej(e) : res())))));
          } catch (err) {
            failure = err;
            // fsyncgate: after a failed fsync the kernel may mark the lost pages clean, so a later fsync
            // of the same file succeeds without them. The file is never trusted again: appends are
            // refused until `roll` gives the log a new file (the store then seals what the old one held).
            this.#failed = err;
          }
        }
        for (const fd of rolled) closeSync(fd);
        const still: Waiter[] = [];
        for (const w of this.#waiters) {
          if (w.ticket > target) still.push(w);
          else if (failure) w.reject(new StorageError('syncing the write-ahead log failed', { cause: failure }));
          else w.resolve();
        }
        this.#waiters = still;
      }
    } finally {
      this.#looping = false;
    }
  }

  /**
   * Closes the open file (with an end-of-stream marker) and starts the next one; returns the number of
   * the file just closed. After an fsync failure this also gives the log a fresh, trusted file: the
   * failed one stays until what it holds is sealed into segments (`dropThrough`).
   */
  roll(firstSeq: number): number {
    const closed = this.#number;
    if (this.#fd >= 0) {
      const old = this.#fd;
      this.#openNext(firstSeq); // throws, leaving the log on the old file, when the new one cannot be made
      if (this.#failed) {
        // Not synced again (that could only falsely succeed); its rows reach disk through the seal.
        closeSync(old);
        this.#failed = null;
        return closed;
      }
      try {
        writeSync(old, EOS);
      } catch {
        // A missing end-of-stream marker is what a crash leaves too; readers accept it.
      }
      this.#rolled.push(old);
      this.#kick();
    }
    return closed;
  }

  /**
   * Deletes files up to and including `number` (their rows are sealed), never the open one. Unlinking
   * a 64 MiB file takes tens of ms, so it runs on the thread pool; one not deleted (a crash, an error)
   * is deleted on the next open, which knows it is sealed.
   */
  async dropThrough(number: number): Promise<void> {
    const gone = listWalFiles(this.#dir).filter((f) => f.number <= number && f.number !== this.#number);
    await Promise.all(gone.map((f) => rm(f.path, { force: true }).catch(() => undefined)));
  }

  async close(): Promise<void> {
    if (this.#fd < 0) return;
    if (!this.#failed) await this.sync().catch(() => undefined);
    const fd = this.#fd;
    this.#fd = -1;
    closeSync(fd);
    while (this.#looping || this.#rolled.length > 0) await new Promise((r) => setImmediate(r));
  }
}

export function listWalFiles(dir: string): WalFile[] {
  return readdirSync(dir)
    .map((f) => FILE_RE.exec(f))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ number: Number(m[1]), path: join(dir, m[0]) }))
    .sort((a, b) => a.number - b.number);
}

function fileName(n: number): string {
  return `wal-${String(n).padStart(9, '0')}.arrows`;
}

function writeAll(fd: number, bytes: Uint8Array): void {
  let off = 0;
  while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
}

function truncate(path: string, length: number): void {
  const fd = openSync(path, 'r+');
  try {
    ftruncateSync(fd, length);
  } finally {
    closeSync(fd);
  }
}
