// The value index of a segment (`seg-N.vix`): for each of a few low-cardinality columns (type, name,
// model, tags), every value it holds with the rows (file row numbers) holding it. A count whose
// filter tests those columns for equality, membership or a substring of the values finds its
// candidate rows here and reads only the other columns' tests, at those rows (query/exec/value-rows.ts);
// a filter of such tests alone is answered without reading the segment. ~1.3 bytes a row on disk.
//
// Exact, not a sketch: postings hold every row of every value, NULLs in none. A column with more than
// MAX_VALUES distinct values in a segment (tags: distinct tag sets) is left out of that segment's file
// (its tests read the column as before). Built with the segment, from the written file: DuckDB gives
// each column's distinct values with their hash() and each row's hash(), matched here, so no string
// crosses into JavaScript per row (hash() is used only while building; the file holds the strings).
//
// Layout (little-endian): magic, rows, then per column of VALUE_COLUMNS the number of values
// (NOT_INDEXED when left out) and per value its UTF-8 length and bytes, its row count, the byte
// length of its postings and the postings (the first row, then gaps, as varints); then a CRC-32 of
// all before it. Each load checks the checksum and the rows: a damaged or stale file is not used.
import { readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import type { Connection } from '../../db/database.js';
import { crc32 } from '../crc32.js';
import { fsyncPathAsync } from '../fs-util.js';
import { FileSink, varintSize } from './file-sink.js';
import { int, ident, joinSql, param, raw, sql } from '../../query/sql.js';

export const VALUE_COLUMNS = ['type', 'name', 'model', 'tags'] as const;
export type ValueColumn = (typeof VALUE_COLUMNS)[number];

const MAGIC = 0x31584956; // "VIX1"
const NOT_INDEXED = 0xffffffff;
/** Segments with fewer rows get no value index by default (RecordStoreOptions.valueIndexMinRows). */
export const VALUE_INDEX_MIN_ROWS = 65_536;
/** Distinct values (tag sets for tags) above which a column is left out of a segment's file. */
export const MAX_VALUES = 4096;

export function valueIndexPath(parquetPath: string): string {
  return parquetPath.replace(/\.parquet$/, '.vix');
}

/** One column of a loaded index: each value's row count and where its postings lie in the file. */
export interface ValueColumnIndex {
  readonly values: readonly string[];
  readonly counts: Uint32Array;
  readonly starts: Uint32Array;
  readonly ends: Uint32Array;
  readonly bytes: Uint8Array;
}

export interface ValueIndex {
  readonly rows: number;
  /** By VALUE_COLUMNS' order; null for a column the file leaves out. */
  readonly columns: readonly (ValueColumnIndex | null)[];
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
  // Column names come from VALUE_COLUMNS (ours); the numbers are their positions.
  const distinct = joinSql(
    VALUE_COLUMNS.map((c, i) =>
      c === 'tags' ? null : sql`SELECT DISTINCT ${int(i)} AS c, ${ident(c)} AS v FROM ${src} WHERE ${ident(c)} IS NOT NULL`,
    ).filter((q) => q !== null),
    ' UNION ALL ',
  );
  const rows = await conn.all(
    sql`WITH e AS (SELECT c, v, hash(v)::VARCHAR AS h, count(*) OVER (PARTITION BY c) AS k,
                          row_number() OVER (PARTITION BY c ORDER BY v) AS i FROM (${distinct}))
      SELECT c, k, CASE WHEN k <= ${int(MAX_VALUES)} THEN v END AS v, h FROM e WHERE k <= ${int(MAX_VALUES)} OR i = 1 ORDER BY c, i`,
  );
  const out: (ColumnPlan | null)[] = VALUE_COLUMNS.map(() => ({ values: [], expands: null, hashes: [] }));
  for (const r of rows) {
    const c = Number(r['c']);
    if (Number(r['k']) > MAX_VALUES) out[c] = null;
    else {
      out[c]!.values.push(String(r['v']));
      out[c]!.hashes.push(BigInt(String(r['h'])));
    }
  }
  const sets = await conn.all(
    sql`SELECT hash(tag_set)::VARCHAR AS h, any_value(list_distinct(tags)) AS t FROM ${src}
        WHERE tag_set <> '' GROUP BY tag_set LIMIT ${int(MAX_VALUES + 1)}`,
  );
  const tags = VALUE_COLUMNS.indexOf('tags');
  if (sets.length > MAX_VALUES) out[tags] = null;
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

/**
 * Writes the value index of the segment at `abs` (`rows` rows) and fsyncs it (the caller fsyncs the
 * folder). Written aside and renamed: a reader never meets half a file.
 */
export async function writeValueIndex(conn: Connection, abs: string, rows: number): Promise<void> {
  const cols = await plans(conn, abs);
  const hashed = VALUE_COLUMNS.map((c, i) => (cols[i] === null ? null : c === 'tags' ? 'tag_set' : c));
  // Each row's hash() per indexed column (0 for NULL or no tags), in row order.
  const exprs = hashed
    .filter((c) => c !== null)
    .map((c) => raw(`CASE WHEN ${c} IS NULL${c === 'tag_set' ? " OR tag_set = ''" : ''} THEN 0::UBIGINT ELSE hash(${c}) END`));
  const codes = hashed.map(() => new Int32Array(rows).fill(-1));
  const lookups = cols.map((p) => (p === null ? null : new HashCodes(p.hashes)));
  const live = hashed.flatMap((c, i) => (c === null ? [] : [i]));
  if (live.length > 0) {
    let row = 0;
    for await (const chunk of conn.fixedChunks(sql`SELECT ${joinSql(exprs)} FROM read_parquet(${abs}, hive_partitioning = false)`)) {
      const n = chunk[0]!.length / 8;
      if (row + n > rows) throw new Error(`value index: ${abs} has more than ${rows} rows`);
      live.forEach((col, k) => {
        const words = new Uint32Array(chunk[k]!.buffer, chunk[k]!.byteOffset, n * 2);
        const look = lookups[col]!;
        const out = codes[col]!;
        for (let j = 0; j < n; j++) out[row + j] = look.code(words[2 * j]!, words[2 * j + 1]!);
      });
      row += n;
    }
    if (row !== rows) throw new Error(`value index: ${abs} has ${row} rows, not ${rows}`);
  }
  const tmp = `${valueIndexPath(abs)}.tmp-${process.pid}`;
  const out = new FileSink(tmp);
  try {
    out.u32(MAGIC);
    out.u32(rows);
    for (const [i, p] of cols.entries()) writeColumn(out, p, codes[i]!);
    out.finishWithCrc();
    await fsyncPathAsync(tmp);
    renameSync(tmp, valueIndexPath(abs));
  } catch (err) {
    out.abandon();
    rmSync(tmp, { force: true });
    throw err;
  }
  forget(abs);
}

const utf8 = new TextEncoder();

/** One column's values and postings, from each row's code (a tag set's code stands for its tags). */
function writeColumn(out: FileSink, p: ColumnPlan | null, codes: Int32Array): void {
  if (p === null) {
    out.u32(NOT_INDEXED);
    return;
  }
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
  out.u32(n);
  for (let v = 0; v < n; v++) {
    const bytes = utf8.encode(p.values[v]!);
    out.u32(bytes.length);
    out.write(bytes);
    out.u32(counts[v]!);
    let len = 0;
    let last = -1;
    for (let k = starts[v]!; k < starts[v + 1]!; k++) {
      len += varintSize(rowsOf[k]! - last - 1);
      last = rowsOf[k]!;
    }
    out.u32(len);
    last = -1;
    for (let k = starts[v]!; k < starts[v + 1]!; k++) {
      out.varint(rowsOf[k]! - last - 1);
      last = rowsOf[k]!;
    }
  }
}

// ---------------------------------------------------------------- reading

/**
 * Loaded indexes by segment path (null: none usable), least recently used first; segments never change,
 * so neither do these. Files beyond the budget are let go (read again when asked): at 100M spans the
 * files hold ~300 MB, which a process should not keep for its life.
 */
const loaded = new Map<string, ValueIndex | null>();

/** Bytes of loaded files kept at most (`budget`, settable for tests) and kept now (`bytes`). */
export const valueIndexCache = { budget: 64 << 20, bytes: 0 };

const sizeOf = (ix: ValueIndex | null | undefined): number => (ix ? (ix.columns.find((c) => c !== null)?.bytes.length ?? 0) : 0);

function forget(abs: string): void {
  valueIndexCache.bytes -= sizeOf(loaded.get(abs));
  loaded.delete(abs);
}

/** Parses a file's bytes, or null when they are not a whole index. */
export function parseValueIndex(buf: Uint8Array): ValueIndex | null {
  if (buf.length < 12) return null;
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  if (view.getUint32(buf.length - 4, true) !== crc32(buf.subarray(0, buf.length - 4))) return null;
  if (view.getUint32(0, true) !== MAGIC) return null;
  const rows = view.getUint32(4, true);
  let at = 8;
  const text = new TextDecoder();
  const columns: (ValueColumnIndex | null)[] = [];
  for (let c = 0; c < VALUE_COLUMNS.length; c++) {
    const n = view.getUint32(at, true);
    at += 4;
    if (n === NOT_INDEXED) {
      columns.push(null);
      continue;
    }
    const values: string[] = [];
    const counts = new Uint32Array(n);
    const starts = new Uint32Array(n);
    const ends = new Uint32Array(n);
    for (let v = 0; v < n; v++) {
      const len = view.getUint32(at, true);
      values.push(text.decode(buf.subarray(at + 4, at + 4 + len)));
      at += 4 + len;
      counts[v] = view.getUint32(at, true);
      const bytes = view.getUint32(at + 4, true);
      starts[v] = at + 8;
      ends[v] = at + 8 + bytes;
      at = ends[v]!;
    }
    columns.push({ values, counts, starts, ends, bytes: buf });
  }
  return at === buf.length - 4 ? { rows, columns } : null;
}

/** The value index of a segment of `rows` rows, or null when it has none usable (read the columns). */
export function valueIndexOf(abs: string, rows: number): ValueIndex | null {
  let ix = loaded.get(abs);
  if (ix === undefined) {
    try {
      ix = parseValueIndex(readFileSync(valueIndexPath(abs)));
    } catch {
      ix = null;
    }
    valueIndexCache.bytes += sizeOf(ix);
    for (const [old] of loaded) {
      if (valueIndexCache.bytes <= valueIndexCache.budget) break;
      forget(old);
    }
  } else loaded.delete(abs);
  loaded.set(abs, ix);
  return ix !== null && ix.rows === rows ? ix : null;
}

/** Sets the bits of value `v`'s rows in `bits` (one bit a row). */
export function markValueRows(col: ValueColumnIndex, v: number, bits: Uint32Array): void {
  const b = col.bytes;
  let row = -1;
  let at = col.starts[v]!;
  const end = col.ends[v]!;
  while (at < end) {
    let d = 0;
    let shift = 0;
    let x: number;
    do {
      x = b[at++]!;
      d += (x & 0x7f) * 2 ** shift;
      shift += 7;
    } while (x >= 0x80);
    row += d + 1;
    bits[row >>> 5]! |= 1 << (row & 31);
  }
}

/** Builds a listed segment's value index when it has none usable; returns the bytes written (0 when it had one). */
export async function ensureValueIndex(conn: Connection, abs: string, rows: number): Promise<number> {
  if (valueIndexOf(abs, rows) !== null) return 0;
  await writeValueIndex(conn, abs, rows);
  return statSync(valueIndexPath(abs)).size;
}

export function removeValueIndex(abs: string): void {
  forget(abs);
  rmSync(valueIndexPath(abs), { force: true });
}
