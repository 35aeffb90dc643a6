// The value index of a segment (`seg-N.vix`): for each of a few low-cardinality columns (type, name,
// model, tags), every value it holds with the rows (file row numbers) holding it; and for each metric
// the segment stores with few distinct values, those values with the rows holding each (metric-codes.ts). A count
// whose every test is an equality, membership or substring test of those columns or a comparison of
// such a metric with a number is answered from it without reading the segment
// (query/exec/value-rows.ts, count-cache.ts). About 3 bytes a row on disk, and 4 bytes a row with a
// value (12 a distinct value) for each metric.
//
// Exact, not a sketch: postings hold every row of every value, NULLs in none. A column with more than
// MAX_VALUES distinct values in a segment (tags: distinct tag sets) is left out of that segment's file
// (its tests read the column as before). Built with the segment, from the written file: DuckDB gives
// each column's distinct values with their hash() and each row's hash(), matched here, so no string
// crosses into JavaScript per row (hash() is used only while building; the file holds the strings).
//
// Layout (little-endian, storage-format.md): magic and rows; the postings of every value, column by
// column (the first row, then each gap less one, as varints; or, where those would take as many bytes
// as one bit a row or more, that bitmap: a dense value, like a common tag, decodes in rows/32 steps),
// each followed by its CRC-32; then each metric's section and its CRC-32; then the directory (per
// column the number of values, or NOT_INDEXED, and per value its UTF-8 length and bytes, its row count
// and its postings' length; then the number of metric sections and per section its metric id,
// distinct values and rows with a value), its length, a CRC-32 of the first 8 bytes and
// the directory, and the magic again. A reader loads the directory (its checksum and rows checked: a
// damaged or stale file is not used) and reads a value's postings or a metric's section when a count
// asks for them, checking theirs; so a question reads the values it tests, not the file.
import { renameSync, rmSync, statSync } from 'node:fs';
import type { Connection } from '../../db/database.js';
import { crc32 } from '../crc32.js';
import { fsyncPathAsync, indexReads, LITTLE_ENDIAN, readAt, readFully, ScratchBuffer, withFile } from '../fs-util.js';
import { FileSink, varintSize } from './file-sink.js';
import {
  buildMetricSection,
  markMetricRows,
  metricsWithinCap,
  sectionBytes,
  type MetricRange,
  type MetricSection,
} from './metric-codes.js';
import { EMPTY, int, ident, joinSql, param, raw, sql } from '../../query/sql.js';

export const VALUE_COLUMNS = ['type', 'name', 'model', 'tags'] as const;
export type ValueColumn = (typeof VALUE_COLUMNS)[number];

const MAGIC = 0x34584956; // "VIX4" (VIX2 had no bitmaps, VIX3 no metrics: rebuilt by repair)
const NOT_INDEXED = 0xffffffff;
/**
 * Segments with fewer rows get no value index by default (RecordStoreOptions.valueIndexMinRows): counts
 * read smaller segments together, never one by one (count-cache.ts MIN_ROWS, the same number).
 */
export const VALUE_INDEX_MIN_ROWS = 100_000;
/** Distinct values (tag sets for tags) above which a column is left out of a segment's file. */
export const MAX_VALUES = 4096;

export function valueIndexPath(parquetPath: string): string {
  return parquetPath.replace(/\.parquet$/, '.vix');
}

/** One column of a loaded directory: each value, its row count and where its postings lie in the file. */
export interface ValueColumnIndex {
  readonly values: readonly string[];
  readonly counts: Uint32Array;
  /** File offset and byte length of each value's postings (its CRC-32 follows them). */
  readonly offsets: Float64Array;
  readonly lengths: Uint32Array;
}

export interface ValueIndex {
  readonly path: string;
  readonly rows: number;
  /** By VALUE_COLUMNS' order; null for a column the file leaves out. */
  readonly columns: readonly (ValueColumnIndex | null)[];
  /** The sections of the metrics the file holds, by metric id (the segment's others are left out). */
  readonly metrics: ReadonlyMap<number, MetricSection>;
  /** Bytes the directory takes in memory (about its size on disk). */
  readonly bytes: number;
}

