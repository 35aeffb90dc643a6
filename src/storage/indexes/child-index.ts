// The child index of a segment (`seg-N.kids`, a small Parquet file beside it): one row per row of the
// segment, in the same order, with DuckDB's 64-bit hash() of its parent_id (null without a parent), of
// its id when its stored has_children is true (else null), and its seq. A delete asks which parents it
// leaves without children (query/exec/record-delete.ts); over these hashes that reads 16 bytes of
// numbers per row instead of the parent_id and id strings of every span, which at scale cost seconds of
// CPU. A hash match stands for an equal string: hash() has 64 bits, so a wrong match needs a collision
// among the parents asked about, ~1e-7 at 10M spans and 100k parents.
//
// hash() is DuckDB's own and may change between its versions: the file records hash() of a probe
// string, and a file whose probe differs from this DuckDB's is stale (rebuilt on open, like a
// missing or damaged one). Written and fsynced with its segment, before any manifest lists it.
// Uncompressed: hashes barely compress beyond Parquet's dictionary pages, and a delete reads them
// more than twice as fast so, for a larger file (18 bytes per row on disk instead of 7).
import { closeSync, existsSync, openSync, readSync, renameSync, rmSync, writeSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Connection } from '../../db/database.js';
import { stringLiteral } from '../../db/sql-string.js';
import { sql } from '../../query/sql.js';
import { fsyncPathAsync, withFile } from '../fs-util.js';

const PROBE = 'tracelake child index v1';

export function childIndexPath(parquetPath: string): string {
  return parquetPath.replace(/\.parquet$/, '.kids');
}

/**
 * The child index's rows in row order as plain numbers (`seg-N.kidrows`): a 32-byte header (magic,
 * rows, this DuckDB's hash probe, whether seq ascends with the row number), then per row the parent
 * hash (u64, 0 for none) and the seq (f64), the row numbers in seq order when seqs do not ascend
 * (u32), and a bit a row for the stored has_children (u32 words, bit r%32 of word r/32). A delete
 * reads it and finds a match's row and its neighbours by position (query/exec/leaf-settle.ts), where
 * DuckDB can only join on every row; the bits tell it whether matches found in a value index are
 * leaves (query/exec/delete-hits.ts) without reading the segment.
 */
export function childRowsPath(parquetPath: string): string {
  return parquetPath.replace(/\.parquet$/, '.kidrows');
}

// TLKROWS1 had no has_children bits: such a file is stale and rebuilt after open (ensureChildIndex).
const ROWS_MAGIC = 'TLKROWS2';
export const ROWS_HEADER = 32;

/** Probes asked already: one DuckDB binary answers the same, so an open checking every segment asks once. */
let probed: Promise<string> | undefined;

/** This DuckDB's hash() of the probe string, as text (a UBIGINT does not fit a JS number). */
function probe(conn: Connection): Promise<string> {
  probed ??= conn.all(sql`SELECT hash(${PROBE}::VARCHAR)::VARCHAR AS h`).then((rows) => String(rows[0]!['h']));
  // A failed ask is not kept: the next one tries again.
  probed.catch(() => (probed = undefined));
  return probed;
}

/** Writes the index of the segment at `abs` to `target` and fsyncs it (the caller fsyncs the folder). */
async function build(conn: Connection, abs: string, target: string): Promise<void> {
  const p = await probe(conn);
  // The probe is a decimal string of our own making: safe in SQL text (COPY options take no parameters).
  if (!/^\d+$/.test(p)) throw new Error(`unexpected hash probe ${p}`);
  await conn.run(
    sql`COPY (SELECT hash(parent_id) AS ph, CASE WHEN has_children THEN hash(id) END AS ih, seq FROM read_parquet(${abs}, hive_partitioning = false))
     TO ${stringLiteral(target)} (FORMAT parquet, COMPRESSION uncompressed, ROW_GROUP_SIZE 131072, KV_METADATA {tracelake_hash_probe: ${stringLiteral(p)}})`,
  );
  await fsyncPathAsync(target);
}

