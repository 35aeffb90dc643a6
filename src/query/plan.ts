// Whole queries over one level of the tree (spans, traces or sessions): the keys of a page, a count,
// the rows a delete removes. The planner composes the record source (segments + in-memory batch, given
// by the engine as a SQL fragment), the compiled filter, the sort, an optional created_at window, and
// the metric roll-ups that filters and sorts need. Pure and synchronous: returns SQL fragments
// (sql.ts); never runs anything.
import { invalid, invalidFields } from '../errors.js';
import { resolveColumn, suggestColumn, type ColumnDef, type Level, type MetricInfo, type RollUpMethod } from './columns.js';
import { compileWhere } from './compile-filter.js';
import { metricsOf, type Expr } from './filter-ast.js';
import { childlessMatch, metricsWithoutRollUp, type DataFacts } from './match-facts.js';
import { COLUMN_NAMES } from '../record/record-columns.js';
import { EMPTY, ident, int, joinSql, raw, sql, type Sql } from './sql.js';
import { requiredContains, type TextRequirement } from './text-needs.js';
import { traceAdmits, traceReaches, tracesWhere } from './trace-range.js';

export interface Source {
  /** The rows (a subquery or table expression), with its parameters. */
  readonly sql: Sql;
  /** The source's column holding a requested metric. */
  metricColumn(name: string): string;
  /**
   * Set by a span level's own source: asked for no text and no time ranges, it reads the very rows
   * `descendants` reads (one snapshot, one scope), so a statement restricted to some traces reads their
   * spans once for both. A plan that swaps `base` for a narrower one (picked segments, say) has not it.
   */
  readonly sameAsDescendants?: boolean;
}

export interface SortSpec {
  readonly column: ColumnDef;
  readonly ascending: boolean;
}

export interface PlanInput {
  readonly level: Level;
  /**
   * Records of the level, scoped and live, exposing the listed metrics as columns. `text`: substrings
   * every matching record holds (the source may leave out row groups that cannot hold them).
   */
  readonly base: (metrics: readonly string[], text: readonly TextRequirement[], created: CreatedRanges | null, locate?: boolean) => Source;
  /** Descendant records (spans for spans and traces; spans and traces for sessions), for roll-ups. */
  readonly descendants: (metrics: readonly string[]) => Source;
  readonly filter: Expr | null;
  readonly sort: SortSpec | null;
  readonly rollUp: (metric: string) => RollUpMethod;
  /** What the stored spans are known to hold (span level): lets roll-ups of childless matches go. */
  readonly facts?: DataFacts;
  /** Metrics some descendant record carries (from segment statistics); others roll up to nothing. */
  readonly descendantMetrics?: ReadonlySet<string>;
  /**
   * Metrics every record of the level holds a value of (from segment statistics): the value shown is
   * the record's own wherever it is read, so no roll-up of them is computed.
   */
  readonly ownEverywhere?: ReadonlySet<string>;
  /** Metrics some record of the level itself carries (segment statistics and memory tables' notes). */
  readonly levelMetrics?: ReadonlySet<string>;
  /** Spans the page can come from, when sorted by a rolled-up metric (exec/trace-bound.ts). */
  readonly traceBound?: TraceBound;
}

/**
 * A page of spans sorted by the rolled-up `metric` holds only spans of the traces whose range reaches
 * `at`, the k-th own value in the page's order (exec/trace-bound.ts): the climb and the join to the
 * roll-ups cover those alone. `traces` lists them, or is null when they are too many to list (the
 * statement then finds them itself).
 */
export interface TraceBound {
  readonly metric: string;
  readonly at: number;
  readonly traces: readonly string[] | null;
}

/**
 * Restricts rows to created_at >= us (newest-first pages) or <= us (oldest-first pages), or to
 * created_at within one of `ranges` (inclusive, epoch µs): DuckDB skips row groups outside them.
 */
export type TimeWindow = { readonly op: '>=' | '<='; readonly us: number } | { readonly ranges: readonly (readonly [number, number])[] };

/**
 * Inclusive created_at ranges (epoch µs) every row a query keeps lies in, from its time window: the
 * source may leave out whole segments outside them (DuckDB would skip their row groups, but still opens
 * every listed file and checks each row group's statistics, a cost per segment).
 */
export type CreatedRanges = readonly (readonly [number, number])[];

export function windowRanges(window: TimeWindow | null): CreatedRanges | null {
  if (window === null) return null;
  if ('ranges' in window) return window.ranges;
  return window.op === '>=' ? [[window.us, Infinity]] : [[-Infinity, window.us]];
}

