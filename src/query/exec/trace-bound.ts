// Pages of spans sorted by a rolled-up metric (the viewer's Tokens column, either way). No span of a
// trace takes a value outside the trace's range (trace-range.ts), and the k-th own value in the
// page's order is reached by at least k rows, so the page holds only spans of traces whose range
// reaches it: at 10M spans, 182 of 1.17M traces for the 50th most total tokens. The keys query then
// climbs and joins over those alone.
// Applies to: span pages sorted by a metric the plan rolls up, and by nothing else rolled up.
import type { SqlRunner } from '../../db/database.js';
import { pageKeysQuery, type PlanInput, type TraceBound } from '../plan.js';
import { ident, sql } from '../sql.js';
import { TRACE_RANGE, traceReaches, tracesWhere } from '../trace-range.js';

/** Traces listed in the keys statement at most (an IN list DuckDB tests in its scans); more are found there by their range. */
const MAX_BOUND_TRACES = 1000;

/** Whether a page of this plan may be found under a trace bound. */
export function traceBoundApplies(plan: PlanInput, offset: number, limit: number): boolean {
  const m = plan.sort?.column.metric;
  if (plan.level !== 'span' || m === undefined || TRACE_RANGE[plan.rollUp(m)] === undefined) return false;
  const rolled = pageKeysQuery(plan, limit, offset).rolled;
  return rolled.length === 1 && rolled[0] === m;
}

/** The plan reading the sort metric's own value alone (a span without one sorts last). */
function ownValuePlan(plan: PlanInput): PlanInput {
  return { ...plan, ownEverywhere: new Set([...(plan.ownEverywhere ?? []), plan.sort!.column.metric!]) };
}

/**
 * The k-th own value in the page's order: from the segments' top lists when `listed` can read it there,
 * else one keys query reading own values only. `at` null: fewer than k own values.
 */
async function kthOwn(db: SqlRunner, plan: PlanInput, k: number, steps: string[], listed?: ListedOwn): Promise<OwnAt> {
  const m = plan.sort!.column.metric!;
  const own = ownValuePlan(plan);
  const fromLists = listed ? await listed(own, k, MAX_BOUND_TRACES) : undefined;
  if (fromLists !== undefined) {
    steps.push('trace bound (own value from the top lists)');
    return fromLists;
  }
  const q = pageKeysQuery(own, 1, k - 1, null, [], [m], false);
  const v = (await db.all(q.sql))[0]?.[q.ownMetrics.get(m)!];
  return { at: v === undefined || v === null ? null : Number(v) };
}

/**
 * The k-th own value and, when the lists hold it, the one `past` rows after it (undefined: not read).
 * The same value that far on means many rows tie at the page's value (a scorer's 1 or 0).
 */
export interface OwnAt {
  readonly at: number | null;
  readonly past?: number | null;
}

/** The k-th own value of a plan read as own values only (and the value `past` rows on), from the top lists; undefined when they cannot tell. */
export type ListedOwn = (own: PlanInput, k: number, past: number) => Promise<OwnAt | undefined>;

/**
 * The page's bound: the k-th own value in the page's order (k = offset + limit + 1) among matching
 * spans, and the traces whose range reaches it (listed when at most MAX_BOUND_TRACES); null when fewer
 * than k spans have an own value (the plain keys query then answers).
 */
export async function traceBound(
  db: SqlRunner,
  plan: PlanInput,
  k: number,
  steps: string[],
  listed?: ListedOwn,
): Promise<TraceBound | null> {
  const m = plan.sort!.column.metric!;
  const { at, past } = await kthOwn(db, plan, k, steps, listed);
  if (at === null) {
    steps.push('keys (trace bound: fewer own values than the page)');
    return null;
  }
  // A thousand rows past the k-th tie with it: the list would likely overflow and be thrown away (a
  // grouping of every valued span, ~200 ms at 10M); the keys statement finds the traces itself, which
  // costs about what listing a few hundred and testing them does (10M, by hand: 612-631 against
  // 577-628 ms), so a wrong guess costs little.
  if (past === at) {
    steps.push(`trace bound (ties ${MAX_BOUND_TRACES} rows past the page)`);
    return { metric: m, at, traces: null };
  }
  const d = plan.descendants([m]);
  const v = ident(d.metricColumn(m));
  const reaches = traceReaches(plan.rollUp(m), v, at, plan.sort!.ascending);
  const traces = await db.all(sql`${tracesWhere(d.sql, [v], reaches)} LIMIT ${MAX_BOUND_TRACES + 1}`);
  // Too many to list (ties at the page's value: 37k of 1.17M traces at 10M for correctness 1): the
  // keys statement finds them itself, by the same condition.
  if (traces.length > MAX_BOUND_TRACES) return { metric: m, at, traces: null };
  return { metric: m, at, traces: traces.map((r) => String(r['trace_id'])) };
}
