// Pages of spans sorted by a rolled-up metric, best first (the viewer's Tokens column): a span's value
// is its own, or the roll-up of its descendants' own values, which no trace's spans can exceed beyond
// a bound of the trace (the sum of its positive values for a sum; its largest value for a max, min or
// average). The k-th best own value among matching spans is reached by at least k rows, so the page
// holds only spans whose own value reaches it and spans of traces whose bound does: at 10M spans, 182
// of 1.17M traces for the 50th best total tokens. The keys query then climbs and joins over those alone.
// Applies to: span pages sorted descending by a metric the plan rolls up, and by nothing else rolled up.
import type { SqlRunner } from '../../db/database.js';
import type { RollUpMethod } from '../columns.js';
import { pageKeysQuery, type PlanInput, type TraceBound } from '../plan.js';
import { ident, sql, type Sql } from '../sql.js';

/** Traces whose bound reaches the page's at most: more, and the bound saves too little to be worth its statements. */
export const MAX_BOUND_TRACES = 1000;

/** Per roll-up method, an aggregate of a trace's own values that no roll-up within the trace exceeds. */
const TRACE_BOUND: Partial<Record<RollUpMethod, (v: Sql) => Sql>> = {
  sum: (v) => sql`sum(${v}) FILTER (WHERE ${v} > 0)`,
  max: (v) => sql`max(${v})`,
  min: (v) => sql`max(${v})`,
  average: (v) => sql`max(${v})`,
};

/** Whether a page of this plan may be found under a trace bound. */
export function traceBoundApplies(plan: PlanInput, offset: number, limit: number): boolean {
  const m = plan.sort?.column.metric;
  if (plan.level !== 'span' || m === undefined || plan.sort!.ascending || TRACE_BOUND[plan.rollUp(m)] === undefined) return false;
  const rolled = pageKeysQuery(plan, limit, offset).rolled;
  return rolled.length === 1 && rolled[0] === m;
}

/**
 * The page's bound: the k-th best own value (k = offset + limit + 1) among matching spans, and the
 * traces whose bound reaches it; null when fewer than k spans have an own value or too many traces
 * reach it (the plain keys query then answers).
 */
export async function traceBound(db: SqlRunner, plan: PlanInput, k: number, steps: string[]): Promise<TraceBound | null> {
  const m = plan.sort!.column.metric!;
  // Read as own values only: a span without one sorts last, so the k-th row's value is the k-th best own value.
  const own = pageKeysQuery({ ...plan, ownEverywhere: new Set([...(plan.ownEverywhere ?? []), m]) }, 1, k - 1, null, [], [m], false);
  const row = (await db.all(own.sql))[0];
  const at = row?.[own.ownMetrics.get(m)!];
  if (at === null || at === undefined) {
    steps.push('keys (trace bound: fewer own values than the page)');
    return null;
  }
  const d = plan.descendants([m]);
  const v = ident(d.metricColumn(m));
  const reaches = sql`${TRACE_BOUND[plan.rollUp(m)]!(v)} >= ${Number(at)}::DOUBLE`;
  const traces = await db.all(
    sql`SELECT trace_id FROM ${d.sql} WHERE ${v} IS NOT NULL GROUP BY trace_id HAVING ${reaches} LIMIT ${MAX_BOUND_TRACES + 1}`,
  );
  if (traces.length > MAX_BOUND_TRACES) {
    steps.push(`keys (trace bound: more than ${MAX_BOUND_TRACES} traces reach it)`);
    return null;
  }
  return { metric: m, at: Number(at), traces: traces.map((r) => String(r['trace_id'])) };
}