export const AGGREGATE: Record<RollUpMethod, (v: Sql) => Sql> = {
  average: (v) => sql`avg(${v})`,
  sum: (v) => sql`sum(${v})`,
  max: (v) => sql`max(${v})`,
  min: (v) => sql`min(${v})`,
  percentage_true: (v) => sql`avg(CASE WHEN ${v} <> 0 THEN 1.0 ELSE 0.0 END)`,
  percentage_false: (v) => sql`avg(CASE WHEN ${v} = 0 THEN 1.0 ELSE 0.0 END)`,
};

interface Skeleton {
  /** WITH clause (roll-up CTEs), or nothing. */
  with: Sql;
  ctes: Sql[];
  from: Sql;
  where: Sql;
  order: Sql;
  /** Metrics the query rolls up from descendants (the others read own values only). */
  rolled: string[];
  /** Metric name -> the source column holding the record's own value. */
  own: Map<string, string>;
  /** The sort's key when it is a metric's own value (nothing rolled up), else null. */
  ownSortKey: Sql | null;
  /** SQL of a planned metric's value: own, or own-else-rolled-up where the plan rolls it up. */
  metric: (name: string) => Sql;
}

function withClause(ctes: readonly Sql[], recursive: boolean): Sql {
  return ctes.length > 0 ? sql`WITH ${raw(recursive ? 'RECURSIVE ' : '')}${joinSql(ctes)} ` : EMPTY;
}

/** Is the sort the one segments are stored in (created_at, then id)? Then a time window applies. */
export function timeOrdered(sort: SortSpec | null): { ascending: boolean } | null {
  if (sort === null) return { ascending: false };
  return sort.column.id === 'created_at' ? { ascending: sort.ascending } : null;
}

const at = (us: number) => sql`make_timestamp(${us}::BIGINT)`;

/**
 * Can a page sorted by a rolled-up metric be found among the best roll-ups alone? At the trace and
 * session levels, when no record of the level carries the metric itself (its value is the roll-up
 * alone), the page's records are the best roll-ups that match, if enough of them do.
 */
export function rollTopApplies(input: PlanInput): boolean {
  const m = input.sort?.column.metric;
  return (
    input.level !== 'span' &&
    m !== undefined &&
    input.levelMetrics !== undefined &&
    !input.levelMetrics.has(m) &&
    input.descendantMetrics?.has(m) === true &&
    input.ownEverywhere?.has(m) !== true
  );
}

/**
 * The shared skeleton: CTEs (roll-ups), FROM with roll-up joins, WHERE, and ORDER BY. `measured`:
 * metrics read as search shows them (own value, else the roll-up), as a sort reads its metric.
 */
