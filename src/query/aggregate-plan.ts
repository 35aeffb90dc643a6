// The SQL of an aggregate: the matching records of the plan (plan.ts: aggregateSource, roll-ups
// included), each reduced to its group keys, measured values and per-measure filter tests, then
// grouped. Column groups keep their `limit` largest groups (by records), ranked in the same
// statement. Pure: columns come from the registry, every value is a parameter.
//
// Semantics, decided once:
// - A metric measured at trace or session level (and on spans with children) reads the value search
//   shows: the record's own, else the roll-up of its descendants' values by the metric's roll-up
//   method. `sum(metrics/num_input_tokens)` over traces is then the sum over traces of each trace's
//   own count, or of its spans' when it has none.
// - Records without a value are left out of sum/avg/min/max/percentiles (SQL's rule); a group or
//   bucket with no value reads null, `count` 0. Percentiles interpolate (quantile_cont).
// - Grouping by tags counts a record once in each of its distinct tags; a record without tags is in
//   the group null. Every other column groups by its value, null included.
// - Time buckets are [start, start + interval) in UTC, starts aligned to multiples of the interval
//   since the epoch.
import type { Measure, MeasureOp } from './aggregate-request.js';
import type { GroupBy } from './aggregate-request.js';
import { compileFilter } from './compile-filter.js';
import { aggregateSource, type AggregateSource, type PlanInput, type Planned, type TimeWindow } from './plan.js';
import { ident, joinSql, param, raw, sql, type Sql } from './sql.js';

const QUANTILE: Partial<Record<MeasureOp, number>> = { p50: 0.5, p90: 0.9, p95: 0.95, p99: 0.99 };
const PLAIN: Partial<Record<MeasureOp, string>> = { sum: 'sum', avg: 'avg', min: 'min', max: 'max' };

/** Result columns: k0, k1 (group keys), a0, a1, ... (measures), then `total` and `groups` with column groups. */
export const keyColumn = (i: number) => `k${i}`;
export const measureColumn = (i: number) => `a${i}`;

export interface AggregatePlanInput {
  readonly groups: readonly GroupBy[];
  readonly measures: readonly Measure[];
  readonly limit: number;
  /** Bucket width of the time group, in µs (null without one). */
  readonly stepUs: number | null;
  readonly window: TimeWindow | null;
}

/** Metrics an aggregate reads as values (its measures and their filters). */
export function measuredMetrics(measures: readonly Measure[]): string[] {
  const names = new Set<string>();
  for (const m of measures) if (m.column?.metric !== undefined) names.add(m.column.metric);
  return [...names];
}

/** The statement, and the metrics it rolls up from descendants (for the plan's report of its steps). */
export function aggregateQuery(input: PlanInput, a: AggregatePlanInput): Planned {
  const src = aggregateSource(input, [...measuredMetrics(a.measures), ...filterMetrics(a.measures)], a.window);
  return { sql: aggregateSql(src, a), rolled: [...src.rolled] };
}

