// The metric sections of a segment's value index (the file and its framing: value-index.ts). For each
// metric the segment stores as a column of its own (`m<id>`) with at most `maxDistinct` distinct values:
// those values in ascending order, and the rows holding each of them, grouped by value (each group in
// row order). A count testing the metric against a number (eq, ne, gt, gte, lt, lte, between) is a run
// of values, found by binary search, so its rows are one contiguous slice: no segment read, and work in
// proportion to the rows matched. Scores and token counts take few distinct values; a metric with more
// (or holding a NaN, which DuckDB orders above every number) is left out of the file, and its tests
// read the segment.
//
// Section layout (little-endian; storage-format.md): the distinct values (doubles), where each value's
// rows start in the row list (distinct + 1 u32s, the last the number of rows with a value), the row
// list (u32 file row numbers); the file follows each section with its CRC-32.
import type { Connection } from '../../db/database.js';
import { crc32 } from '../crc32.js';
import { indexReads, LITTLE_ENDIAN, readFully } from '../fs-util.js';
import { lowerBound, upperBound } from '../memtable/seq-lists.js';
import { ident, joinSql, sql } from '../../query/sql.js';

/** Distinct values above which a metric is left out of a segment's file (settable for tests). */
export const metricCodeLimits = { maxDistinct: 65_535 };

/** One metric's section as the directory describes it. */
export interface MetricSection {
  readonly id: number;
  readonly distinct: number;
  /** Rows holding a value. */
  readonly present: number;
  /** File offset of the section (its CRC-32 follows it). */
  readonly offset: number;
}

/** A section's byte length. */
export function sectionBytes(s: Pick<MetricSection, 'distinct' | 'present'>): number {
  return 8 * s.distinct + 4 * (s.distinct + 1) + 4 * s.present;
}

/** The values a test admits: an interval, each end closed or open (-Infinity / Infinity: none). */
export interface MetricRange {
  readonly lo: number;
  readonly loOpen: boolean;
  readonly hi: number;
  readonly hiOpen: boolean;
}

/**
 * Of these metric ids (columns of the segment at `abs`), those whose distinct values may be within the
 * cap: one scan estimates them all (HyperLogLog, a few percent off), so a column of many values (a
 * duration per span) is not read whole and sorted only to be left out.
 */
export async function metricsWithinCap(conn: Connection, abs: string, ids: readonly number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  // Only columns the file has (an id listed without its column would fail the whole index's build).
  const names = new Set((await conn.all(sql`SELECT name FROM parquet_schema(${abs})`)).map((r) => String(r['name'])));
  const present = ids.filter((id) => names.has(`m${id}`));
  if (present.length === 0) return [];
  // Column names are m<id> of our own ids.
  const [est] = await conn.all(
    sql`SELECT ${joinSql(present.map((id) => sql`approx_count_distinct(${ident(`m${id}`)}) AS ${ident(`m${id}`)}`))}
        FROM read_parquet(${abs}, hive_partitioning = false)`,
  );
  return present.filter((id) => Number(est![`m${id}`]) <= metricCodeLimits.maxDistinct * 1.5);
}

/** A built section: its directory entry's numbers and its bytes. */
export interface BuiltSection {
  readonly id: number;
  readonly distinct: number;
  readonly present: number;
  readonly bytes: Uint8Array;
}

/**
 * The section of metric `id` of the segment at `abs` (`rows` rows), or null when the metric is left
 * out (too many distinct values, or a NaN). Reads the column's rows with a value and their places.
 */