function skeleton(
  input: PlanInput,
  window: TimeWindow | null = null,
  shown: readonly string[] = [],
  measured: readonly string[] = [],
  rollTop: number | null = null,
  locate = false,
): Skeleton {
  const needed = metricsOf(input.filter);
  if (input.sort?.column.metric !== undefined) needed.add(input.sort.column.metric);
  for (const m of measured) needed.add(m);
  const names = [...needed];
  // Metrics the page shows are read from the same scan (own values only: a shredded column each).
  const read = [...names, ...shown.filter((n) => !needed.has(n))];
  const text = requiredContains(input.filter);
  const ranges = windowRanges(window);
  const base = input.base(read, text, ranges, locate);
  const ownColumn = (name: string) => sql`r.${ident(base.metricColumn(name))}`;
  const ctes: Sql[] = [];
  const joins: Sql[] = [];
  const metricSql = new Map<string, Sql>();
  let recursive = false;
  // Whether the traces' spans are read once, as `ts`, for both the climb and the records (see below).
  let shared = false;
  // A metric no descendant carries rolls up to nothing; one every record holds is never read from its
  // roll-up; a matching span without children has only its own value. Either way the roll-up (a
  // recursive climb or a join) cannot change the answer.
  const own = new Set(input.descendantMetrics ? names.filter((n) => !input.descendantMetrics!.has(n)) : []);
  for (const n of names) if (input.ownEverywhere?.has(n)) own.add(n);
  if (input.level === 'span') {
    const skip = metricsWithoutRollUp(input.filter, input.facts);
    // A sorted or measured metric is read on every matching row: its roll-up can go only when no
    // matching row has children.
    const everyRow = input.sort?.column.metric !== undefined ? [input.sort.column.metric, ...measured] : measured;
    const childless = everyRow.length > 0 && childlessMatch(input.filter, input.facts);
    for (const m of everyRow) {
      if (childless) skip.add(m);
      else skip.delete(m);
    }
    for (const n of skip) own.add(n);
  }
  for (const name of names) if (own.has(name)) metricSql.set(name, ownColumn(name));
  const rolled = names.filter((n) => !metricSql.has(n));
  // The traces whose spans can match, null for every trace: a bound's (span pages sorted by a rolled-up
  // metric; its traces as one IN list, one placeholder each), or, without one, those whose range admits
  // the comparisons on rolled-up metrics the filter requires (trace-range.ts: found first, as tb).
  const bound = input.level === 'span' && input.traceBound && rolled.includes(input.traceBound.metric) ? input.traceBound : undefined;
  let inTraces: Sql | null =
    bound?.traces === undefined || bound.traces === null
      ? null
      : bound.traces.length === 0
        ? raw('false')
        : sql`trace_id IN (${joinSql(bound.traces.map((t) => sql`${t}`))})`;
  if (rolled.length > 0) {
    const d = input.descendants(rolled);
    // Only the link columns the level's climb or grouping uses: d is read over every descendant.
    const links = raw(
      input.level === 'span' ? 'id, parent_id, trace_id, has_children' : input.level === 'trace' ? 'trace_id' : 'session_id',
    );
    const columns = rolled.map((n) => ident(d.metricColumn(n)));
    const column = (m: string) => columns[rolled.indexOf(m)]!;
    // Traces the statement finds itself: a bound's too many to list, or the filter's admitted ones.
    let admits: Sql | null = null;
    if (bound?.traces === null)
      admits = traceReaches(input.rollUp(bound.metric), column(bound.metric), bound.at, input.sort?.ascending === true);
    else if (bound === undefined && input.level === 'span') admits = traceAdmits(input.filter, rolled, input.rollUp, column);
    if (admits !== null) {
      ctes.push(sql`tb AS MATERIALIZED (${tracesWhere(d.sql, columns, admits)})`);
      inTraces = raw('trace_id IN (SELECT trace_id FROM tb)');
    }
    shared = inTraces !== null && base.sameAsDescendants === true && text.length === 0 && ranges === null;
    if (shared) {
      // The traces' spans, read once (DuckDB keeps only the columns the statement uses) for the climb
      // and the records alike: each read tested every trace_id of the level (10M, a Tokens page's
      // keys: 680-711 -> 408-484 ms by hand).
      ctes.push(sql`ts AS MATERIALIZED (SELECT * FROM ${base.sql} WHERE ${inTraces})`);
      const renamed = rolled.map((n, i) => sql`${ident(base.metricColumn(n))} AS ${columns[i]!}`);
      ctes.push(sql`d AS (SELECT ${links}, ${joinSql(renamed)} FROM ts)`);
    } else {
      // Only those traces' spans climb; then d is few spans, read once for both uses below (10M: 2.0 -> 1.0 s).
      const once = raw(inTraces === null ? '' : 'MATERIALIZED ');
      const restricted = inTraces === null ? EMPTY : sql` WHERE ${inTraces}`;
      ctes.push(sql`d AS ${once}(SELECT ${links}, ${joinSql(columns)} FROM ${d.sql}${restricted})`);
    }
    // Every rolled metric in one pass: one climb (or one grouping) carrying a value column each, and
    // one join. A row goes along when any of its values is set; each aggregate skips the others' nulls.
    const vals = columns.map((c) => sql`d.${c}`);
    const vs = rolled.map((_, i) => ident(`v${i}`));
    const anySet = joinSql(
      vals.map((v) => sql`${v} IS NOT NULL`),
      ' OR ',
    );
    const aggs = (cols: readonly Sql[]) =>
      joinSql(rolled.map((name, i) => sql`${AGGREGATE[input.rollUp(name)](cols[i]!)} FILTER (WHERE ${cols[i]!} IS NOT NULL) AS ${vs[i]!}`));
    if (input.level === 'span') {
      // Every own value climbs to each span ancestor (a span's parent is a span unless it is the trace);
      // the climb only ever steps through spans that have children and hang under another span.
      recursive = true;
      ctes.push(sql`par AS (SELECT id, parent_id FROM d WHERE has_children AND parent_id <> trace_id)`);
      const carried = joinSql(vs.map((v) => sql`up.${v}`));
      const climb = sql`UNION ALL SELECT p.parent_id, ${carried} FROM up JOIN par p ON p.id = up.anc`;
      ctes.push(
        sql`up(anc, ${joinSql(vs)}) AS (SELECT d.parent_id, ${joinSql(vals)} FROM d WHERE (${anySet}) AND d.parent_id <> d.trace_id ${climb})`,
      );
      ctes.push(sql`ru AS (SELECT anc AS id, ${aggs(vs)} FROM up GROUP BY anc)`);
    } else {
      const group = raw(input.level === 'trace' ? 'd.trace_id' : 'd.session_id');
      ctes.push(sql`ru AS (SELECT ${group} AS id, ${aggs(vals)} FROM d WHERE ${anySet} GROUP BY ${group})`);
    }
    const top = rollTop !== null && rollTopApplies(input) ? rolled.indexOf(input.sort!.column.metric!) : -1;
    if (top >= 0) {
      // Only the best `rollTop` roll-ups meet the records (in the page's own order, so the page is
      // theirs when enough of them match; the caller checks that): the join then builds no table of
      // every record of the level.
      const dir = raw(input.sort!.ascending ? 'ASC' : 'DESC');
      ctes.push(sql`rt AS (SELECT * FROM ru ORDER BY ${vs[top]!} ${dir} NULLS LAST, id ${dir} LIMIT ${rollTop})`);
      joins.push(raw('JOIN rt ru ON ru.id = r.id'));
    } else joins.push(raw('LEFT JOIN ru ON ru.id = r.id'));
    rolled.forEach((name, i) => {
      metricSql.set(name, sql`coalesce(${ownColumn(name)}, ru.${vs[i]!})`);
    });
  }
  const ctx = {
    metric: (name: string) => {
      const q = metricSql.get(name);
      if (q === undefined) throw new Error(`metric ${name} was not planned`);
      return q;
    },
  };
  let where = input.filter ? compileWhere(input.filter, ctx) : raw('true');
  if (window && 'ranges' in window) {
    const ranges = window.ranges.map(([a, b]) => sql`r.created_at BETWEEN ${at(a)} AND ${at(b)}`);
    where = sql`${where} AND (${joinSql(ranges, ' OR ')})`;
  } else if (window) where = sql`${where} AND r.created_at ${raw(window.op)} ${at(window.us)}`;
  let order = raw('r.created_at DESC, r.id DESC');
  const sortMetric = input.sort?.column.metric;
  const ownSortKey = sortMetric !== undefined && rolled.length === 0 ? ctx.metric(sortMetric) : null;
  if (input.sort) {
    const dir = raw(input.sort.ascending ? 'ASC' : 'DESC');
    const expr = input.sort.column.metric !== undefined ? ctx.metric(input.sort.column.metric) : raw(input.sort.column.sql);
    order = sql`${expr} ${dir} NULLS LAST, r.id ${dir}`;
  }
  // Only spans of those traces can match (a span's own value lies in its trace's range too); restricted
  // before the roll-ups are joined, the join meets their rows alone (10M, a count of spans over 5,000
  // tokens: 1.7 -> 1.0 s in DuckDB).
  const records = shared ? raw('ts') : inTraces === null ? base.sql : sql`(SELECT * FROM ${base.sql} WHERE ${inTraces})`;
  return {
    with: withClause(ctes, recursive),
    ctes,
    from: joins.length > 0 ? sql`${records} r ${joinSql(joins, ' ')}` : sql`${records} r`,
    where,
    order,
    rolled,
    own: new Map(read.map((n) => [n, base.metricColumn(n)])),
    ownSortKey,
    metric: ctx.metric,
  };
}