/** Writes the row file of the child index `kids` to `target` and fsyncs it (the caller fsyncs the folder). */
async function buildRows(conn: Connection, kids: string, target: string): Promise<void> {
  const p = await probe(conn);
  const fd = openSync(target, 'w');
  try {
    let rows = 0;
    let last = -Infinity;
    let ascending = true;
    // Rows gathered into blocks of BLOCK rows (one write each), 32-bit words copied.
    const BLOCK = 65536;
    const out = new Uint32Array(4 * BLOCK);
    let held = 0;
    // The has_children bits, written after the rows (and the order section).
    let flags = new Uint32Array(BLOCK);
    const flush = () => {
      writeSync(fd, new Uint8Array(out.buffer, 0, 16 * held), 0, 16 * held, ROWS_HEADER + 16 * (rows - held));
      held = 0;
    };
    for await (const [ph, seq, hc] of conn.fixedChunks(
      sql`SELECT coalesce(ph, 0::UBIGINT) AS ph, seq::DOUBLE AS seq, (ih IS NOT NULL)::DOUBLE AS hc FROM read_parquet(${kids}, hive_partitioning = false)`,
    )) {
      const n = ph!.length / 8;
      const hw = new Uint32Array(ph!.buffer, ph!.byteOffset, 2 * n);
      const sw = new Uint32Array(seq!.buffer, seq!.byteOffset, 2 * n);
      const seqs = new Float64Array(seq!.buffer, seq!.byteOffset, n);
      const parents = new Float64Array(hc!.buffer, hc!.byteOffset, n);
      if (flags.length * 32 < rows + n) {
        const grown = new Uint32Array(Math.max(2 * flags.length, Math.ceil((rows + n) / 32)));
        grown.set(flags);
        flags = grown;
      }
      for (let i = 0; i < n; i++) {
        if (parents[i] !== 0) flags[rows >>> 5]! |= 1 << (rows & 31);
        if (held === BLOCK) flush();
        const o = 4 * held;
        out[o] = hw[2 * i]!;
        out[o + 1] = hw[2 * i + 1]!;
        out[o + 2] = sw[2 * i]!;
        out[o + 3] = sw[2 * i + 1]!;
        held++;
        rows++;
        if (seqs[i]! <= last) ascending = false;
        last = seqs[i]!;
      }
    }
    if (held > 0) flush();
    // Seqs out of row order (a seal sorts by created_at): the row numbers in seq order follow (u32), so
    // a reader finds a seq by binary search all the same.
    if (!ascending) {
      let k = 0;
      for await (const [rn] of conn.fixedChunks(
        sql`SELECT file_row_number::DOUBLE AS rn FROM read_parquet(${kids}, hive_partitioning = false, file_row_number = true) ORDER BY seq`,
      )) {
        const order = Uint32Array.from(new Float64Array(rn!.buffer, rn!.byteOffset, rn!.length / 8));
        writeSync(fd, new Uint8Array(order.buffer), 0, order.byteLength, ROWS_HEADER + 16 * rows + 4 * k);
        k += order.length;
      }
    }
    const words = flagWords(rows);
    writeSync(fd, new Uint8Array(flags.buffer, 0, 4 * words), 0, 4 * words, childRowsFlagsAt(rows, ascending));
    const header = Buffer.alloc(ROWS_HEADER);
    header.write(ROWS_MAGIC, 0, 'latin1');
    header.writeDoubleLE(rows, 8);
    header.writeBigUInt64LE(BigInt(p), 16);
    header.writeUInt8(ascending ? 1 : 0, 24);
    writeSync(fd, header, 0, ROWS_HEADER, 0);
  } finally {
    closeSync(fd);
  }
  await fsyncPathAsync(target);
}

/** Where a row file's has_children bits begin: after the header, the rows, and the row numbers in seq order unless seqs ascend. */
export function childRowsFlagsAt(rows: number, ascending: boolean): number {
  return ROWS_HEADER + 16 * rows + (ascending ? 0 : 4 * rows);
}

const flagWords = (rows: number) => Math.ceil(rows / 32);

/** The bytes of a row file of `rows` rows. */
export function childRowsSize(rows: number, ascending: boolean): number {
  return childRowsFlagsAt(rows, ascending) + 4 * flagWords(rows);
}