function aggregateSql(src: AggregateSource, a: AggregatePlanInput): Sql {
  const ctx = { metric: (name: string) => src.metric(name) };
  const inner: Sql[] = [];
  a.groups.forEach((g, i) => {
    inner.push(sql`${groupKey(g, a.stepUs)} AS ${ident(keyColumn(i))}`);
  });
  a.measures.forEach((m, i) => {
    if (m.column) {
      const v = m.column.metric !== undefined ? src.metric(m.column.metric) : raw(m.column.sql);
      inner.push(sql`(${v})::DOUBLE AS ${ident(`v${i}`)}`);
    }
    if (m.filter) inner.push(sql`${compileFilter(m.filter, ctx)} AS ${ident(`f${i}`)}`);
  });
  if (inner.length === 0) inner.push(raw('1 AS one'));
  const rows = sql`${src.with}SELECT ${joinSql(inner)} FROM ${src.from} WHERE ${src.where}`;
  const aggs = a.measures.map((m, i) => sql`${measureSql(m, i)} AS ${ident(measureColumn(i))}`);
  const keys = a.groups.map((_, i) => ident(keyColumn(i)));
  if (keys.length === 0) return sql`SELECT ${joinSql(aggs)} FROM (${rows})`;
  const grouped = sql`SELECT ${joinSql([...keys, ...aggs, raw('count(*) AS n')])} FROM (${rows}) GROUP BY ALL`;
  const columnKeys = a.groups.flatMap((g, i) => (g.kind === 'column' ? [ident(keyColumn(i))] : []));
  const timeKey = a.groups.findIndex((g) => g.kind === 'time');
  const timeOrder = timeKey >= 0 ? [ident(keyColumn(timeKey))] : [];
  if (columnKeys.length === 0) return sql`${grouped} ORDER BY ${joinSql(timeOrder)}`;
  // The column groups with the most records first (ties by value), ranked once per group: only the
  // first `limit` stay, and `groups` says how many there were.
  // The groups are materialized once: without it DuckDB plans the partition sum as a join of the
  // grouping with itself and reads the records twice.
  const byKeys = joinSql(columnKeys.map((k) => sql`${k} ASC NULLS LAST`));
  const totals = sql`SELECT *, sum(n) OVER (PARTITION BY ${joinSql(columnKeys)}) AS total FROM g`;
  const ranked = sql`SELECT *, dense_rank() OVER (ORDER BY total DESC, ${byKeys}) AS rk FROM (${totals})`;
  const counted = sql`SELECT *, max(rk) OVER () AS groups FROM (${ranked})`;
  const order = joinSql([...timeOrder, raw('rk')]);
  return sql`WITH g AS MATERIALIZED (${grouped}) SELECT * EXCLUDE (rk, n) FROM (${counted}) WHERE rk <= ${a.limit} ORDER BY ${order}`;
}

/** The matching records' created_at range (epoch µs `lo`, `hi`): where `auto` buckets are chosen without bounds. */
export function timeRangeQuery(input: PlanInput, window: TimeWindow | null): Sql {
  const src = aggregateSource(input, [], window);
  return sql`${src.with}SELECT min(epoch_us(r.created_at)) AS lo, max(epoch_us(r.created_at)) AS hi FROM ${src.from} WHERE ${src.where}`;
}

function filterMetrics(measures: readonly Measure[]): string[] {
  const names = new Set<string>();
  const walk = (e: NonNullable<Measure['filter']>): void => {
    if ('leaf' in e) {
      if (e.leaf.kind !== 'fully_annotated' && e.leaf.column.metric !== undefined) names.add(e.leaf.column.metric);
    } else if ('and' in e) for (const x of e.and) walk(x);
    else if ('or' in e) for (const x of e.or) walk(x);
    else walk(e.not);
  };
  for (const m of measures) if (m.filter) walk(m.filter);
  return [...names];
}

function groupKey(g: GroupBy, stepUs: number | null): Sql {
  if (g.kind === 'time') {
    if (stepUs === null) throw new Error('internal: a time group was planned without its interval');
    const step = param(stepUs);
    const us = raw('epoch_us(r.created_at)');
    return sql`(${us} - (((${us} % ${step}::BIGINT) + ${step}::BIGINT) % ${step}::BIGINT))`;
  }
  if (g.column.id === 'tags') {
    // Each distinct tag once; a record without tags goes to the group null.
    return raw('unnest(CASE WHEN len(list_distinct(r.tags)) > 0 THEN list_distinct(r.tags) ELSE [NULL::VARCHAR] END)');
  }
  return raw(g.column.sql);
}

function measureSql(m: Measure, i: number): Sql {
  const v = ident(`v${i}`);
  const where = m.filter ? sql` FILTER (WHERE ${ident(`f${i}`)})` : raw('');
  if (m.op === 'count') return m.column ? sql`count(${v})${where}` : sql`count(*)${where}`;
  const q = QUANTILE[m.op];
  if (q !== undefined) return sql`quantile_cont(${v}, ${raw(String(q))})${where}`;
  return sql`${raw(PLAIN[m.op]!)}(${v})${where}`;
}