/** What an aggregate reads: the roll-up CTEs, the records with their joins, the filter, and each metric's value. */
export interface AggregateSource {
  readonly with: Sql;
  readonly from: Sql;
  readonly where: Sql;
  readonly rolled: readonly string[];
  /** A measured (or filtered) metric's value as search shows it. */
  metric(name: string): Sql;
}

/**
 * The matching records of a plan for an aggregate over them (query/aggregate-plan.ts): `measured`
 * metrics read own-else-rolled-up, as search shows them; `window` bounds created_at (and so the
 * segments read).
 */
export function aggregateSource(input: PlanInput, measured: readonly string[], window: TimeWindow | null): AggregateSource {
  const s = skeleton({ ...input, sort: null }, window, [], measured);
  return { with: s.with, from: s.from, where: s.where, rolled: s.rolled, metric: s.metric };
}

/** A planned statement, and the metrics it rolls up (for the plan's report of its steps). */
export interface Planned {
  sql: Sql;
  rolled: string[];
}

/**
 * Keys of one page in order (seq, and created_at as epoch µs), limit+1 rows to tell whether more
 * exist. The engine then fetches the page's columns by seq: wide text columns are read for 100 rows,
 * not for every row the sort looks at. The own value of every metric the query reads, and of those
 * in `alsoMetrics`, comes along (`ownMetrics`: name -> result column): a page showing only those
 * needs no second read.
 */
