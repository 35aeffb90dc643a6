// The SQL of a page's roll-ups (page-reads.ts runs it): every metric's roll-up for the page's records
// that can have any (from their descendants), or only the metrics a partial selection asks for. Asked
// by name, a metric is read from its own column (a shredded DOUBLE where sealed) instead of unnesting
// every metrics map of the page's traces. Metric names are parameters, never SQL text.
import type { Level } from '../columns.js';
import { inPlaceholders, LONG_LIST } from '../compile-filter.js';
import { ident, joinSql, raw, sql, type Sql } from '../sql.js';
import type { RecordKind } from '../../record/record-columns.js';
import type { Snapshot } from '../../storage/snapshot/snapshot.js';

const AGGS = raw(
  'avg(v) AS average, sum(v) AS sum, max(v) AS max, min(v) AS min, ' +
    'avg(CASE WHEN v <> 0 THEN 1.0 ELSE 0.0 END) AS percentage_true, avg(CASE WHEN v = 0 THEN 1.0 ELSE 0.0 END) AS percentage_false',
);

/**
 * A page's traces or ids tested as filters test a one_of list (compile-filter.ts: memberOf). A long
 * list (pages of up to 1,000) becomes a semi-join on the unnested parameter.
 */
function inList(col: Sql, values: readonly string[]): Sql {
  if (values.length === 0) return raw('false');
  if (values.length > LONG_LIST) return sql`${col} IN (SELECT unnest(${[...values]}::VARCHAR[]))`;
  return inPlaceholders(
    col,
    values.map((v) => sql`${v}`),
  );
}

/**
 * Rows (id, name, one column per roll-up method) for records `ids` (of traces `traces`, at span
 * level); `metrics` null means every metric.
 */
export function pageRollUpsQuery(
  snap: Snapshot,
  level: Level,
  scope: { projectId: string; runId?: string },
  descendants: readonly RecordKind[],
  ids: string[],
  traces: string[],
  metrics: readonly string[] | null,
): Sql {
  const src = snap.source({ ...scope, kinds: level === 'span' ? ['span'] : descendants }, metrics ?? []);
  const col = (m: string) => ident(src.metricColumn(m));
  // (owner, k, v) rows: owner is the parent (spans) or the trace/session the row belongs to.
  const pairs = (owner: Sql, from: Sql, where: Sql): Sql => {
    if (metrics === null)
      return sql`SELECT ${owner} AS anc, unnest(map_keys(metrics)) AS k, unnest(map_values(metrics)) AS v FROM ${from} WHERE ${where}`;
    const one = (m: string) => sql`SELECT ${owner} AS anc, ${m} AS k, ${col(m)} AS v FROM ${from} WHERE ${where} AND ${col(m)} IS NOT NULL`;
    return joinSql(metrics.map(one), ' UNION ALL ');
  };
  const cols = metrics === null ? raw('metrics') : joinSql(metrics.map(col));
  if (level === 'span') {
    const d = sql`d AS (SELECT id, parent_id, trace_id, ${cols} FROM ${src.sql} WHERE ${inList(raw('trace_id'), traces)})`;
    const e = sql`e AS (${pairs(raw('parent_id'), raw('d'), raw('parent_id <> trace_id'))})`;
    const up = raw(
      'up(anc, k, v) AS (SELECT anc, k, v FROM e UNION ALL SELECT p.parent_id, up.k, up.v FROM up JOIN d p ON p.id = up.anc WHERE p.parent_id <> p.trace_id)',
    );
    return sql`WITH RECURSIVE ${d}, ${e}, ${up} SELECT anc AS id, k AS name, ${AGGS} FROM up WHERE ${inList(raw('anc'), ids)} GROUP BY ALL`;
  }
  const link = raw(level === 'trace' ? 'trace_id' : 'session_id');
  return sql`SELECT anc AS id, k AS name, ${AGGS} FROM (${pairs(link, src.sql, inList(link, ids))}) GROUP BY ALL`;
}