// ---------------------------------------------------------------- building

/** A column's distinct values, by the low and high halves of their hash() (open addressing). */
class HashCodes {
  readonly #lo: Uint32Array;
  readonly #hi: Uint32Array;
  readonly #code: Int32Array;
  readonly #mask: number;

  constructor(hashes: readonly bigint[]) {
    let size = 16;
    while (size < hashes.length * 2) size *= 2;
    this.#lo = new Uint32Array(size);
    this.#hi = new Uint32Array(size);
    this.#code = new Int32Array(size).fill(-1);
    this.#mask = size - 1;
    hashes.forEach((h, code) => {
      const lo = Number(h & 0xffffffffn);
      const hi = Number(h >> 32n);
      let s = lo & this.#mask;
      while (this.#code[s] !== -1) s = (s + 1) & this.#mask;
      this.#lo[s] = lo;
      this.#hi[s] = hi;
      this.#code[s] = code;
    });
  }

  /** The value's code, or -1 (NULL, whose hash is written as 0 and is no value's). */
  code(lo: number, hi: number): number {
    let s = lo & this.#mask;
    for (;;) {
      const c = this.#code[s]!;
      if (c === -1 || (this.#lo[s] === lo && this.#hi[s] === hi)) return c;
      s = (s + 1) & this.#mask;
    }
  }
}

interface ColumnPlan {
  readonly values: string[];
  /** Per value, the codes of the column's values it stands for (tags: a tag set stands for its tags). */
  readonly expands: readonly (readonly number[])[] | null;
  readonly hashes: bigint[];
}

/**
 * Each column's distinct values (tags: distinct tag sets, with their tags) and their hash(), or null
 * for a column with more than MAX_VALUES of them or whose hashes are not distinct.
 */
async function plans(conn: Connection, abs: string): Promise<(ColumnPlan | null)[]> {
  const path = param(abs);
  const src = sql`read_parquet(${path}, hive_partitioning = false)`;
  // A column of many values (a name per span) would cost a hash table of them all: an estimate in
  // constant memory first (HyperLogLog, a few percent off), and only columns well within the cap are
  // listed exactly. Column names come from VALUE_COLUMNS (ours).
  const [est] = await conn.all(
    sql`SELECT ${joinSql(VALUE_COLUMNS.map((c) => sql`approx_count_distinct(${ident(c === 'tags' ? 'tag_set' : c)}) AS ${ident(c)}`))} FROM ${src}`,
  );
  const few = (c: string) => Number(est![c]) <= MAX_VALUES * 1.5;
  // The numbers are the columns' positions.
  const distinct = joinSql(
    VALUE_COLUMNS.map((c, i) =>
      c === 'tags' || !few(c) ? null : sql`SELECT DISTINCT ${int(i)} AS c, ${ident(c)} AS v FROM ${src} WHERE ${ident(c)} IS NOT NULL`,
    ).filter((q) => q !== null),
    ' UNION ALL ',
  );
  const rows =
    distinct === EMPTY
      ? []
      : await conn.all(
          sql`WITH e AS (SELECT c, v, hash(v)::VARCHAR AS h, count(*) OVER (PARTITION BY c) AS k,
                          row_number() OVER (PARTITION BY c ORDER BY v) AS i FROM (${distinct}))
      SELECT c, k, CASE WHEN k <= ${int(MAX_VALUES)} THEN v END AS v, h FROM e WHERE k <= ${int(MAX_VALUES)} OR i = 1 ORDER BY c, i`,
        );
  const out: (ColumnPlan | null)[] = VALUE_COLUMNS.map((c) => (few(c) ? { values: [], expands: null, hashes: [] } : null));
  for (const r of rows) {
    const c = Number(r['c']);
    if (Number(r['k']) > MAX_VALUES) out[c] = null;
    else {
      out[c]!.values.push(String(r['v']));
      out[c]!.hashes.push(BigInt(String(r['h'])));
    }
  }
  const sets = !few('tags')
    ? []
    : await conn.all(
        sql`SELECT hash(tag_set)::VARCHAR AS h, any_value(list_distinct(tags)) AS t FROM ${src}
            WHERE tag_set <> '' GROUP BY tag_set LIMIT ${int(MAX_VALUES + 1)}`,
      );
  const tags = VALUE_COLUMNS.indexOf('tags');
  if (out[tags] === null || sets.length > MAX_VALUES) out[tags] = null;
  else {
    const codes = new Map<string, number>();
    const expands: number[][] = [];
    const hashes: bigint[] = [];
    for (const r of sets) {
      const list = (r['t'] as unknown[]).map(String);
      expands.push(
        list.map((t) => {
          let code = codes.get(t);
          if (code === undefined) codes.set(t, (code = codes.size));
          return code;
        }),
      );
      hashes.push(BigInt(String(r['h'])));
    }
    out[tags] = codes.size > MAX_VALUES ? null : { values: [...codes.keys()], expands, hashes };
  }
  // A hash shared by two values, or by a value and NULL's stand-in 0, leaves the column out.
  return out.map((p) => (p === null || new Set(p.hashes).size < p.hashes.length || p.hashes.includes(0n) ? null : p));
}

/** Each row's code in one indexed column (-1: NULL, or no tags), from DuckDB's hash() of the values. */
async function rowCodes(conn: Connection, abs: string, column: ValueColumn, p: ColumnPlan, rows: number): Promise<Int32Array> {
  const c = column === 'tags' ? 'tag_set' : column;
  // The column name is one of ours; hash() of a NULL (or of no tags) becomes 0, no value's hash.
  const expr = raw(`CASE WHEN ${c} IS NULL${c === 'tag_set' ? " OR tag_set = ''" : ''} THEN 0::UBIGINT ELSE hash(${c}) END`);
  const codes = new Int32Array(rows);
  const look = new HashCodes(p.hashes);
  let row = 0;
  for await (const [chunk] of conn.fixedChunks(sql`SELECT ${expr} FROM read_parquet(${abs}, hive_partitioning = false)`)) {
    const n = chunk!.length / 8;
    if (row + n > rows) throw new Error(`value index: ${abs} has more than ${rows} rows`);
    const words = new Uint32Array(chunk!.buffer, chunk!.byteOffset, n * 2);
    for (let j = 0; j < n; j++) codes[row + j] = look.code(words[2 * j]!, words[2 * j + 1]!);
    row += n;
  }
  if (row !== rows) throw new Error(`value index: ${abs} has ${row} rows, not ${rows}`);
  return codes;
}

/** The directory, kept in parts until the postings are out. */
type Directory = Uint8Array[];

function u32(v: number): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, v, true);
  return b;
}

const utf8 = new TextEncoder();

/** Bytes of a value's postings as a bitmap (one bit a row, row r at bit r % 8 of byte r / 8). */
const bitmapBytes = (rows: number) => Math.ceil(rows / 8);

/**
 * Writes one column's postings (and their checksums) from each row's code (a tag set's code stands for
 * its tags) and its part of the directory.
 */
function writeColumn(out: FileSink, dir: Directory, p: ColumnPlan, codes: Int32Array): void {
  const n = p.values.length;
  // Counting sort of the rows by value: each value's rows come out in row order.
  const counts = new Uint32Array(n);
  const each = (f: (row: number, value: number) => void) => {
    for (let row = 0; row < codes.length; row++) {
      const c = codes[row]!;
      if (c < 0) continue;
      if (p.expands === null) f(row, c);
      else for (const v of p.expands[c]!) f(row, v);
    }
  };
  each((_, v) => counts[v]!++);
  const starts = new Uint32Array(n + 1);
  for (let v = 0; v < n; v++) starts[v + 1] = starts[v]! + counts[v]!;
  const rowsOf = new Uint32Array(starts[n]!);
  const at = starts.slice(0, n);
  each((row, v) => {
    rowsOf[at[v]!++] = row;
  });
  dir.push(u32(n));
  const bitmapLen = bitmapBytes(codes.length);
  for (let v = 0; v < n; v++) {
    let len = 0;
    let last = -1;
    for (let k = starts[v]!; k < starts[v + 1]!; k++) {
      len += varintSize(rowsOf[k]! - last - 1);
      last = rowsOf[k]!;
    }
    let post: Uint8Array;
    if (len >= bitmapLen) {
      // As long as a bitmap or longer: the bitmap (its length tells the reader which it is).
      len = bitmapLen;
      post = new Uint8Array(len);
      for (let k = starts[v]!; k < starts[v + 1]!; k++) post[rowsOf[k]! >>> 3]! |= 1 << (rowsOf[k]! & 7);
    } else {
      post = new Uint8Array(len);
      let o = 0;
      last = -1;
      for (let k = starts[v]!; k < starts[v + 1]!; k++) {
        let d = rowsOf[k]! - last - 1;
        last = rowsOf[k]!;
        while (d >= 0x80) {
          post[o++] = (d & 0x7f) | 0x80;
          d >>>= 7;
        }
        post[o++] = d;
      }
    }
    out.write(post);
    out.u32(crc32(post));
    const name = utf8.encode(p.values[v]!);
    dir.push(u32(name.length), name, u32(counts[v]!), u32(len));
  }
}

/**
 * Writes the value index of the segment at `abs` (`rows` rows, storing the columns of `metrics`, their
 * ids) and fsyncs it (the caller fsyncs the folder). Written aside and renamed: a reader never meets
 * half a file. One column at a time (its rows' codes are 4 bytes a row; a metric's rows with a value,
 * 16 bytes each).
 */
export async function writeValueIndex(conn: Connection, abs: string, rows: number, metrics: readonly number[]): Promise<void> {
  const cols = await plans(conn, abs);
  const tmp = `${valueIndexPath(abs)}.tmp-${process.pid}`;
  const out = new FileSink(tmp);
  try {
    const head = new Uint8Array(8);
    const view = new DataView(head.buffer);
    view.setUint32(0, MAGIC, true);
    view.setUint32(4, rows, true);
    out.write(head);
    const dir: Directory = [];
    for (const [i, p] of cols.entries()) {
      if (p === null) dir.push(u32(NOT_INDEXED));
      else writeColumn(out, dir, p, await rowCodes(conn, abs, VALUE_COLUMNS[i]!, p, rows));
    }
    const sections: Uint8Array[] = [];
    for (const id of await metricsWithinCap(conn, abs, metrics)) {
      const m = await buildMetricSection(conn, abs, rows, id);
      if (m === null) continue;
      out.write(m.bytes);
      out.u32(crc32(m.bytes));
      sections.push(u32(m.id), u32(m.distinct), u32(m.present));
    }
    dir.push(u32(sections.length / 3), ...sections);
    const directory = Buffer.concat(dir);
    out.write(directory);
    out.u32(directory.length);
    out.u32(crc32(directory, crc32(head)));
    out.u32(MAGIC);
    out.close();
    await fsyncPathAsync(tmp);
    renameSync(tmp, valueIndexPath(abs));
  } catch (err) {
    out.abandon();
    rmSync(tmp, { force: true });
    throw err;
  }
  forget(abs);
}

// ---------------------------------------------------------------- reading

/**
 * Loaded directories by segment path, least recently used first; segments never change, so neither do
 * these. Beyond the budget the oldest are let go (read again when asked). Where none was usable the
 * entry keeps the file's identity as found: a writer's repair may write one later (a read-only store
 * beside it then sees a new identity and reads it).
 */
const loaded = new Map<string, ValueIndex | { none: string }>();

/** Bytes of loaded directories kept at most (`budget`, settable for tests) and kept now (`bytes`). */
export const valueIndexCache = { budget: 16 << 20, bytes: 0 };

const sizeOf = (ix: ValueIndex | { none: string } | undefined): number => (ix !== undefined && 'bytes' in ix ? ix.bytes : 0);

/** The identity of a file as stat gives it ('' when it is missing). */
function identity(path: string): string {
  const st = statSync(path, { throwIfNoEntry: false });
  return st ? `${st.ino}:${st.size}:${st.mtimeMs}` : '';
}

function forget(abs: string): void {
  valueIndexCache.bytes -= sizeOf(loaded.get(abs));
  loaded.delete(abs);
}

/** The directory of the file at `path`, or null when it is not a whole index's. */
export function readValueDirectory(path: string): ValueIndex | null {
  return withFile(path, (fd, size) => {
    if (size < 20) return null;
    const tail = readAt(fd, 12, size - 12);
    const tv = new DataView(tail.buffer, tail.byteOffset, 12);
    const dirLen = tv.getUint32(0, true);
    if (tv.getUint32(8, true) !== MAGIC || dirLen > size - 20) return null;
    const head = readAt(fd, 8, 0);
    const dir = readAt(fd, dirLen, size - 12 - dirLen);
    if (crc32(dir, crc32(head)) !== tv.getUint32(4, true)) return null;
    const hv = new DataView(head.buffer, head.byteOffset, 8);
    if (hv.getUint32(0, true) !== MAGIC) return null;
    const view = new DataView(dir.buffer, dir.byteOffset, dir.byteLength);
    const text = new TextDecoder();
    const columns: (ValueColumnIndex | null)[] = [];
    let at = 0;
    let offset = 8;
    for (let c = 0; c < VALUE_COLUMNS.length; c++) {
      const n = view.getUint32(at, true);
      at += 4;
      if (n === NOT_INDEXED) {
        columns.push(null);
        continue;
      }
      const values: string[] = [];
      const counts = new Uint32Array(n);
      const offsets = new Float64Array(n);
      const lengths = new Uint32Array(n);
      for (let v = 0; v < n; v++) {
        const len = view.getUint32(at, true);
        values.push(text.decode(dir.subarray(at + 4, at + 4 + len)));
        at += 4 + len;
        counts[v] = view.getUint32(at, true);
        lengths[v] = view.getUint32(at + 4, true);
        at += 8;
        offsets[v] = offset;
        offset += lengths[v]! + 4;
      }
      columns.push({ values, counts, offsets, lengths });
    }
    const rows = hv.getUint32(4, true);
    const metrics = new Map<number, MetricSection>();
    const m = view.getUint32(at, true);
    at += 4;
    for (let i = 0; i < m; i++) {
      const [id, distinct, present] = [0, 4, 8].map((k) => view.getUint32(at + k, true)) as [number, number, number];
      at += 12;
      if (distinct > present || present > rows || metrics.has(id)) return null;
      const s = { id, distinct, present, offset };
      metrics.set(id, s);
      offset += sectionBytes(s) + 4;
    }
    if (at !== dirLen || offset !== size - 12 - dirLen) return null;
    return { path, rows, columns, metrics, bytes: dirLen + 64 * (VALUE_COLUMNS.length + m) };
  });
}

/** The value index of a segment of `rows` rows, or null when it has none usable (read the columns). */
export function valueIndexOf(abs: string, rows: number): ValueIndex | null {
  const path = valueIndexPath(abs);
  let ix = loaded.get(abs);
  if (ix !== undefined && 'none' in ix && ix.none !== identity(path)) {
    loaded.delete(abs);
    ix = undefined;
  }
  if (ix === undefined) {
    // The identity before the read: a file replaced after it is read again next time.
    const id = identity(path);
    let found: ValueIndex | null;
    try {
      found = readValueDirectory(path);
    } catch {
      found = null;
    }
    ix = found ?? { none: id };
    valueIndexCache.bytes += sizeOf(ix);
    for (const [old] of loaded) {
      if (valueIndexCache.bytes <= valueIndexCache.budget) break;
      forget(old);
    }
  } else loaded.delete(abs);
  loaded.set(abs, ix);
  return 'bytes' in ix && ix.rows === rows ? ix : null;
}

/**
 * Sets the bits of the rows of every value `which` takes in `bits` (one bit a row), reading their
 * postings from the file (opened once); false when any cannot be read whole (the caller reads the
 * segment instead).
 */
export function markValueRows(ix: ValueIndex, col: ValueColumnIndex, which: (value: string) => boolean, bits: Uint32Array): boolean {
  return (
    withFile(ix.path, (fd) => {
      for (let v = 0; v < col.values.length; v++) {
        if (!which(col.values[v]!)) continue;
        const b = indexReads.get(col.lengths[v]! + 4);
        if (readFully(fd, b, col.offsets[v]!) !== b.length || !markOne(b, col.lengths[v]!, ix.rows, bits)) return false;
      }
      return true;
    }) === true
  );
}

/** Where a bitmap read into indexReads is copied to be read as words (decoded at once, never kept). */
const wordsBuffer = new ScratchBuffer(8 << 20);

/** Decodes one value's postings (`end` bytes, then their CRC-32) into `bits`; false when damaged. */
function markOne(b: Uint8Array, end: number, rows: number, bits: Uint32Array): boolean {
  if (b.length !== end + 4 || crc32(b.subarray(0, end)) !== new DataView(b.buffer, b.byteOffset + end, 4).getUint32(0, true)) return false;
  if (end === bitmapBytes(rows)) return markBitmap(b.subarray(0, end), rows, bits);
  let row = -1;
  let at = 0;
  while (at < end) {
    let x = b[at++]!;
    // Most gaps take one byte: that case first (a question's first decode runs before V8 optimises it).
    if (x >= 0x80) {
      let d = x & 0x7f;
      let scale = 0x80;
      do {
        x = b[at++]!;
        d += (x & 0x7f) * scale;
        scale *= 0x80;
      } while (x >= 0x80);
      x = d;
    }
    row += x + 1;
    if (row >= rows) return false;
    bits[row >>> 5]! |= 1 << (row & 31);
  }
  return true;
}

/** ORs a bitmap's rows into `bits` a word at a time; false when it sets a bit past the last row. */
function markBitmap(b: Uint8Array, rows: number, bits: Uint32Array): boolean {
  const whole = b.length >>> 2;
  // An aligned copy read as words (on a big-endian machine, assembled byte by byte); zeroed, so the
  // last word's bytes past the bitmap are 0.
  const words = wordsBuffer.words(whole + 1);
  if (LITTLE_ENDIAN) new Uint8Array(words.buffer).set(b);
  else for (let i = 0; i < b.length; i++) words[i >>> 2]! |= b[i]! << ((i & 3) * 8);
  for (let w = 0; w <= whole && w < bits.length; w++) bits[w]! |= words[w]!;
  if (rows % 32 !== 0 && words[rows >>> 5]! >>> (rows % 32) !== 0) return false;
  for (let w = Math.ceil(rows / 32); w <= whole; w++) if (words[w] !== 0) return false;
  return true;
}

/**
 * Sets in `bits` the rows holding a value of the metric section `s` within `range`; false when the
 * section cannot be read whole (the caller reads the segment instead).
 */
export function markMetricValueRows(ix: ValueIndex, s: MetricSection, range: MetricRange, bits: Uint32Array): boolean {
  return withFile(ix.path, (fd) => markMetricRows(fd, ix.rows, s, range, bits)) === true;
}

/** Builds a listed segment's value index when it has none usable; returns the bytes written (0 when it had one). */
export async function ensureValueIndex(conn: Connection, abs: string, rows: number, metrics: readonly number[]): Promise<number> {
  if (valueIndexOf(abs, rows) !== null) return 0;
  await writeValueIndex(conn, abs, rows, metrics);
  return statSync(valueIndexPath(abs)).size;
}

export function removeValueIndex(abs: string): void {
  forget(abs);
  rmSync(valueIndexPath(abs), { force: true });
}
