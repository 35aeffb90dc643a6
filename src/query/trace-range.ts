// The values a roll-up can take within one trace. A span's value for a rolled-up metric is its own, or
// the roll-up of some of its descendants' own values, all of one trace: a sum of some of them lies
// between the sum of the trace's negative values (its smallest value when none is negative) and the
// sum of its positive ones (its largest when none is positive); a max, min or average lies between its
// smallest and largest value. An own value lies between them too. So a span can meet a comparison on
// such a metric only in a trace whose range admits it, and the climb that computes roll-ups (plan.ts)
// need not visit the other traces: pages sorted by the metric (exec/trace-bound.ts) and filters that
// require a comparison on it read only the traces that can hold a match.
import type { RollUpMethod } from './columns.js';
import type { Expr } from './filter-ast.js';
import { joinSql, sql, type Sql } from './sql.js';

/** Per roll-up method, aggregates of a trace's own values that no value within the trace falls below or exceeds. */
export const TRACE_RANGE: Partial<Record<RollUpMethod, { low: (v: Sql) => Sql; high: (v: Sql) => Sql }>> = {
  sum: {
    low: (v) => sql`coalesce(sum(${v}) FILTER (WHERE ${v} < 0), min(${v}))`,
    high: (v) => sql`coalesce(sum(${v}) FILTER (WHERE ${v} > 0), max(${v}))`,
  },
  max: { low: (v) => sql`min(${v})`, high: (v) => sql`max(${v})` },
  min: { low: (v) => sql`min(${v})`, high: (v) => sql`max(${v})` },
  average: { low: (v) => sql`min(${v})`, high: (v) => sql`max(${v})` },
};

/**
 * A condition over a trace's own values (a HAVING of a grouping by trace) that every trace holding a
 * span matching `filter` meets, from the comparisons on rolled-up metrics the filter requires (leaves
 * reached from the root through AND nodes); null when it requires none. `column` names a metric's
 * column in the grouped rows.
 */
export function traceAdmits(
  filter: Expr | null,
  rolled: readonly string[],
  rollUp: (metric: string) => RollUpMethod,
  column: (metric: string) => Sql,
): Sql | null {
  const conds: Sql[] = [];
  const visit = (e: Expr): void => {
    if ('and' in e) e.and.forEach(visit);
    if (!('leaf' in e) || e.leaf.kind !== 'number') return;
    const { column: col, op, value } = e.leaf;
    const range = col.metric !== undefined && rolled.includes(col.metric) ? TRACE_RANGE[rollUp(col.metric)] : undefined;
    if (range === undefined) return;
    const v = column(col.metric!);
    const [low, high] = [range.low(v), range.high(v)];
    if (op === 'gt') conds.push(sql`${high} > ${value as number}`);
    else if (op === 'gte') conds.push(sql`${high} >= ${value as number}`);
    else if (op === 'lt') conds.push(sql`${low} < ${value as number}`);
    else if (op === 'lte') conds.push(sql`${low} <= ${value as number}`);
    else if (op === 'eq') conds.push(sql`${low} <= ${value as number} AND ${high} >= ${value as number}`);
    else if (op === 'between') {
      const [a, b] = value as [number, number];
      conds.push(sql`${low} <= ${b} AND ${high} >= ${a}`);
    }
  };
  if (filter !== null) visit(filter);
  return conds.length > 0 ? joinSql(conds, ' AND ') : null;
}

/** The condition on a trace's own values that its range reaches `at` (at most it when ascending, at least when descending). */
export function traceReaches(method: RollUpMethod, v: Sql, at: number, ascending: boolean): Sql {
  const range = TRACE_RANGE[method]!;
  return ascending ? sql`${range.low(v)} <= ${at}::DOUBLE` : sql`${range.high(v)} >= ${at}::DOUBLE`;
}

/** The traces of `source` meeting `having` over their rows with a value of any of `columns` (null values never count). */
export function tracesWhere(source: Sql, columns: readonly Sql[], having: Sql): Sql {
  const valued = joinSql(
    columns.map((c) => sql`${c} IS NOT NULL`),
    ' OR ',
  );
  return sql`SELECT trace_id FROM ${source} WHERE ${valued} GROUP BY trace_id HAVING ${having}`;
}
