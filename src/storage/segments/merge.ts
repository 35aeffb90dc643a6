// A merge rewrites segments of one partition as one, without their dead rows and with the manifest's
// has_children overrides of their rows written in. The segments are
// concatenated in the order of their first created_at, not sorted again: DuckDB then streams them
// (memory stays flat whatever the size; a sort of 2M wide rows took over 1.5 GB) and does a third
// less work. Seals write each segment sorted and follow the clock, so a merged file is sorted but
// where its inputs' time ranges overlap (spans of traces that were open across a seal); row-group
// statistics, which time windows use, stay tight. This writes the file only; the store commits it.
import { join } from 'node:path';
import { Database, type Connection } from '../../db/database.js';
import { stringLiteral } from '../../db/sql-string.js';
import { EMPTY, ident, int, joinSql, param, raw, sql, type Sql } from '../../query/sql.js';
import { partitionKey, type SegmentEntry } from '../manifest/manifest.js';
import { segmentPath, unionHashes, writeSegment, type WrittenSegment } from './segments.js';

export interface MergeContext {
  readonly dir: string;
  /** A connection to the store's database (the `dead` table). */
  readonly conn: Connection;
  /** Where the merged file is written: a separate database's connection (RecordStoreOptions.mergeThreads), or `conn`. */
  readonly writeConn: Connection;
  nextSegment(): number;
  readonly rowGroupSize: number;
  readonly textIndex: boolean;
  /** Segments of at least this many rows get top lists (Infinity: none). */
  readonly topListMinRows: number;
  /** Segments of at least this many rows get a value index. */
  readonly valueIndexMinRows: number;
  /** Rows of the group's run and kind in segments outside the group (WriteSegment.otherRows). */
  readonly otherRows?: number;
  /** Columns whose presence per span type span segments record (WriteSegment.factColumns). */
  readonly factColumns: readonly string[];
  readonly compressionLevel: number;
  /** The id hashes of a live segment (its .ids file: the index in memory keeps them packed). */
  hashesOf(segment: SegmentEntry): Promise<Float64Array>;
  /**
   * Whether a dead seq may leave the disk: only tombstones already in the manifest. One that is only in
   * the log may not be durable yet (reliable:false), nor the version that replaced the row: purging the
   * row before a power cut would lose the record.
   */
  purgeable(seq: number): boolean;
  /** has_children overrides in the manifest (durable): those of the inputs' rows are written as false. */
  readonly childless: readonly number[];
  /**
   * Retention: rows created before this (epoch µs) have expired and are left out. Reads already hide
   * them, whatever the version, so no tombstone is needed (nothing comes back that a read showed).
   */
  readonly expiredBefore?: number;
}

export interface MergeOutput {
  /** The merged segment, or null when every row of the inputs was dead. */
  readonly written: WrittenSegment | null;
  /** Dead sequence numbers the inputs held: gone from disk once the merge is committed. */
  readonly purged: number[];
  /** has_children overrides now written into the merged file (or whose rows were purged). */
  readonly folded: number[];
}

/**
 * The database merges write their files with (RecordStoreOptions.mergeThreads). Its limit is a ceiling,
 * not an allocation: one thread streams a merge a row group at a time (32,768 rows of up to a few KB
 * each), so a merge's memory stays well under the size of the segment it writes.
 */
export function openMergeDatabase(dir: string, threads: number): Promise<Database> {
  // A merge's COPY frees a written row group at a time: given back to the system past 16 MB, its peak
  // above its start about halves (bench/results/history/2026-11-25-library-memory-10m.md).
  // It reads each input once: no footer cache (it would keep every merged-away segment's footer).
  return Database.open({
    threads,
    memoryLimit: '256MB',
    tempDirectory: join(dir, 'tmp', 'merge'),
    connections: 1,
    bulkFreeThreshold: '16MB',
    footerCache: false,
  });
}