export function pageKeysQuery(
  input: PlanInput,
  limit: number,
  offset: number,
  window: TimeWindow | null = null,
  alsoColumns: readonly string[] = [],
  alsoMetrics: readonly string[] = [],
  locators = true,
  bound: number | null = null,
  rollTop: number | null = null,
  locate = false,
): Planned & { ownMetrics: Map<string, string>; rolledMetrics: Map<string, string> } {
  const s = skeleton(input, window, alsoMetrics, [], rollTop, locate);
  // A bound (sortKeysQuery: the k-th key) leaves out rows sorting after the page's last; DuckDB tests
  // it in the scan, and the sort then holds only the rows at or before it.
  const where =
    bound === null || s.ownSortKey === null
      ? s.where
      : sql`${s.where} AND ${s.ownSortKey} ${raw(input.sort!.ascending ? '<=' : '>=')} ${bound}::DOUBLE`;
  const also = alsoColumns.filter((c) => c !== 'seq' && c !== 'created_at' && c !== 'updated_at').map((c) => sql`, r.${ident(c)}`);
  for (const col of s.own.values()) also.push(sql`, r.${ident(col)}`);
  // The roll-ups the query computes for its filter or sort come along too (`rolledMetrics`: name ->
  // result column): the page shows them without a second roll-up over the page's traces.
  const rolledMetrics = new Map(s.rolled.map((n, i) => [n, `rv${i}`]));
  s.rolled.forEach((_, i) => {
    also.push(sql`, ru.${ident(`v${i}`)} AS ${ident(`rv${i}`)}`);
  });
  // Without `locators` (a page shown from this query alone, fetching nothing) seq and created_at are
  // not decoded for every row the query looks at.
  // With `locate`, where each row is (a stored row's file and row number there, a memory row's seq):
  // the page's columns are then read from those rows alone (locatedFetchQuery, created_at among them
  // when shown), a stored row's seq and created_at not decoded for every row the query looks at (at
  // 10M spans, 289 -> 202 ms of a narrow keys query over 2 segments).
  const head = raw(
    locate
      ? 'r.loc_seq AS seq, epoch_us(r.loc_created) AS c, r.loc_row, r.loc_file'
      : locators
        ? 'r.seq, epoch_us(r.created_at) AS c'
        : 'NULL AS seq, NULL AS c',
  );
  const q = sql`${s.with}SELECT ${head}${joinSql(also, '')} FROM ${s.from} WHERE ${where} ORDER BY ${s.order} LIMIT ${limit + 1} OFFSET ${offset}`;
  return { sql: q, rolled: s.rolled, ownMetrics: s.own, rolledMetrics };
}

/**
 * The first n matching records by a metric's own value alone (`v`, NULLs last), with when each was
 * created (`c`, epoch µs); null when the sort is not a metric's own value. Reads created_at, the key
 * and the filter's columns only: no id (the keys query's tie-break), whose strings cost most of a
 * sorted scan.
 */
export function sortKeysQuery(input: PlanInput, n: number): Sql | null {
  const s = skeleton(input);
  if (s.ownSortKey === null) return null;
  const dir = raw(input.sort!.ascending ? 'ASC' : 'DESC');
  return sql`${s.with}SELECT epoch_us(r.created_at) AS c, ${s.ownSortKey} AS v FROM ${s.from} WHERE ${s.where} ORDER BY v ${dir} NULLS LAST LIMIT ${n}`;
}

/**
 * When matching records were created: the created_at (epoch µs, `cs`) of up to k of them, the first k
 * in a time-ordered page's order (then every row of the page was created at one of those instants,
 * ties at the k-th included), or any k for other sorts (then fewer than k means all of them). A window
 * of ranges holding those instants holds the page. Reads only the columns the filter tests and
 * created_at, never the page's id columns.
 */
