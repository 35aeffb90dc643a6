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
import { existsSync, renameSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Connection } from '../../db/database.js';
import { stringLiteral } from '../../db/sql-string.js';
import { sql } from '../../query/sql.js';
import { fsyncPathAsync } from '../fs-util.js';

const PROBE = 'tracelake child index v1';

export function childIndexPath(parquetPath: string): string {
  return parquetPath.replace(/\.parquet$/, '.kids');
}

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

/** Writes a new segment's child index and fsyncs it (the caller fsyncs the folder before the manifest lists the segment). */
export async function writeChildIndex(conn: Connection, abs: string): Promise<void> {
  await build(conn, abs, childIndexPath(abs));
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

/** Checks a listed segment's index on open; rebuilds it when missing, damaged or stale. Returns whether it did. */
export async function ensureChildIndex(conn: Connection, abs: string, seg: IndexedRows): Promise<boolean> {
  if (await childIndexUsable(conn, abs, seg)) return false;
  // Built aside and renamed: a crash leaves the old file (rebuilt on the next open) or the new one.
  const tmp = `${childIndexPath(abs)}.tmp-${process.pid}`;
  try {
    await build(conn, abs, tmp);
    renameSync(tmp, childIndexPath(abs));
  } finally {
    rmSync(tmp, { force: true });
  }
  await fsyncPathAsync(dirname(abs), 'r');
  return true;
}

export function removeChildIndex(abs: string): void {
  rmSync(childIndexPath(abs), { force: true });
}
