// An aggregate of one level's matching records: check the request (aggregate-request.ts), settle the
// time buckets (the interval `auto` picks, from the filter's created_at bounds or else the matching
// records' own range), run the one grouping statement (aggregate-plan.ts), and shape its rows: group
// columns by id, measures by alias, every bucket of the range present (count 0 where nothing fell).
import type { Row } from '../../db/database.js';
import { invalid } from '../../errors.js';
import { formatTimestampUs } from '../../record/time.js';
import { aggregateQuery, keyColumn, measureColumn, measuredMetrics, timeRangeQuery } from '../aggregate-plan.js';
import {
  AGGREGATE_LIMITS,
  autoInterval,
  bucketCount,
  bucketStart,
  INTERVALS,
  parseAggregate,
  type AggregateBody,
  type AggregateQuery,
  type Interval,
} from '../aggregate-request.js';
import type { Level } from '../columns.js';
import { metricsOf } from '../filter-ast.js';
import { columnsOf } from '../match-facts.js';
import type { PlanInput, TimeWindow } from '../plan.js';
import type { Snapshot } from '../../storage/snapshot/snapshot.js';
import type { ExecContext } from './exec-context.js';
import { DESCENDANTS, KINDS, levelSource, scopeOf, type RunScope } from './plan-input.js';

export interface AggregateResult {
  rows: Record<string, unknown>[];
  /** The bucket width of the time group (the one `auto` chose). */
  interval?: Interval;
  /** Whether column groups beyond `limit` were left out (the largest are kept). */
  groups_truncated?: boolean;
}

export async function aggregate(
  cx: ExecContext,
  snap: Snapshot,
  level: Level,
  scope: RunScope,
  body: AggregateBody,
): Promise<AggregateResult> {
  const q = parseAggregate(level, body, cx.metricInfo);
  const plan = await planOf(cx, snap, level, scope, q);
  const window = windowOf(q);
  const timeAt = q.groups.findIndex((g) => g.kind === 'time');
  const time = timeAt >= 0 ? q.groups[timeAt]! : null;
  let range = { ...q.bounds };
  let interval: Interval | undefined;
  if (time?.kind === 'time') {
    if (time.interval === 'auto' && (range.from === null || range.to === null)) {
      const r = await matchRange(cx, snap, level, scope, plan, q, window);
      if (r === null) return { rows: [], interval: '1h' };
      range = { from: range.from ?? r.lo, to: range.to ?? r.hi };
    }
    interval = time.interval === 'auto' ? autoInterval(range.from!, range.to!) : time.interval;
    if (range.from !== null && range.to !== null) checkBuckets(bucketCount(range.from, range.to, INTERVALS[interval]), timeAt, interval);
  }
  const stepUs = interval ? INTERVALS[interval] : null;
  const statement = aggregateQuery(plan, { groups: q.groups, measures: q.measures, limit: q.limit, stepUs, window });
  const started = performance.now();
  const raw = await cx.db.all(statement.sql);
  const rolled = statement.rolled.length > 0 ? `, rolling up ${statement.rolled.join(', ')}` : '';
  cx.onPlan?.([`aggregate${rolled} (${(performance.now() - started).toFixed(0)} ms)`]);
  const truncated = raw.length > 0 && raw[0]!['groups'] !== undefined && Number(raw[0]!['groups']) > q.limit;
  let rows = raw.map((r) => shapeRow(r, q));
  if (time && stepUs !== null) rows = fillBuckets(rows, q, timeAt, stepUs, range);
  return {
    rows,
    ...(interval ? { interval } : {}),
    ...(q.groups.some((g) => g.kind === 'column') ? { groups_truncated: truncated } : {}),
  };
}

/**
 * The plan over the level's records with the request's filter, and what the stored records say can
 * spare a roll-up: metrics every record holds (then read as they are), and facts about spans.
 */
async function planOf(cx: ExecContext, snap: Snapshot, level: Level, scope: RunScope, q: AggregateQuery): Promise<PlanInput> {
  const descendantMetrics = snap.metricNames(scopeOf(scope, DESCENDANTS[level]));
  const plan: PlanInput = {
    level,
    base: (metrics, text, created) => levelSource(snap, scope, level, metrics, text, created),
    descendants: (metrics) => snap.source(scopeOf(scope, DESCENDANTS[level]), metrics),
    filter: q.filter,
    sort: null,
    rollUp: cx.rollUp,
    descendantMetrics,
  };
  // Only metrics a descendant carries could roll up at all.
  const read = new Set([...measuredMetrics(q.measures), ...metricsOf(q.filter)]);
  for (const m of q.measures) for (const n of metricsOf(m.filter)) read.add(n);
  const rollable = [...read].filter((n) => descendantMetrics.has(n));
  const ownEverywhere = rollable.length > 0 ? await cx.ownValues.full(snap, scopeOf(scope, KINDS[level]), rollable) : undefined;
  const withOwn = ownEverywhere ? { ...plan, ownEverywhere } : plan;
  if (level !== 'span' || rollable.every((n) => ownEverywhere?.has(n))) return withOwn;
  const columns = columnsOf(q.filter);
  for (const m of q.measures) columnsOf(m.filter, columns);
  return { ...withOwn, facts: await cx.facts.facts(snap, scopeOf(scope, ['span']), columns) };
}

/**
 * The matching records' created_at range. Without a filter, segments holding no dead row and no
 * expired one answer from the range their manifest entry keeps, and only rows in memory are read.
 */