export function matchTimesQuery(input: PlanInput, k: number): Planned {
  const order = timeOrdered(input.sort);
  const s = skeleton(input);
  // Ties on created_at need no id order: a window keeps every row at an instant it holds.
  const orderBy = raw(order ? ` ORDER BY r.created_at ${order.ascending ? 'ASC' : 'DESC'}` : '');
  return {
    sql: sql`${s.with}SELECT list(DISTINCT c) AS cs, count(*) AS n
      FROM (SELECT epoch_us(r.created_at) AS c FROM ${s.from} WHERE ${s.where}${orderBy} LIMIT ${k})`,
    rolled: s.rolled,
  };
}

/**
 * Matching records within each of `ranges` (inclusive created_at, epoch µs): rows (g = the range's
 * index, n). The planner's estimate of how many records a filter admits and how widely they spread
 * (src/query/exec/match-estimate.ts). One count per range, each its own window: DuckDB skips the row
 * groups outside it (an OR of the ranges in one scan cost more than a count of everything, at 1M).
 */
export function sampleQuery(input: PlanInput, ranges: readonly (readonly [number, number])[], top = 0): Planned {
  const rolled = new Set<string>();
  const parts = ranges.map((range, i) => {
    // With `top`, a sort by a metric's own value also returns the range's `top` best keys (`top`,
    // best first): a best key many rows share shows there.
    const sorted = top > 0 && input.sort?.column.metric !== undefined ? skeleton(input, { ranges: [range] }) : null;
    const key = sorted?.ownSortKey ?? null;
    const s = sorted !== null && key !== null ? sorted : skeleton({ ...input, sort: null }, { ranges: [range] });
    for (const n of s.rolled) rolled.add(n);
    const best = key === null ? EMPTY : sql`, ${raw(input.sort!.ascending ? 'min' : 'max')}(${key}, ${int(top)}) AS top`;
    return sql`(${s.with}SELECT ${int(i)} AS g, count(*) AS n${best} FROM ${s.from} WHERE ${s.where})`;
  });
  return { sql: joinSql(parts, ' UNION ALL '), rolled: [...rolled] };
}

/**
 * Ranges covering the instants `times`: neighbours (in time order) join one range when a row group
 * holds both, so a range never reaches into row groups that hold none of them.
 */
export function timeRanges(times: readonly number[], rowGroups: readonly (readonly [number, number, number])[]): [number, number][] {
  const sorted = [...times].sort((a, b) => a - b);
  const out: [number, number][] = [];
  for (const t of sorted) {
    const last = out[out.length - 1];
    if (last && rowGroups.some((g) => g[0] <= last[1] && t <= g[1])) last[1] = t;
    else out.push([t, t]);
  }
  return out;
}

/** Columns of the rows with these seqs (timestamps as epoch µs); `createdRange` lets DuckDB skip row groups. */
export function fetchQuery(
  source: Source,
  columns: readonly string[] | '*',
  seqs: readonly number[],
  createdRange: [number, number] | null,
): Sql {
  const select =
    columns === '*'
      ? raw('r.* REPLACE (epoch_us(r.created_at) AS created_at, epoch_us(r.updated_at) AS updated_at)')
      : joinSql(
          columns.map((c) => (c === 'created_at' || c === 'updated_at' ? sql`epoch_us(r.${ident(c)}) AS ${ident(c)}` : sql`r.${ident(c)}`)),
        );
  // One placeholder per seq (a page holds at most 1,001): DuckDB pushes the IN list into the scan, where
  // list_contains over a list parameter is tested per row after every column is decoded.
  let where = seqs.length === 0 ? raw('false') : sql`r.seq IN (${joinSql(seqs.map((q) => sql`${q}::BIGINT`))})`;
  if (createdRange) where = sql`${where} AND r.created_at BETWEEN ${at(createdRange[0])} AND ${at(createdRange[1])}`;
  return sql`SELECT ${select} FROM ${source.sql} r WHERE ${where}`;
}

/**
 * Columns of rows of one segment file by their row numbers there (from a keys query with `locate`),
 * with each row's number (loc_row): DuckDB reads only the row groups holding them. The rows are live
 * (the keys query tested that).
 */
export function locatedFetchQuery(file: string, columns: readonly string[], rows: readonly number[]): Sql {
  // Only what the page shows: a row is matched to its key by loc_row (its seq is not decoded).
  const select = columns.map((c) =>
    c === 'created_at' || c === 'updated_at' ? sql`epoch_us(${ident(c)}) AS ${ident(c)}, ` : sql`${ident(c)}, `,
  );
  const at = joinSql(rows.map((n) => sql`${n}::BIGINT`));
  return sql`SELECT ${joinSql(select, '')}file_row_number AS loc_row FROM read_parquet(${file}, hive_partitioning = false) WHERE file_row_number IN (${at})`;
}

