// Which metric columns of a segment hold a value in every row: read from the Parquet footer's null
// counts (statistics written with the file). Kept in the segment's manifest entry when it is written
// (SegmentEntry.full_metrics), so a planner asks no footer on a store's first question; segments
// written before that carry none and have their footer read once per process instead.
import type { SqlRunner } from '../../db/database.js';
import { sql } from '../../query/sql.js';

/** The `m<id>` columns of the Parquet file at `path` with no null in any row group (an unknown count is not none). */
export async function fullMetricColumns(db: SqlRunner, path: string): Promise<Set<string>> {
  const rows = await db.all(
    sql`SELECT path_in_schema AS col FROM parquet_metadata(${path}) WHERE regexp_full_match(path_in_schema, 'm[0-9]+')
        GROUP BY path_in_schema HAVING bool_and(stats_null_count IS NOT NULL AND stats_null_count = 0)`,
  );
  return new Set(rows.map((r) => String(r['col'])));
}

/** Metric ids (of `m<id>` columns) with a value in every row of the file, sorted; undefined when the footer cannot be read. */
export async function measureFullMetrics(db: SqlRunner, path: string): Promise<number[] | undefined> {
  try {
    const cols = await fullMetricColumns(db, path);
    return [...cols].map((c) => Number(c.slice(1))).sort((a, b) => a - b);
  } catch {
    return undefined;
  }
}
