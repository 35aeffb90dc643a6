// A whole export to Parquet (no level, no filter) without decoding the sealed segments: a segment
// all of whose rows are live as stored (none dead, none expired, no has_children override) is copied
// into the export file column chunk by column chunk (storage/parquet-splice.ts), its export columns
// only; everything else (memory tables, segments with dead or overridden rows) is written by DuckDB
// into a file of its own first, which is also the template of the export's columns. At 1M spans a
// DuckDB COPY of the segments took ~7 CPU s, nearly all decoding and encoding pages again.
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import type { Database } from '../../db/database.js';
import { stringLiteral } from '../../db/sql-string.js';
import { ident, joinSql, raw, sql } from '../../query/sql.js';
import { SpliceMismatch, spliceParquet } from '../../storage/parquet/parquet-splice.js';
import { COLUMN_NAMES } from '../../record/record-columns.js';
import type { SegmentEntry } from '../../storage/manifest/manifest.js';
import type { Snapshot } from '../../storage/snapshot/snapshot.js';
import { EMPTY_TABLE } from '../../storage/snapshot/snapshot-source.js';
import type { RunScope } from '../../query/exec/record-queries.js';

/** The COPY options of a Parquet export (the template's, so DuckDB-written chunks match it). */
export const EXPORT_PARQUET_OPTIONS = raw('FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE 32768');

/**
 * Segments of the scope whose every row is live as stored: no dead seq and no has_children override
 * in their seq range (a superset check), and none of their rows past a retention cutoff.
 */
async function wholeSegments(snap: Snapshot, db: Database, segments: readonly SegmentEntry[], scope: RunScope): Promise<SegmentEntry[]> {
  if (segments.length === 0) return [];
  const cut = snap.cutoffs(scope.projectId, scope.runId);
  const deadFree = snap.deadFreeFiles();
  const overridden = new Set(
    (
      await db.all(
        sql`SELECT i FROM (SELECT unnest(${segments.map((_, i) => i)}::BIGINT[]) AS i,
           unnest(${segments.map((g) => g.min_seq)}::BIGINT[]) AS lo, unnest(${segments.map((g) => g.max_seq)}::BIGINT[]) AS hi) r
         WHERE EXISTS (SELECT 1 FROM childless c WHERE c.seq BETWEEN r.lo AND r.hi)`,
      )
    ).map((r) => Number(r['i'])),
  );
  return segments.filter(
    (s, i) => deadFree.has(s.file) && !overridden.has(i) && !(cut.has(s.run_id) && s.min_created_us < cut.get(s.run_id)!),
  );
}

/**
 * Writes the whole export of `scope` to `out` as Parquet; returns its rows, or null when a segment's
 * columns differ from DuckDB's export layout (an older file: the caller writes the export the
 * ordinary way). `rest` is a scratch path for DuckDB's part.
 */
export async function spliceExport(
  snap: Snapshot,
  db: Database,
  dir: string,
  scope: RunScope,
  out: string,
  rest: string,
  onProgress: (fraction: number) => void,
): Promise<number | null> {
  const all = snap.segmentsFor({
    projectId: scope.projectId,
    ...(scope.runId !== undefined ? { runId: scope.runId } : {}),
    kinds: ['span', 'trace', 'session'],
  });
  const whole = await wholeSegments(snap, db, all, scope);
  const copied = new Set(whole.map((s) => s.file));
  const others = all.filter((s) => !copied.has(s.file)).map((s) => join(dir, s.file));
  // The rows not copied: the other segments and the memory tables, with the dead-row, override and
  // retention filters every read applies (sourceWith), written by DuckDB.
  const cols = joinSql(COLUMN_NAMES.map(ident));
  const sealed =
    others.length > 0
      ? sql`SELECT ${cols} FROM read_parquet(${others}, hive_partitioning = false, union_by_name = true)`
      : sql`SELECT ${cols} FROM ${ident(EMPTY_TABLE)}`;
  const src = snap.sourceWith(
    { projectId: scope.projectId, ...(scope.runId !== undefined ? { runId: scope.runId } : {}), kinds: ['span', 'trace', 'session'] },
    [],
    COLUMN_NAMES,
    sealed,
  );
  const exportCols = joinSql(COLUMN_NAMES.filter((c) => c !== 'seq').map(ident));
  try {
    // The scratch path is ours (a uuid under <data>/tmp): the one literal here.
    await db.runWithProgress(
      sql`COPY (SELECT ${exportCols} FROM ${src.sql}) TO ${stringLiteral(rest)} (${EXPORT_PARQUET_OPTIONS})`,
      (f) => onProgress(f * 0.5),
      200,
      { preserve_insertion_order: 'false' },
    );
    try {
      // The template first (DuckDB's part), then the segments in the manifest's order.
      return spliceParquet(out, [rest, ...whole.map((s) => join(dir, s.file))]);
    } catch (err) {
      if (err instanceof SpliceMismatch) return null;
      throw err;
    }
  } finally {
    rmSync(rest, { force: true });
  }
}