export async function writeMerge(ctx: MergeContext, group: readonly SegmentEntry[]): Promise<MergeOutput> {
  const first = group[0]!;
  const ordered = [...group].sort((a, b) => a.min_created_us - b.min_created_us);
  const inputs = ordered.map((g) => join(ctx.dir, g.file));
  // Exactly the dead rows these files hold (other files' dead seqs may fall in the same ranges).
  const purged = (
    await ctx.conn.all(sql`SELECT seq FROM read_parquet(${inputs}, hive_partitioning = false) WHERE seq IN (SELECT seq FROM dead)`)
  )
    .map((r) => Number(r['seq']))
    .filter((q) => ctx.purgeable(q));
  const folded =
    ctx.childless.length === 0
      ? []
      : (
          await ctx.conn.all(
            sql`SELECT seq FROM read_parquet(${inputs}, hive_partitioning = false) WHERE seq IN (SELECT unnest(${[...ctx.childless]}::BIGINT[]))`,
          )
        ).map((r) => Number(r['seq']));
  // Dead rows are dropped by a bitmap over the inputs' seq range, a filter that keeps the scan's
  // order; `seq NOT IN (subquery)` is a join, and DuckDB's joins do not keep it. Overrides likewise.
  const tests: Sql[] = [];
  let star = raw('*');
  const lo = Math.min(...group.map((g) => g.min_seq));
  const hi = Math.max(...group.map((g) => g.max_seq));
  // bitstring_agg takes its bounds only as constants: they are the store's own sequence numbers.
  if (!Number.isSafeInteger(lo) || !Number.isSafeInteger(hi)) throw new Error(`bad seq range ${lo}..${hi}`);
  // One parameter for the low bound, whichever bitmaps test it.
  const low = param(lo);
  const bitmap = async (name: string, seqs: readonly number[]): Promise<Sql> => {
    await ctx.writeConn.run(
      sql`SET VARIABLE ${ident(name)} = (SELECT bitstring_agg(s, ${int(lo)}, ${int(hi)}) FROM (SELECT unnest(${[...seqs]}::BIGINT[]) AS s))`,
    );
    return sql`get_bit(getvariable(${stringLiteral(name)}), (seq - ${low})::INTEGER) = 0`;
  };
  if (purged.length > 0) tests.push(await bitmap('tl_merge_dead', purged));
  if (folded.length > 0) star = sql`* REPLACE (has_children AND ${await bitmap('tl_merge_off', folded)} AS has_children)`;
  if (ctx.expiredBefore !== undefined) {
    if (!Number.isSafeInteger(ctx.expiredBefore)) throw new Error(`bad retention cutoff ${ctx.expiredBefore}`);
    tests.push(sql`created_at >= make_timestamp(${ctx.expiredBefore})`);
  }
  const where = tests.length === 0 ? EMPTY : sql` WHERE ${joinSql(tests, ' AND ')}`;
  const written = await writeSegment(ctx.writeConn, ctx.dir, {
    file: segmentPath(ctx.dir, partitionKey(first.project_id, first.run_id, first.kind), ctx.nextSegment()),
    projectId: first.project_id,
    runId: first.run_id,
    kind: first.kind,
    select: sql`SELECT ${star} FROM read_parquet(${inputs}, hive_partitioning = false, union_by_name = true)${where}`,
    rowGroupSize: ctx.rowGroupSize,
    textIndex: ctx.textIndex,
    topListMinRows: ctx.topListMinRows,
    valueIndexMinRows: ctx.valueIndexMinRows,
    ...(ctx.otherRows === undefined ? {} : { otherRows: ctx.otherRows }),
    // Its text index is made from its inputs' (text-merge.ts).
    ...(ctx.textIndex
      ? {
          mergedFrom: {
            inputs: ordered.map((g) => ({ abs: join(ctx.dir, g.file), rowGroups: g.row_groups.map((r) => r[2]) })),
            dropped: new Set(purged),
          },
        }
      : {}),
    factColumns: ctx.factColumns,
    compressionLevel: ctx.compressionLevel,
    metrics: [...new Set(group.flatMap((g) => g.metrics))],
    // Read once the file is written: not held in memory through the merge's COPY.
    hashes: async () => unionHashes(await Promise.all(group.map((g) => ctx.hashesOf(g)))),
  });
  return { written, purged, folded };
}
