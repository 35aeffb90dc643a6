// Roll-ups shown on a page: every metric's roll-up for the page's records that can have any (from
// their descendants), or only the metrics a partial selection asks for. Asked by name, a metric is
// read from its own column (a shredded DOUBLE where sealed) instead of unnesting every metrics map
// of the page's traces. Metric names are parameters, never SQL text.
import type { Param } from '../../db/database.js';
import type { Level } from '../columns.js';
import { inPlaceholders, LONG_LIST } from '../compile-filter.js';
import type { RecordKind } from '../../record/record-columns.js';
import type { Snapshot } from '../../storage/snapshot/snapshot.js';

const AGGS = 'avg(v) AS average, sum(v) AS sum, max(v) AS max, min(v) AS min, avg(CASE WHEN v <> 0 THEN 1.0 ELSE 0.0 END) AS percentage_true, avg(CASE WHEN v = 0 THEN 1.0 ELSE 0.0 END) AS percentage_false';

/**
 * Rows (id, name, one column per roll-up method) for records `ids` (of traces `traces`, at span
 * level); `metrics` null means every metric.
 */
export function pageRollUpsQuery(snap: Snapshot, level: Level, scope: { projectId: string; runId?: string }, descendants: readonly RecordKind[], ids: string[], traces: string[], metrics: readonly string[] | null): { sql: string; params: Param[] } {
  const src = snap.source({ ...scope, kinds: level === 'span' ? ['span'] : descendants }, 1, metrics ?? []);
  const params: Param[] = [...src.params];
  const p = (v: Param) => `$${params.push(v)}`;
  // (owner, k, v) rows: owner is the parent (spans) or the trace/session the row belongs to.
  const pairs = (owner: string, from: string, where: string): string => {
    if (metrics === null) return `SELECT ${owner} AS anc, unnest(map_keys(metrics)) AS k, unnest(map_values(metrics)) AS v FROM ${from} WHERE ${where}`;
    return metrics.map((m) => `SELECT ${owner} AS anc, ${p(m)} AS k, ${src.metricColumn(m)} AS v FROM ${from} WHERE ${where} AND ${src.metricColumn(m)} IS NOT NULL`).join(' UNION ALL ');
  };
  // A page's traces or ids as placeholders, tested as filters test a one_of list (compile-filter.ts:
  // memberOf). A long list (pages of up to 1,000) becomes a semi-join on the unnested parameter.
  const inList = (col: string, values: readonly string[]): string =>
    values.length === 0 ? 'false' : values.length > LONG_LIST ? `${col} IN (SELECT unnest(${p([...values])}::VARCHAR[]))` : inPlaceholders(col, values.map((v) => p(v)));
  const cols = metrics === null ? 'metrics' : metrics.map((m) => src.metricColumn(m)).join(', ');
  if (level === 'span') {
    const d = `d AS (SELECT id, parent_id, trace_id, ${cols} FROM ${src.sql} WHERE ${inList('trace_id', traces)})`;
    const e = `e AS (${pairs('parent_id', 'd', 'parent_id <> trace_id')})`;
    const up = 'up(anc, k, v) AS (SELECT anc, k, v FROM e UNION ALL SELECT p.parent_id, up.k, up.v FROM up JOIN d p ON p.id = up.anc WHERE p.parent_id <> p.trace_id)';
    return { sql: `WITH RECURSIVE ${d}, ${e}, ${up} SELECT anc AS id, k AS name, ${AGGS} FROM up WHERE ${inList('anc', ids)} GROUP BY ALL`, params };
  }
  const link = level === 'trace' ? 'trace_id' : 'session_id';
  const inIds = inList(link, ids);
  return { sql: `SELECT anc AS id, k AS name, ${AGGS} FROM (${pairs(link, src.sql, inIds)}) GROUP BY ALL`, params };
}
