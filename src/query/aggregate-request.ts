// An aggregate request (POST .../{level}/aggregate) checked and resolved against the column
// registry: the filter (exactly as search takes it), up to two groups (a groupable column, or
// created_at in time buckets), and the measures (a count, or sum/avg/min/max/percentiles of a
// numeric column), each with its name in the answer. Every problem is a 422 naming its field's path;
// nothing here writes SQL.
import { InvalidRequestError, type ValidationIssue } from '../errors.js';
import { resolveColumn, suggestColumn, type ColumnDef, type Level, type MetricInfo } from './columns.js';
import type { Expr, Leaf } from './filter-ast.js';
import { validateFilters } from './validate-filter.js';

/** Bucket widths in microseconds. */
export const INTERVALS = { '1m': 60_000_000, '5m': 300_000_000, '1h': 3_600_000_000, '1d': 86_400_000_000 } as const;
export type Interval = keyof typeof INTERVALS;
export const INTERVAL_NAMES = Object.keys(INTERVALS) as Interval[];

export const MEASURE_OPS = ['count', 'sum', 'avg', 'min', 'max', 'p50', 'p90', 'p95', 'p99'] as const;
export type MeasureOp = (typeof MEASURE_OPS)[number];

export const AGGREGATE_LIMITS = {
  maxGroups: 2,
  maxMeasures: 20,
  /** Most time buckets in one answer (30 days hourly is 720). */
  maxBuckets: 2000,
  /** Most rows in one answer, empty buckets included (buckets times groups). */
  maxRows: 100_000,
  /** Groups of the column group_by kept when the request names no limit, and the most it may ask for. */
  defaultLimit: 100,
  maxLimit: 1000,
  /** `auto` picks the narrowest interval giving at most this many buckets. */
  autoBuckets: 300,
  maxAlias: 100,
};

export type GroupBy = { kind: 'time'; column: ColumnDef; interval: Interval | 'auto' } | { kind: 'column'; column: ColumnDef };

export interface Measure {
  op: MeasureOp;
  /** The column measured; null for a count of records. */
  column: ColumnDef | null;
  /** The measure's key in each row. */
  alias: string;
  /** Only records matching this count toward the measure (null: every matching record). */
  filter: Expr | null;
}

/** Inclusive created_at bounds (epoch µs) the request's filter sets; null where it sets none. */
export interface TimeBounds {
  from: number | null;
  to: number | null;
}

export interface AggregateQuery {
  filter: Expr | null;
  groups: GroupBy[];
  measures: Measure[];
  /** Most groups of the column group_by (combinations, with two) in the answer. */
  limit: number;
  bounds: TimeBounds;
}

/** The fields an aggregate body may hold that this check reads (the wire schema checks their shapes first). */
export interface AggregateBody {
  filters?: unknown[] | null;
  filter_tree?: unknown;
  group_by?: readonly unknown[] | null;
  measures?: readonly unknown[] | null;
  limit?: number | null;
}

type Loc = (string | number)[];
type Metrics = ((name: string) => MetricInfo | undefined) | undefined;

const isNumeric = (c: ColumnDef) => c.data_type === 'integer' || c.data_type === 'floating_point';

export function parseAggregate(level: Level, body: AggregateBody, metrics?: Metrics): AggregateQuery {
  const issues: ValidationIssue[] = [];
  const fail = (loc: Loc, msg: string, input?: unknown, type = 'value_error') => {
    const issue: ValidationIssue = { loc, msg, type };
    if (input !== undefined && (typeof input !== 'object' || input === null)) issue.input = input;
    issues.push(issue);
  };
  let filter: Expr | null = null;
  try {
    filter = validateFilters({ filters: body.filters ?? null, filter_tree: body.filter_tree }, level, metrics);
  } catch (err) {
    if (!(err instanceof InvalidRequestError)) throw err;
    issues.push(...err.issues);
  }
  const groups = parseGroups(body.group_by ?? [], level, metrics, fail);
  const measures = parseMeasures(body.measures, level, metrics, fail, issues, groups);
  const limit = body.limit ?? AGGREGATE_LIMITS.defaultLimit;
  if (!Number.isInteger(limit) || limit < 1 || limit > AGGREGATE_LIMITS.maxLimit)
    fail(['body', 'limit'], `Input should be a whole number from 1 to ${AGGREGATE_LIMITS.maxLimit}`, limit);
  if (issues.length > 0) throw new InvalidRequestError(issues);
  return { filter, groups, measures, limit, bounds: timeBounds(filter) };
}