async function matchRange(
  cx: ExecContext,
  snap: Snapshot,
  level: Level,
  scope: RunScope,
  plan: PlanInput,
  q: AggregateQuery,
  window: TimeWindow | null,
): Promise<{ lo: number; hi: number } | null> {
  const kinds = scopeOf(scope, KINDS[level]);
  const segments = snap.segmentsFor(kinds).filter((s) => s.rows > 0);
  const clean = snap.deadFreeFiles();
  const known =
    q.filter === null &&
    window === null &&
    snap.cutoffs(scope.projectId, scope.runId).size === 0 &&
    segments.every((s) => clean.has(s.file));
  const read = known
    ? {
        ...plan,
        base: (metrics: readonly string[]) => snap.source(kinds, metrics, [], null, { files: new Set(), only: true, memory: true }),
      }
    : plan;
  const r = (await cx.db.all(timeRangeQuery(read, window)))[0];
  let lo = r?.['lo'] === null || r?.['lo'] === undefined ? null : Number(r['lo']);
  let hi = lo === null ? null : Number(r!['hi']);
  if (known) {
    for (const s of segments) {
      lo = lo === null ? s.min_created_us : Math.min(lo, s.min_created_us);
      hi = hi === null ? s.max_created_us : Math.max(hi, s.max_created_us);
    }
  }
  return lo === null || hi === null ? null : { lo, hi };
}

/** The filter's created_at bounds as a window: segments wholly outside them are not read. */
function windowOf(q: AggregateQuery): TimeWindow | null {
  const { from, to } = q.bounds;
  if (from !== null && to !== null) return { ranges: [[from, Math.max(from, to)]] };
  if (from !== null) return { op: '>=', us: from };
  if (to !== null) return { op: '<=', us: to };
  return null;
}

function checkBuckets(n: number, at: number, interval: Interval): void {
  if (n > AGGREGATE_LIMITS.maxBuckets) {
    throw invalid(
      ['body', 'group_by', at, 'interval'],
      `${interval} buckets over this time range are ${n.toLocaleString('en-US')}, more than ` +
        `${AGGREGATE_LIMITS.maxBuckets.toLocaleString('en-US')}: choose a longer interval or 'auto', or narrow created_at with a filter`,
      interval,
    );
  }
}

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** A result row as the answer has it: group columns by id (buckets as ISO instants), measures by alias. */
function shapeRow(r: Row, q: AggregateQuery): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  q.groups.forEach((g, i) => {
    const v = r[keyColumn(i)];
    out[g.column.id] = g.kind === 'time' ? formatTimestampUs(Number(v)) : typeof v === 'bigint' ? Number(v) : (v ?? null);
  });
  q.measures.forEach((m, i) => {
    const v = num(r[measureColumn(i)]);
    out[m.alias] = m.op === 'count' ? (v ?? 0) : v;
  });
  return out;
}

/**
 * Every bucket of the range, each with every group the answer holds: those nothing fell into count 0
 * and measure null. The range is the filter's bounds, else the first and last bucket with records.
 */
function fillBuckets(
  rows: Record<string, unknown>[],
  q: AggregateQuery,
  timeAt: number,
  step: number,
  bounds: { from: number | null; to: number | null },
): Record<string, unknown>[] {
  const timeId = q.groups[timeAt]!.column.id;
  const others = q.groups.filter((_, i) => i !== timeAt).map((g) => g.column.id);
  const at = (r: Record<string, unknown>) => Date.parse(String(r[timeId])) * 1000;
  let from = bounds.from;
  let to = bounds.to;
  for (const r of rows) {
    const t = at(r);
    if (bounds.from === null) from = from === null ? t : Math.min(from, t);
    if (bounds.to === null) to = to === null ? t : Math.max(to, t);
  }
  if (from === null || to === null) return rows;
  const first = bucketStart(from, step);
  const n = bucketCount(from, to, step);
  const interval = (Object.entries(INTERVALS).find(([, us]) => us === step)?.[0] ?? '1h') as Interval;
  checkBuckets(n, timeAt, interval);
  // The groups present (in the statement's order: largest first), each filled across the range.
  const groupKey = (r: Record<string, unknown>) => JSON.stringify(others.map((id) => r[id]));
  const groups = new Map<string, Record<string, unknown>>();
  const have = new Map<string, Record<string, unknown>>();
  for (const r of rows) {
    const k = groupKey(r);
    if (!groups.has(k)) groups.set(k, Object.fromEntries(others.map((id) => [id, r[id]])));
    have.set(`${at(r)}|${k}`, r);
  }
  if (groups.size === 0) groups.set('[]', {});
  if (n * groups.size > AGGREGATE_LIMITS.maxRows) {
    throw invalid(
      ['body', 'limit'],
      `${n.toLocaleString('en-US')} buckets times ${groups.size} groups are more than ` +
        `${AGGREGATE_LIMITS.maxRows.toLocaleString('en-US')} rows: choose a longer interval or a smaller limit`,
      q.limit,
    );
  }
  const out: Record<string, unknown>[] = [];
  for (let b = 0; b < n; b++) {
    const t = first + b * step;
    for (const [k, keys] of groups) {
      const found = have.get(`${t}|${k}`);
      if (found) {
        out.push(found);
        continue;
      }
      const row: Record<string, unknown> = {};
      for (const g of q.groups) row[g.column.id] = g.kind === 'time' ? formatTimestampUs(t) : keys[g.column.id];
      for (const m of q.measures) row[m.alias] = m.op === 'count' ? 0 : null;
      out.push(row);
    }
  }
  return out;
}
