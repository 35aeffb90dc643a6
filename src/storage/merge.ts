// A merge rewrites segments of one partition as one, without their dead rows. Segments whose time
// ranges do not overlap (the usual case: seals follow the clock) are concatenated in time order, so
// DuckDB streams them with no sort (little memory, about a third less work); overlapping ones are
// sorted again. This writes the file only; the record store commits it.
import { join } from 'node:path';
import type { Connection } from '../db/database.js';
import { partitionKey, type SegmentEntry } from './manifest.js';
import { segmentPath, unionHashes, writeSegment, type WrittenSegment } from './segments.js';

export interface MergeContext {
  readonly dir: string;
  readonly conn: Connection;
  nextSegment(): number;
  readonly rowGroupSize: number;
  readonly compressionLevel: number;
  /** The id hashes of a live segment. */
  hashesOf(file: string): Float64Array;
}

export interface MergeOutput {
  /** The merged segment, or null when every row of the inputs was dead. */
  readonly written: WrittenSegment | null;
  /** Dead sequence numbers the inputs held: gone from disk once the merge is committed. */
  readonly purged: number[];
}

/** True when the segments' created_at ranges are pairwise disjoint once ordered by their start. */
export function disjointInTime(group: readonly SegmentEntry[]): boolean {
  const sorted = [...group].sort((a, b) => a.min_created_us - b.min_created_us);
  for (let i = 1; i < sorted.length; i++) if (sorted[i]!.min_created_us <= sorted[i - 1]!.max_created_us) return false;
  return true;
}

export async function writeMerge(ctx: MergeContext, group: readonly SegmentEntry[]): Promise<MergeOutput> {
  const first = group[0]!;
  const ordered = [...group].sort((a, b) => a.min_created_us - b.min_created_us);
  const inputs = ordered.map((g) => join(ctx.dir, g.file));
  // Exactly the dead rows these files hold (other files' dead seqs may fall in the same ranges).
  const purged = (await ctx.conn.all('SELECT seq FROM read_parquet($1, hive_partitioning = false) WHERE seq IN (SELECT seq FROM dead)', [inputs])).map((r) =>
    Number(r['seq']),
  );
  const order = disjointInTime(group) ? '' : ' ORDER BY created_at, id';
  const written = await writeSegment(ctx.conn, ctx.dir, {
    file: segmentPath(ctx.dir, partitionKey(first.project_id, first.run_id, first.kind), ctx.nextSegment()),
    projectId: first.project_id,
    runId: first.run_id,
    kind: first.kind,
    select: `SELECT * FROM read_parquet($1, hive_partitioning = false, union_by_name = true) WHERE seq NOT IN (SELECT unnest($2::BIGINT[]))${order}`,
    params: [inputs, purged],
    rowGroupSize: ctx.rowGroupSize,
    compressionLevel: ctx.compressionLevel,
    metrics: [...new Set(group.flatMap((g) => g.metrics))],
    hashes: unionHashes(group.map((g) => ctx.hashesOf(g.file))),
  });
  return { written, purged };
}