export async function buildMetricSection(conn: Connection, abs: string, rows: number, id: number): Promise<BuiltSection | null> {
  const col = ident(`m${id}`);
  const places: Float64Array[] = [];
  const values: Float64Array[] = [];
  for await (const [r, v] of conn.fixedChunks(
    sql`SELECT file_row_number::DOUBLE AS r, ${col} AS v FROM read_parquet(${abs}, hive_partitioning = false, file_row_number = true)
        WHERE ${col} IS NOT NULL`,
  )) {
    places.push(new Float64Array(r!.buffer, r!.byteOffset, r!.length / 8));
    values.push(new Float64Array(v!.buffer, v!.byteOffset, v!.length / 8));
  }
  const present = places.reduce((n, p) => n + p.length, 0);
  const at = new Float64Array(present);
  const vals = new Float64Array(present);
  let k = 0;
  for (const [i, p] of places.entries()) {
    at.set(p, k);
    vals.set(values[i]!, k);
    k += p.length;
  }
  const dict = Float64Array.from(vals).sort();
  // -0 and 0 compare equal: one value.
  let distinct = 0;
  for (let i = 0; i < present; i++) {
    const x = dict[i]!;
    if (Number.isNaN(x)) return null;
    if (distinct === 0 || dict[distinct - 1] !== x) dict[distinct++] = x;
    if (distinct > metricCodeLimits.maxDistinct) return null;
  }
  // Counting sort of the rows by value; within a value, row order (checked, not assumed from the scan).
  const sorted = dict.subarray(0, distinct);
  const codes = new Uint32Array(present);
  const starts = new Uint32Array(distinct + 1);
  for (let i = 0; i < present; i++) {
    if (at[i]! >= rows || (i > 0 && at[i]! <= at[i - 1]!)) throw new Error(`value index: ${abs} row ${at[i]} out of place`);
    codes[i] = lowerBound(sorted, vals[i]!);
    starts[codes[i]! + 1]!++;
  }
  for (let c = 0; c < distinct; c++) starts[c + 1]! += starts[c]!;
  const list = new Uint32Array(present);
  const next = starts.slice(0, distinct);
  for (let i = 0; i < present; i++) list[next[codes[i]!]!++] = at[i]!;
  const bytes = new Uint8Array(sectionBytes({ distinct, present }));
  if (LITTLE_ENDIAN) {
    // The parts lie aligned in a fresh buffer: copied whole.
    new Float64Array(bytes.buffer, 0, distinct).set(sorted);
    new Uint32Array(bytes.buffer, 8 * distinct, distinct + 1).set(starts);
    new Uint32Array(bytes.buffer, 12 * distinct + 4, present).set(list);
  } else {
    const view = new DataView(bytes.buffer);
    let o = 0;
    for (let c = 0; c < distinct; c++, o += 8) view.setFloat64(o, dict[c]!, true);
    for (let c = 0; c <= distinct; c++, o += 4) view.setUint32(o, starts[c]!, true);
    for (let i = 0; i < present; i++, o += 4) view.setUint32(o, list[i]!, true);
  }
  return { id, distinct, present, bytes };
}

/**
 * Sets in `bits` (one bit a row) the rows whose value lies in `range`, reading the section from the
 * open file `fd`; false when it cannot be read whole or does not hold together (the caller reads the
 * segment). Read once into a buffer from its start, whose parts are then aligned typed arrays (no copy).
 */
export function markMetricRows(fd: number, rows: number, s: MetricSection, range: MetricRange, bits: Uint32Array): boolean {
  const len = sectionBytes(s);
  const bytes = indexReads.get(len + 4);
  if (readFully(fd, bytes, s.offset) !== bytes.length) return false;
  const view = new DataView(bytes.buffer);
  if (crc32(bytes.subarray(0, len)) !== view.getUint32(len, true)) return false;
  const d = s.distinct;
  const u32s = (at: number, n: number) =>
    LITTLE_ENDIAN ? new Uint32Array(bytes.buffer, at, n) : Uint32Array.from({ length: n }, (_, i) => view.getUint32(at + 4 * i, true));
  const dict = LITTLE_ENDIAN
    ? new Float64Array(bytes.buffer, 0, d)
    : Float64Array.from({ length: d }, (_, i) => view.getFloat64(8 * i, true));
  const starts = u32s(8 * d, d + 1);
  const list = u32s(12 * d + 4, s.present);
  if (starts[0] !== 0 || starts[d] !== s.present) return false;
  const from = range.loOpen ? upperBound(dict, range.lo) : lowerBound(dict, range.lo);
  const to = range.hiOpen ? lowerBound(dict, range.hi) : upperBound(dict, range.hi);
  if (from >= to) return true;
  const a = starts[from]!;
  const b = starts[to]!;
  if (a > b || b > s.present) return false;
  for (let i = a; i < b; i++) {
    const r = list[i]!;
    if (r >= rows) return false;
    bits[r >>> 5]! |= 1 << (r & 31);
  }
  return true;
}