export function countQuery(input: PlanInput): Planned {
  const s = skeleton({ ...input, sort: null });
  return { sql: sql`${s.with}SELECT count(*) AS n FROM ${s.from} WHERE ${s.where}`, rolled: s.rolled };
}

/**
 * Everything a delete removes: the matching records and all their descendants (a span's subtree; a
 * trace's spans; a session's traces and spans), with the parent of each removed record.
 */
export function deleteQuery(input: PlanInput): Sql {
  const s = skeleton({ ...input, sort: null });
  const d = input.descendants([]);
  const ctes = [
    ...s.ctes,
    sql`hit AS (SELECT r.id, r.seq, r.parent_id FROM ${s.from} WHERE ${s.where})`,
    sql`s AS (SELECT id, seq, parent_id, trace_id, session_id FROM ${d.sql})`,
  ];
  let tail: Sql;
  if (input.level === 'span') {
    ctes.push(
      sql`sub(id, seq, parent_id) AS (SELECT id, seq, parent_id FROM hit UNION SELECT s.id, s.seq, s.parent_id FROM sub JOIN s ON s.parent_id = sub.id)`,
    );
    tail = sql`SELECT id, seq, parent_id FROM sub`;
  } else {
    const link = raw(input.level === 'trace' ? 's.trace_id' : 's.session_id');
    tail = sql`SELECT id, seq, parent_id FROM hit UNION ALL SELECT s.id, s.seq, s.parent_id FROM s WHERE ${link} IN (SELECT id FROM hit)`;
  }
  return sql`${withClause(ctes, true)}${tail}`;
}

/**
 * Matching records whose seq lies in [from, to] (id, seq, trace_id, type, in seq order), for work
 * done record by record over a filter (scoring): the same filter a count at this level applies.
 * `types`: only records of these types. `unscored`: only records lacking a value of at least one
 * of these metrics (their `extra` comes along, where a scorer's failure is kept). `whole`: every
 * stored column instead (timestamps as epoch µs, as a lookup by id reads them), so the caller needs
 * no second read of the records.
 */
export function matchRowsQuery(
  input: PlanInput,
  from: number,
  to: number,
  types: readonly string[] | null,
  unscored: readonly string[] = [],
  whole = false,
): Sql {
  const s = skeleton({ ...input, sort: null }, null, unscored);
  let where = sql`${s.where} AND r.seq BETWEEN ${from}::BIGINT AND ${to}::BIGINT`;
  if (types !== null) where = sql`${where} AND r.type IN (SELECT unnest(${[...types]}::VARCHAR[]))`;
  if (unscored.length > 0)
    where = sql`${where} AND (${joinSql(
      unscored.map((m) => sql`r.${ident(s.own.get(m)!)} IS NULL`),
      ' OR ',
    )})`;
  const cols = whole
    ? raw(COLUMN_NAMES.map((c) => (c === 'created_at' || c === 'updated_at' ? `epoch_us(r.${c}) AS ${c}` : `r.${c}`)).join(', '))
    : raw(`r.id, r.seq, r.trace_id, r.type${unscored.length > 0 ? ', r.extra' : ''}`);
  return sql`${s.with}SELECT ${cols} FROM ${s.from} WHERE ${where} ORDER BY r.seq`;
}

/**
 * A span delete's matching spans (the first of its two steps), with has_children as read: only those
 * with children need the second step (subtreeQuery), which reads every span's links. A delete of leaf
 * spans (the common case: llm spans) then reads only the columns its filter tests. Without `links`,
 * only seq and has_children (record-delete.ts then finds the leaves' parents in the child indexes).
 */
export function deleteHitsQuery(input: PlanInput, links = true): Sql {
  const s = skeleton({ ...input, sort: null });
  // Without links (id, parent_id) the read decodes no id string: most of the cost at 10M spans.
  const cols = raw(links ? 'r.id, r.seq, r.parent_id, r.has_children' : 'r.seq, r.has_children');
  return sql`${s.with}SELECT ${cols} FROM ${s.from} WHERE ${s.where}`;
}