function parseGroups(
  raw: readonly unknown[],
  level: Level,
  metrics: Metrics,
  fail: (loc: Loc, msg: string, input?: unknown, type?: string) => void,
) {
  const groups: GroupBy[] = [];
  if (!Array.isArray(raw)) {
    fail(['body', 'group_by'], 'Input should be a list of groups', raw, 'list_type');
    return groups;
  }
  if (raw.length > AGGREGATE_LIMITS.maxGroups) {
    fail(['body', 'group_by'], `at most ${AGGREGATE_LIMITS.maxGroups} groups`, undefined, 'too_long');
    return groups;
  }
  raw.forEach((g, i) => {
    const object = typeof g === 'object' && g !== null && !Array.isArray(g);
    const id = object ? (g as Record<string, unknown>)['column_id'] : g;
    const loc: Loc = object ? ['body', 'group_by', i, 'column_id'] : ['body', 'group_by', i];
    if (typeof id !== 'string') {
      fail(loc, 'Input should be a column id, or {"column_id": ..., "interval": ...}', id, 'string_type');
      return;
    }
    const column = resolveColumn(id, level, metrics);
    if (!column) {
      const hint = suggestColumn(id, level);
      fail(loc, `unknown column "${id}" for ${level}s${hint ? `; did you mean "${hint}"?` : ''}`, id);
      return;
    }
    if (!column.groupable) {
      fail(loc, `column ${column.id} cannot be grouped by (groupable columns: ${groupableIds(level).join(', ')})`, id);
      return;
    }
    if (groups.some((x) => x.column.id === column.id)) {
      fail(loc, `column ${column.id} is already grouped by`, id);
      return;
    }
    const interval = object ? (g as Record<string, unknown>)['interval'] : undefined;
    if (column.id === 'created_at') {
      const allowed = [...INTERVAL_NAMES, 'auto'];
      if (typeof interval !== 'string' || !allowed.includes(interval)) {
        fail(
          object ? ['body', 'group_by', i, 'interval'] : loc,
          `created_at groups into time buckets: give {"column_id": "created_at", "interval": one of ${allowed.map((a) => `'${a}'`).join(', ')}}`,
          interval,
          interval === undefined ? 'missing' : 'enum',
        );
        return;
      }
      groups.push({ kind: 'time', column, interval: interval as Interval | 'auto' });
      return;
    }
    if (interval !== undefined && interval !== null) {
      fail(['body', 'group_by', i, 'interval'], 'only created_at takes an interval', interval);
      return;
    }
    groups.push({ kind: 'column', column });
  });
  return groups;
}

