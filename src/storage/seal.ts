// Sealing: a frozen memory table becomes one sorted ZSTD Parquet segment per project, run and kind,
// with each metric also shredded into its own DOUBLE column (`m<id>`). This writes the files only;
// the record store commits them (manifest first, then its in-memory state). It runs on a connection
// of its own, so neither writers nor readers wait for it.
import type { Connection } from '../db/database.js';
import { partitionKey, type ManifestState } from './manifest.js';
import type { MemTable } from './mem-tables.js';
import { KIND_SQL } from './record-columns.js';
import { removeSegmentFiles, segmentPath, writeSegment, type WrittenSegment } from './segments.js';

export interface SealContext {
  readonly dir: string;
  readonly conn: Connection;
  readonly manifest: ManifestState;
  /** Reserves the next segment number. */
  nextSegment(): number;
  readonly rowGroupSize: number;
  readonly textIndex: boolean;
}

export interface SealOutput {
  readonly added: WrittenSegment[];
  readonly metricIds: Record<string, number>;
}

/**
 * Writes the segments of a frozen table (its live rows, sorted by created_at then id). `ownDead`: the
 * table's tombstones of its own rows (left out); `ownChildless`: its has_children overrides of its own
 * rows (written as false, so the overrides can go).
 */
export async function writeSealSegments(ctx: SealContext, table: MemTable, ownDead: readonly number[], ownChildless: readonly number[] = []): Promise<SealOutput> {
  const metricIds: Record<string, number> = { ...ctx.manifest.metric_ids };
  let nextMetric = Math.max(-1, ...Object.values(metricIds)) + 1;
  const added: WrittenSegment[] = [];
  try {
    for (const part of table.partitions.values()) {
      const names = [...part.metrics].sort();
      for (const n of names) if (metricIds[n] === undefined) metricIds[n] = nextMetric++;
      const shredded = names.map((n, i) => `, metrics[$${4 + i}] AS m${metricIds[n]}`).join('');
      // Only the table's own tombstones leave rows out: a row replaced from a newer log file stays in
      // the segment (dead to readers) until that file is sealed too, since the newer file may not be
      // on disk yet and the row is then the record's last durable version.
      const own = `$${4 + names.length}`;
      const star = ownChildless.length === 0 ? '*' : `* REPLACE (has_children AND seq NOT IN (SELECT unnest($${5 + names.length}::BIGINT[])) AS has_children)`;
      const written = await writeSegment(ctx.conn, ctx.dir, {
        file: segmentPath(ctx.dir, partitionKey(part.projectId, part.runId, part.kind), ctx.nextSegment()),
        projectId: part.projectId,
        runId: part.runId,
        kind: part.kind,
        select: `SELECT ${star}${shredded} FROM ${table.name}
                 WHERE project_id = $1 AND run_id = $2 AND ${KIND_SQL} = $3 AND seq NOT IN (SELECT unnest(${own}::BIGINT[]))
                 ORDER BY created_at, id`,
        params: [part.projectId, part.runId, part.kind, ...names, ownDead, ...(ownChildless.length === 0 ? [] : [[...ownChildless]])],
        rowGroupSize: ctx.rowGroupSize,
        textIndex: ctx.textIndex,
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