/** Every span below the spans `ids` (not those themselves), with its parent: the rest of a span delete. */
export function subtreeQuery(descendants: PlanInput['descendants'], ids: readonly string[]): Sql {
  const d = descendants([]);
  const ctes = [
    sql`s AS (SELECT id, seq, parent_id FROM ${d.sql})`,
    sql`sub(id, seq, parent_id) AS (SELECT id, seq, parent_id FROM s WHERE parent_id IN (SELECT unnest(${[...ids]}::VARCHAR[]))
        UNION SELECT s.id, s.seq, s.parent_id FROM sub JOIN s ON s.parent_id = sub.id)`,
  ];
  return sql`${withClause(ctes, true)}SELECT id, seq, parent_id FROM sub`;
}

/** Validates the sort clause (column_id or name; ascending defaults to true). Null means the default order. */
export function validateSort(
  sort: { column_id?: string | null; name?: string | null; ascending?: boolean | null; sort_type?: string | null } | null | undefined,
  level: Level,
  metrics?: (n: string) => MetricInfo | undefined,
): SortSpec | null {
  if (!sort) return null;
  const id = sort.column_id ?? sort.name;
  const field = sort.column_id != null ? 'column_id' : 'name';
  if (id == null)
    throw invalidFields(
      ['body', 'sort'],
      ['column_id', 'name'],
      'Field required: the column to sort by (column_id, or its alias name)',
      'missing',
    );
  if (sort.sort_type != null && sort.sort_type !== 'column')
    throw invalid(['body', 'sort', 'sort_type'], "Input should be 'column'", sort.sort_type, 'literal_error');
  const column = resolveColumn(id, level, metrics);
  if (!column) {
    const hint = suggestColumn(id, level);
    throw invalid(['body', 'sort', field], `unknown column "${id}" for ${level}s${hint ? `; did you mean "${hint}"?` : ''}`, id);
  }
  if (!column.sortable) throw invalid(['body', 'sort', field], `column ${column.id} cannot be sorted (it holds several values)`, id);
  return { column, ascending: sort.ascending ?? true };
}

/**
 * Rows of `rowGroups` ([min, max, rows] of created_at) on the ordered side of the bound `us`: a group the
 * bound cuts counts by the share of its range past it, its rows taken as spread evenly over the range.
 * chooseWindow places its bound by the same assumption, the other way round.
 */
export function rowsPast(rowGroups: readonly (readonly [number, number, number])[], us: number, ascending: boolean): number {
  let n = 0;
  for (const [lo, hi, rows] of rowGroups) {
    const past = ascending ? Math.min(hi, us) - lo : hi - Math.max(lo, us);
    if (past >= 0) n += hi > lo ? rows * Math.min(1, past / (hi - lo)) : rows;
  }
  return n;
}

/**
 * A created_at bound holding about `want` rows of the ordered side, from the row groups' min/max (the
 * last group taken in part, as rowsPast counts it).
 * Memory tables count as row groups when their created_at ranges are known (`memGroups`; a source
 * then leaves out those wholly outside the window), else their rows always count. Null when the window
 * would cover everything anyway.
 */
export function chooseWindow(
  rowGroups: readonly (readonly [number, number, number])[],
  memRows: number,
  want: number,
  ascending: boolean,
  memGroups: readonly (readonly [number, number, number])[] | null = null,
): TimeWindow | null {
  const total = rowGroups.reduce((n, g) => n + g[2], 0) + memRows;
  if (want >= total) return null;
  const sorted = [...rowGroups, ...(memGroups ?? [])].sort((a, b) => (ascending ? a[0] - b[0] : b[1] - a[1]));
  let rows = memGroups ? 0 : memRows;
  let bound = ascending ? -Infinity : Infinity;
  for (const g of sorted) {
    const short = want - rows;
    rows += g[2];
    const last = rows >= want;
    // The last group reached is taken in part: the bound where its rows, taken as spread evenly over
    // its range, give the rows still wanted. A segment's row groups hold their rows in created_at
    // order, so DuckDB skips the group's other vectors (1M, the newest 16,771-row group with a text
    // filter: 31-45 ms whole, 14-28 with a bound 4,096 rows in). A window that proves short is widened.
    const part = last && g[2] > 0 ? Math.max(0, short) / g[2] : 1;
    const edge = ascending ? Math.ceil(g[0] + (g[1] - g[0]) * part) : Math.floor(g[1] - (g[1] - g[0]) * part);
    bound = ascending ? Math.max(bound, edge) : Math.min(bound, edge);
    if (last) break;
  }
  if (!Number.isFinite(bound)) return null;
  return { op: ascending ? '<=' : '>=', us: bound };
}