function parseMeasures(
  raw: readonly unknown[] | null | undefined,
  level: Level,
  metrics: Metrics,
  fail: (loc: Loc, msg: string, input?: unknown, type?: string) => void,
  issues: ValidationIssue[],
  groups: readonly GroupBy[],
): Measure[] {
  const out: Measure[] = [];
  if (!Array.isArray(raw) || raw.length === 0) {
    fail(['body', 'measures'], 'Field required: at least one measure, e.g. {"op": "count"}', undefined, 'missing');
    return out;
  }
  if (raw.length > AGGREGATE_LIMITS.maxMeasures) {
    fail(['body', 'measures'], `at most ${AGGREGATE_LIMITS.maxMeasures} measures`, undefined, 'too_long');
    return out;
  }
  const taken = new Set(groups.map((g) => g.column.id));
  raw.forEach((m, i) => {
    const loc: Loc = ['body', 'measures', i];
    if (typeof m !== 'object' || m === null || Array.isArray(m)) {
      fail(loc, 'Input should be a measure {"op": ..., "column_id"?: ..., "alias"?: ...}', m, 'model_type');
      return;
    }
    const f = m as Record<string, unknown>;
    const op = f['op'];
    if (typeof op !== 'string' || !(MEASURE_OPS as readonly string[]).includes(op)) {
      fail(
        [...loc, 'op'],
        `Input should be one of ${MEASURE_OPS.map((o) => `'${o}'`).join(', ')}`,
        op,
        op === undefined ? 'missing' : 'enum',
      );
      return;
    }
    const id = f['column_id'];
    let column: ColumnDef | null = null;
    if (id !== undefined && id !== null) {
      if (typeof id !== 'string') {
        fail([...loc, 'column_id'], 'Input should be a valid string', id, 'string_type');
        return;
      }
      const c = resolveColumn(id, level, metrics);
      if (!c) {
        const hint = suggestColumn(id, level);
        fail([...loc, 'column_id'], `unknown column "${id}" for ${level}s${hint ? `; did you mean "${hint}"?` : ''}`, id);
        return;
      }
      if (!isNumeric(c)) {
        fail([...loc, 'column_id'], `column ${c.id} is not numeric: measure metrics/<name> or a number column`, id);
        return;
      }
      column = c;
    } else if (op !== 'count') {
      fail([...loc, 'column_id'], `Field required: ${op} measures a numeric column (e.g. metrics/duration_ns)`, undefined, 'missing');
      return;
    }
    let filter: Expr | null = null;
    try {
      filter = validateFilters({ filters: (f['filters'] as unknown[] | null) ?? null, filter_tree: f['filter_tree'] }, level, metrics, loc);
    } catch (err) {
      if (!(err instanceof InvalidRequestError)) throw err;
      issues.push(...err.issues);
      return;
    }
    const given = f['alias'];
    if (
      given !== undefined &&
      given !== null &&
      (typeof given !== 'string' || given.length === 0 || given.length > AGGREGATE_LIMITS.maxAlias)
    ) {
      fail([...loc, 'alias'], `Input should be a name of 1 to ${AGGREGATE_LIMITS.maxAlias} characters`, given, 'string_type');
      return;
    }
    const alias = typeof given === 'string' ? given : column ? `${op}(${column.id})` : 'count';
    if (taken.has(alias)) {
      fail(
        [...loc, 'alias'],
        `"${alias}" already names ${groups.some((g) => g.column.id === alias) ? 'a group' : 'another measure'} of this answer: give the measure an alias`,
        alias,
      );
      return;
    }
    taken.add(alias);
    out.push({ op: op as MeasureOp, column, alias, filter });
  });
  return out;
}

function groupableIds(level: Level): string[] {
  const ids: string[] = [];
  for (const id of ['created_at', 'name', 'type', 'tags', 'status_code', 'model', 'run_id', 'is_complete', 'has_children']) {
    if (resolveColumn(id, level)?.groupable) ids.push(id);
  }
  return ids;
}

/**
 * The created_at bounds every matching record lies within, from the date leaves of the filter's
 * top-level conjunction (a time range picker's filters): the range time buckets cover.
 */
export function timeBounds(filter: Expr | null): TimeBounds {
  const bounds: TimeBounds = { from: null, to: null };
  const lower = (v: number) => {
    bounds.from = bounds.from === null ? v : Math.max(bounds.from, v);
  };
  const upper = (v: number) => {
    bounds.to = bounds.to === null ? v : Math.min(bounds.to, v);
  };
  const visit = (e: Expr) => {
    if ('and' in e) {
      for (const x of e.and) visit(x);
      return;
    }
    if (!('leaf' in e)) return;
    const l: Leaf = e.leaf;
    if (l.kind !== 'date' || l.column.id !== 'created_at') return;
    if (l.op === 'gte') lower(l.value);
    else if (l.op === 'gt') lower(l.value + 1);
    else if (l.op === 'lte') upper(l.value);
    else if (l.op === 'lt') upper(l.value - 1);
    else if (l.op === 'eq') {
      lower(l.value);
      upper(l.value);
    }
  };
  if (filter) visit(filter);
  return bounds;
}

/** The first bucket's start of a bucketed instant (floor to a multiple of the width, also before 1970). */
export function bucketStart(us: number, step: number): number {
  return us - (((us % step) + step) % step);
}

/** The narrowest interval giving at most AGGREGATE_LIMITS.autoBuckets buckets over [from, to]. */
export function autoInterval(from: number, to: number): Interval {
  for (const name of INTERVAL_NAMES) if (bucketCount(from, to, INTERVALS[name]) <= AGGREGATE_LIMITS.autoBuckets) return name;
  return '1d';
}

export function bucketCount(from: number, to: number, step: number): number {
  if (to < from) return 0;
  return (bucketStart(to, step) - bucketStart(from, step)) / step + 1;
}
