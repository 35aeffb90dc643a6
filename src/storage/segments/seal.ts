// Sealing: a frozen memory table becomes one sorted ZSTD Parquet segment per project, run and kind,
// with each metric also shredded into its own DOUBLE column (`m<id>`). This writes the files only;
// the record store commits them (manifest first, then its in-memory state). It runs on a connection
// of its own, so neither writers nor readers wait for it.
import type { Connection } from '../../db/database.js';
import { stringLiteral } from '../../db/sql-string.js';
import { EMPTY, ident, int, joinSql, raw, sql, type Sql } from '../../query/sql.js';
import { NEAR_ORDER_GROUPS } from './bulk-load.js';
import { partitionKey, partitionRows, type ManifestState } from '../manifest/manifest.js';
import type { MemPartition, MemTable } from '../memtable/mem-tables.js';
import { KIND_SQL } from '../../record/record-columns.js';
import { removeSegmentFiles, segmentPath, writeSegment, type WrittenSegment } from './segments.js';

/**
 * ZSTD level of sealed segments. Level 1 writes faster than the default 3 for files slightly larger
 * (IMPORT_COMPRESSION_LEVEL is 1 for the same reason); merges rewrite them at the store's compaction level.
 */
export const SEAL_COMPRESSION_LEVEL = 1;

/** Whether a partition's rows came in created_at order but for lags of a few row groups' worth of time. */
export function nearlyOrdered(part: MemPartition, rowGroupSize: number): boolean {
  if (!(part.behindUs < Infinity)) return false;
  if (part.behindUs === 0) return true;
  const groupUs = ((part.newestUs - part.oldestUs) * rowGroupSize) / Math.max(1, part.rows);
  return part.behindUs <= NEAR_ORDER_GROUPS * groupUs;
}

export interface SealContext {
  readonly dir: string;
  readonly conn: Connection;
  readonly manifest: ManifestState;
  /** Reserves the next segment number. */
  nextSegment(): number;
  /** Rows per row group of merged segments (what nearlyOrdered measures lags in). */
  readonly rowGroupSize: number;
  /** Rows per row group of the segments written here (RecordStoreOptions.sealRowGroupSize; rowGroupSize if absent). */
  readonly sealRowGroupSize?: number;
  readonly textIndex: boolean;
  /** Segments of at least this many rows get top lists (Infinity: none). */
  readonly topListMinRows: number;
  /** Segments of at least this many rows get a value index. */
  readonly valueIndexMinRows: number;
  /** Columns whose presence per span type span segments record (WriteSegment.factColumns). */
  readonly factColumns: readonly string[];
}

export interface SealOutput {
  readonly added: WrittenSegment[];
  readonly metricIds: Record<string, number>;
}

/**
 * Writes the segments of a frozen table (its live rows in created_at order, or nearly: see nearlyOrdered). `ownDead`: the
 * table's tombstones of its own rows (left out); `ownChildless`: its has_children overrides of its own
 * rows (written as false, so the overrides can go).
 */
export async function writeSealSegments(
  ctx: SealContext,
  table: MemTable,
  ownDead: readonly number[],
  ownChildless: readonly number[] = [],
): Promise<SealOutput> {
  const metricIds: Record<string, number> = { ...ctx.manifest.metric_ids };
  let nextMetric = Math.max(-1, ...Object.values(metricIds)) + 1;
  const added: WrittenSegment[] = [];
  // The bitmaps span the marked seqs (bitstring_agg takes its bounds only as constants; they are the
  // store's own numbers); a row outside that range is marked by neither.
  let lo = Infinity;
  let hi = -Infinity;
  for (const q of [ownDead, ownChildless].flat()) {
    if (q < lo) lo = q;
    if (q > hi) hi = q;
  }
  try {
    // Only the table's own tombstones leave rows out: a row replaced from a newer log file stays in
    // the segment (dead to readers) until that file is sealed too, since the newer file may not be
    // on disk yet and the row is then the record's last durable version. Both sets are tested by a
    // bitmap: a filter keeps the scan's order, `seq NOT IN (subquery)` is a join and does not (see below).
    const bitmap = async (name: string, seqs: readonly number[]): Promise<Sql> => {
      if (!Number.isSafeInteger(lo) || !Number.isSafeInteger(hi)) throw new Error(`bad seq range ${lo}..${hi}`);
      const [a, b] = [int(lo), int(hi)];
      await ctx.conn.run(
        sql`SET VARIABLE ${ident(name)} = (SELECT bitstring_agg(s, ${a}, ${b}) FROM (SELECT unnest(${[...seqs]}::BIGINT[]) AS s))`,
      );
      // CASE, not OR: DuckDB evaluates both sides of an OR, and get_bit outside the range throws.
      return sql`(CASE WHEN seq BETWEEN ${a} AND ${b} THEN get_bit(getvariable(${stringLiteral(name)}), (seq - ${a})::INTEGER) = 0 ELSE true END)`;
    };
    const where = ownDead.length === 0 ? EMPTY : sql` AND ${await bitmap('tl_seal_dead', ownDead)}`;
    const star =
      ownChildless.length === 0 ? raw('*') : sql`* REPLACE (has_children AND ${await bitmap('tl_seal_off', ownChildless)} AS has_children)`;
    for (const part of table.partitions.values()) {
      const names = [...part.metrics].sort();
      for (const n of names) if (metricIds[n] === undefined) metricIds[n] = nextMetric++;
      const shredded = joinSql(
        names.map((n) => sql`, metrics[${n}] AS ${ident(`m${metricIds[n]}`)}`),
        '',
      );
      // Rows that came nearly in created_at order are written as they came (DuckDB keeps a table's
      // insertion order through filters): the sort was a third of a seal's CPU, and row groups' time
      // ranges stay as tight as in the segments merges concatenate (NEAR_ORDER_GROUPS, bulk-load.ts).
      const order = raw(nearlyOrdered(part, ctx.rowGroupSize) ? '' : ' ORDER BY created_at, id');
      const written = await writeSegment(ctx.conn, ctx.dir, {
        file: segmentPath(ctx.dir, partitionKey(part.projectId, part.runId, part.kind), ctx.nextSegment()),
        projectId: part.projectId,
        runId: part.runId,
        kind: part.kind,
        select: sql`SELECT ${star}${shredded} FROM ${ident(table.name)}
                 WHERE project_id = ${part.projectId} AND run_id = ${part.runId} AND ${raw(KIND_SQL)} = ${part.kind}${where}${order}`,
        rowGroupSize: ctx.sealRowGroupSize ?? ctx.rowGroupSize,
        compressionLevel: SEAL_COMPRESSION_LEVEL,
        textIndex: ctx.textIndex,
        topListMinRows: ctx.topListMinRows,
        valueIndexMinRows: ctx.valueIndexMinRows,
        otherRows: partitionRows(ctx.manifest.segments, { project_id: part.projectId, run_id: part.runId, kind: part.kind }),
        factColumns: ctx.factColumns,
        metrics: names.map((n) => metricIds[n]!),
        hashes: Float64Array.from(part.hashes),
      });
      if (written) added.push(written);
    }
  } catch (err) {
    for (const seg of added) removeSegmentFiles(ctx.dir, seg.entry.file);
    throw err;
  }
  return { added, metricIds };
}