/** A row file's header, when the file is whole, of `rows` rows and hashed by this DuckDB; else null. */
export async function childRowsHeader(conn: Connection, path: string, rows: number): Promise<{ ascending: boolean } | null> {
  const header = withFile(path, (fd, size) => {
    const h = Buffer.alloc(ROWS_HEADER);
    if (readSync(fd, h, 0, ROWS_HEADER, 0) !== ROWS_HEADER || h.toString('latin1', 0, 8) !== ROWS_MAGIC) return null;
    const ascending = h.readUInt8(24) === 1;
    // Whole: every section is there (written before the header).
    if (h.readDoubleLE(8) !== rows || size !== childRowsSize(rows, ascending)) return null;
    return { hash: h.readBigUInt64LE(16), ascending };
  });
  if (header === null || header.hash !== BigInt(await probe(conn))) return null;
  return { ascending: header.ascending };
}

/** Writes a new segment's child index and its row file, fsynced (the caller fsyncs the folder before the manifest lists the segment). */
export async function writeChildIndex(conn: Connection, abs: string): Promise<void> {
  await build(conn, abs, childIndexPath(abs));
  await buildRows(conn, childIndexPath(abs), childRowsPath(abs));
}

/** What an index must agree with: its segment's manifest entry. */
export interface IndexedRows {
  readonly rows: number;
  readonly min_seq: number;
  readonly max_seq: number;
}

/** Whether the index beside `abs` is whole, of its segment's rows (count and seq range), and hashed by this DuckDB. */
export async function childIndexUsable(conn: Connection, abs: string, seg: IndexedRows): Promise<boolean> {
  const path = childIndexPath(abs);
  if (!existsSync(path)) return false;
  try {
    const [meta] = await conn.all(
      sql`SELECT sum(row_group_num_rows) AS n, min(stats_min::BIGINT) AS lo, max(stats_max::BIGINT) AS hi
          FROM parquet_metadata(${path}) WHERE path_in_schema = 'seq'`,
    );
    if (Number(meta?.['n']) !== seg.rows || Number(meta?.['lo']) !== seg.min_seq || Number(meta?.['hi']) !== seg.max_seq) return false;
    const kv = await conn.all(sql`SELECT decode(value) AS v FROM parquet_kv_metadata(${path}) WHERE decode(key) = 'tracelake_hash_probe'`);
    return kv.length === 1 && String(kv[0]!['v']) === (await probe(conn));
  } catch {
    return false; // damaged: DuckDB cannot read its footer
  }
}

/** Whether a listed segment's index and its row file are both usable (childIndexUsable, childRowsHeader). */
export async function childIndexSound(conn: Connection, abs: string, seg: IndexedRows): Promise<boolean> {
  return (await childIndexUsable(conn, abs, seg)) && (await childRowsHeader(conn, childRowsPath(abs), seg.rows)) !== null;
}

/**
 * Checks a listed segment's index and its row file after open; rebuilds them when missing, damaged or
 * stale (a store of an earlier version gets its row files so). Returns the bytes it wrote (0: both were sound).
 */
export async function ensureChildIndex(conn: Connection, abs: string, seg: IndexedRows): Promise<number> {
  const kids = !(await childIndexUsable(conn, abs, seg));
  let bytes = 0;
  // Built aside and renamed: a crash leaves the old file (rebuilt on the next open) or the new one.
  if (kids) bytes += await aside(childIndexPath(abs), (tmp) => build(conn, abs, tmp));
  const rows = kids || (await childRowsHeader(conn, childRowsPath(abs), seg.rows)) === null;
  if (rows) bytes += await aside(childRowsPath(abs), (tmp) => buildRows(conn, childIndexPath(abs), tmp));
  if (kids || rows) await fsyncPathAsync(dirname(abs), 'r');
  return bytes;
}

/** Writes a file aside, then renames it over `path`; returns its bytes. */
async function aside(path: string, write: (tmp: string) => Promise<void>): Promise<number> {
  const tmp = `${path}.tmp-${process.pid}`;
  try {
    await write(tmp);
    const bytes = statSync(tmp).size;
    renameSync(tmp, path);
    return bytes;
  } finally {
    rmSync(tmp, { force: true });
  }
}

export function removeChildIndex(abs: string): void {
  rmSync(childIndexPath(abs), { force: true });
  rmSync(childRowsPath(abs), { force: true });
}
