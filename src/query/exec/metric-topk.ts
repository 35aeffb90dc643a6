// Strategy: a metric-sorted page without a scan of every row group. Where each segment has its top
// lists file (storage/indexes/top-lists.ts: its best rows by every metric), the page's keys query runs
// over those files' rows of the page's list, read in place, plus the memory tables and the small
// segments without lists (read as they are), with the usual dead-row, retention and filter tests.
// Elsewhere each segment's best rows are listed once by a sorted read (topk-cache.ts) and passed to the
// same query. Ids and links of the page come from the lists: nothing but the memory tables, the small
// segments and the lists is read.
// Applies when: the sort is a metric's own value (no roll-up), the page ends within the lists, and the
// filter tests only listed columns and metrics' own values (topKApplies); a filter on name or tags only
// where every list is a file keeping them (they are tested there, in place).
// Returns: the page's keys when its last row (the limit+1-th) is strictly better than every row left
// out; 'too few' when the lists cannot hold enough matches (topk-bound.ts), 'costly' when passing the
// candidates of sorted reads would cost more than the keys query, 'unlisted' when the filter tests
// name or tags and some list is not a file keeping them; else null. Either way but the first, the
// caller runs the full keys query.
// Assumes: a segment's rows beyond its list are no better than the list's last row, and rows dropped
// from the candidates are no better than the first dropped one.
import type { Row, SqlRunner } from '../../db/database.js';
import { ident, int, joinSql, raw, sql, type Sql } from '../sql.js';
import { metricsOf } from '../filter-ast.js';
import { columnsOf } from '../match-facts.js';
import { pageKeysQuery, type PlanInput } from '../plan.js';
import type { SegmentEntry } from '../../storage/manifest/manifest.js';
import type { Scope } from '../../storage/record-store.js';
import type { Snapshot } from '../../storage/snapshot/snapshot.js';
import { listNumber, TOP_LIST_FILTER_COLUMNS, TOP_LIST_ROWS, topListsPath } from '../../storage/indexes/top-lists.js';
import { TAG_LIST_COLUMN, TAG_SET_COLUMN } from '../../record/record-columns.js';
import { listedMatchBound, may } from './topk-bound.js';
import { CACHED_COLUMNS, TOP_ROWS, type TopBound, type TopKCache, type TopList, type TopRow } from './topk-cache.js';

const CACHED = new Set<string>(CACHED_COLUMNS);
/** Filter columns the lists' files keep but the cache's rows do not (their filter ids are their names). */
const FILE_FILTERED = new Set<string>(TOP_LIST_FILTER_COLUMNS);
/** Whether the filter tests a column only the lists' files keep (lists read into memory cannot serve it). */
export const testsFileColumns = (plan: PlanInput): boolean => [...columnsOf(plan.filter)].some((id) => FILE_FILTERED.has(id));
/** Candidates kept for one page: enough for filters that drop most of them, few enough to pass cheaply. */
export const MAX_CANDIDATES = 4096;

export interface TopKPage {
  rows: Row[];
  /** Whether each row carries its place (loc_file and loc_row for a stored row): the page's other columns are read from those rows alone. */
  located?: boolean;
  ownMetrics: Map<string, string>;
  /** Listed rows the query looked at (for the plan's report). */
  candidates: number;
}

/** Byte order of UTF-8 (DuckDB's VARCHAR order); UTF-16 order agrees on ASCII. */
function compareText(a: string, b: string): number {
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(a) && /^[\x00-\x7f]*$/.test(b)) return a < b ? -1 : a > b ? 1 : 0;
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** Negative when (v, id) comes first in the page's order. */
function compareKeys(av: number, aid: string, bv: number, bid: string, ascending: boolean): number {
  // NaN is never ordered here: its row is never taken as strictly better, so the full query decides.
  if (Number.isNaN(av) || Number.isNaN(bv)) return 0;
  const c = av !== bv ? (av < bv ? -1 : 1) : compareText(aid, bid);
  return ascending ? c : -c;
}

/** Whether the page's plan can be answered from the lists: an own (not rolled-up) sort metric and a filter over listed columns. */
export function topKApplies(plan: PlanInput, offset: number, limit: number, listRows = TOP_ROWS): boolean {
  const metric = plan.sort?.column.metric;
  if (metric === undefined || offset + limit + 1 > listRows) return false;
  // A filter on a column the lists do not hold runs the full query: reading the candidates' rows from
  // their files costs about as much (they sit in every row group, so every page of the column is
  // decompressed). The lists hold every metric's own value (a roll-up is ruled out below).
  for (const id of columnsOf(plan.filter)) if (!CACHED.has(id) && !FILE_FILTERED.has(id) && !id.startsWith('metrics/')) return false;
  // Only a plan that reads the metric's own value: a roll-up needs every descendant.
  return pageKeysQuery(plan, limit, offset).rolled.length === 0;
}

/**
 * Segments of the scope whose list for the page's sort is not yet `state`: 'asked' (never asked for: a
 * list costs a sorted read of its whole segment, so a question asked once is answered sooner by one
 * keys query over everything) or 'read' (asked for, still queued or being read).
 */
export function listsNot(cache: TopKCache, snap: Snapshot, scope: Scope, plan: PlanInput, state: 'asked' | 'read'): SegmentEntry[] {
  const metricId = snap.metricIds[plan.sort!.column.metric!];
  const ascending = plan.sort!.ascending;
  const has = state === 'asked' ? cache.asked.bind(cache) : cache.ready.bind(cache);
  return snap.segmentsFor(scope).filter((s) => !has(snap, s, metricId, ascending));
}

/**
 * Queues the lists of `segments` for the page's sort, then returns the work that reads them one at a
 * time on a later snapshot (in the background: one segment's sorted read at a time competes with the
 * questions asked meanwhile), and how many it read.
 */
export function listReads(
  cache: TopKCache,
  snap: Snapshot,
  scope: Scope,
  segments: readonly SegmentEntry[],
  plan: PlanInput,
): (later: Snapshot) => Promise<number> {
  const metric = plan.sort!.column.metric!;
  const ascending = plan.sort!.ascending;
  cache.queue(snap, segments, snap.metricIds[metric], ascending);
  const paths = new Set(segments.map((s) => snap.path(s)));
  return async (later) => {
    let n = 0;
    try {
      // Only those still in the later snapshot (a merge may have replaced some meanwhile).
      for (const s of later.segmentsFor(scope)) {
        if (!paths.has(later.path(s))) continue;
        await cache.list(later, s, later.metricIds[metric], ascending);
        n++;
      }
    } finally {
      // A read that failed ends the work: the lists it did not start are asked for again by a later page.
      cache.dequeue(snap, segments, snap.metricIds[metric], ascending);
    }
    return n;
  };
}

/** `memRows`: rows of the scope in memory tables (the attempt reads them as they are; each may match). */
export async function metricTopK(
  db: SqlRunner,
  cache: TopKCache,
  snap: Snapshot,
  scope: Scope,
  plan: PlanInput,
  limit: number,
  offset: number,
  also: readonly string[],
  alsoMetrics: readonly string[],
  memRows: number,
  locators = false,
): Promise<TopKPage | 'too few' | 'costly' | 'unlisted' | null> {
  const metric = plan.sort!.column.metric!;
  const ascending = plan.sort!.ascending;
  cache.prune(snap);
  const metricId = snap.metricIds[metric];
  // Small segments without a list are read whole beside the lists, as memory tables are.
  const isWhole = (s: SegmentEntry) => metricId !== undefined && s.metrics.includes(metricId) && cache.whole(s);
  const whole = snap.segmentsFor(scope).filter(isWhole);
  const segments = snap.segmentsFor(scope).filter((s) => !isWhole(s));
  const fileColumns = testsFileColumns(plan);
  if (metricId !== undefined && cache.rows === TOP_LIST_ROWS) {
    const listed = segments.filter((s) => s.metrics.includes(metricId));
    if (listed.length > 0 && listed.every((s) => s.top_lists === true && (!fileColumns || s.top_list_filters === true))) {
      const page = await fromFiles(
        db,
        cache,
        snap,
        scope,
        { plan, limit, offset, also, alsoMetrics, locators },
        { listed, whole },
        metricId,
        fileColumns,
      );
      // A file that cannot be read: the lists come from the segments (TopKCache reads them sorted).
      if (page !== null) return page;
    }
  }
  // The cache's rows cannot be tested on name or tags: the full keys query answers.
  if (fileColumns) return 'unlisted';
  const unlisted = memRows + whole.reduce((n, s) => n + s.rows, 0);
  const scopeRows = unlisted + segments.reduce((n, s) => n + s.rows, 0);
  // Reading the lists costs about what passing a list's rows does (1M, cold: 20-25 ms for two).
  const costly = (needed: number) => (needed + cache.rows) * cache.rowsPerCandidate > scopeRows;
  // The other metrics a filter tests (their listed values come with the lists).
  const ids = [...metricsOf(plan.filter)].flatMap((m) => (m === metric || snap.metricIds[m] === undefined ? [] : [snap.metricIds[m]!]));
  const k = offset + limit + 1;
  if (costly(k)) return 'costly';
  const lists = await Promise.all(segments.map((s) => cache.list(snap, s, metricId, ascending, ids)));
  // Values a list's file could not give, or a NaN value (they go to DuckDB with NaN standing for null:
  // listedRows): the full query answers.
  if (lists.some((l) => ids.some((id) => l.missing?.has(id)))) return null;
  if (ids.length > 0 && lists.some((l) => l.rows.some((r) => ids.some((id) => Number.isNaN(r.m[id]))))) return null;
  const total = lists.reduce((n, l) => n + l.rows.length, 0);
  // The bound stops counting at k: a cheap test before the lists are merged.
  if (listedMatchBound(plan.filter, lists, k, snap.metricIds) + unlisted < k) return 'too few';
  const needed = fillsWithin(plan, lists, k - unlisted, snap.metricIds);
  if (needed === null) return 'too few';
  // Few candidates first (cheap to pass and scan), at least as many as the filter needs; more only when
  // it left too few of them.
  const first = Math.min(Math.max(8 * k, cache.rows / 4, needed), MAX_CANDIDATES);
  for (const cap of first < total ? [first, MAX_CANDIDATES] : [MAX_CANDIDATES]) {
    const page = await attempt(db, snap, scope, plan, limit, offset, also, alsoMetrics, { segments, whole }, pick(lists, cap, ascending));
    if (typeof page !== 'number') return page;
    // Too few matched: more candidates help only if, matching at the same rate, they would fill the page.
    if (page >= 0 && (page * Math.min(total, MAX_CANDIDATES)) / cap < k) return null;
  }
  return null;
}

/** What a page asks: its plan, its rows, and the columns and metrics its keys carry. */
interface PageAsk {
  plan: PlanInput;
  limit: number;
  offset: number;
  also: readonly string[];
  alsoMetrics: readonly string[];
  /** Whether the page fetches columns its keys do not carry: they then say where each row is. */
  locators?: boolean;
}

/**
 * The page's keys query over the listed rows where they are stored: each segment's top lists file,
 * read for the page's list alone (its rows sit together: DuckDB reads one or two row groups of each
 * file), beside the memory tables and the small segments read whole. The filter runs in DuckDB, and
 * nothing is read into JavaScript but the page and each file's last listed rows (1M spans, first ask:
 * 47 ms when the lists were read whole into the cache and passed back as parameters). 'too few' when
 * the page does not end strictly before every truncated list's last row (or the lists fall short);
 * null when a file cannot be read.
 */
async function fromFiles(
  db: SqlRunner,
  cache: TopKCache,
  snap: Snapshot,
  scope: Scope,
  { plan, limit, offset, also, alsoMetrics, locators }: PageAsk,
  { listed, whole }: { listed: SegmentEntry[]; whole: SegmentEntry[] },
  metricId: number,
  fileColumns: boolean,
): Promise<TopKPage | 'too few' | null> {
  const metric = plan.sort!.column.metric!;
  const ascending = plan.sort!.ascending;
  const number = listNumber(metricId, ascending);
  const list = int(number);
  const files = listed.map((s) => topListsPath(snap.path(s)));
  // Rows each file's lists keep (older files: TOP_LIST_ROWS).
  const depth = listed.map((s) => s.top_list_rows ?? TOP_LIST_ROWS);
  const read = (i: number) => sql`read_parquet(${files[i]!}, hive_partitioning = false)`;
  // Files that keep their rows' places in their segments let a page that fetches read only its rows.
  const locate = locators === true && listed.every((s) => s.top_list_places === true);
  const union = (parts: Sql[]) => joinSql(parts, ' UNION ALL ');
  // Each list's rows from its last kept one (one more tells a truncated list): its last kept row
  // bounds every row of its segment left out. Read once per file and list (files never change).
  const ends = async (): Promise<TopBound[]> => {
    const keys = listed.map((s, i) => `${snap.path(s)}\n${number}\n${depth[i]}`);
    const unknown = files.flatMap((_, i) => (cache.ends.has(keys[i]!) ? [] : [i]));
    if (unknown.length > 0) {
      const rows = await db.all(
        sql`SELECT s, rank, id, v FROM (${union(
          unknown.map(
            (i) =>
              sql`SELECT ${int(i)} AS s, rank, id, ${ident(`m${metricId}`)} AS v FROM ${read(i)} WHERE list = ${list} AND rank >= ${int(depth[i]!)}`,
          ),
        )})`,
      );
      for (const i of unknown) {
        const mine = rows.filter((r) => Number(r['s']) === i);
        const last = mine.find((r) => Number(r['rank']) === depth[i]);
        const truncated = last !== undefined && mine.some((r) => Number(r['rank']) > depth[i]!);
        cache.ends.set(keys[i]!, truncated ? { v: Number(last['v']), id: String(last['id']) } : null);
      }
    }
    return keys.flatMap((k) => {
      const b = cache.ends.get(k);
      return b ? [b] : [];
    });
  };
  const base: PlanInput['base'] = (metrics) => {
    const parts = listed.map((seg, i) => {
      const cols = CACHED_COLUMNS.map((c) =>
        c === 'created_at'
          ? sql`make_timestamp(c) AS created_at`
          : c === 'project_id'
            ? sql`${seg.project_id}::VARCHAR AS project_id`
            : c === 'run_id'
              ? sql`${seg.run_id}::VARCHAR AS run_id`
              : ident(c),
      );
      const ms = metrics.map((m, j) => {
        const id = snap.metricIds[m];
        return id !== undefined && seg.metrics.includes(id)
          ? sql`${ident(`m${id}`)} AS ${ident(`mx${j}`)}`
          : sql`NULL::DOUBLE AS ${ident(`mx${j}`)}`;
      });
      const places = locate
        ? [sql`r AS loc_row, ${snap.path(seg)}::VARCHAR AS loc_file, seq AS loc_seq, make_timestamp(c) AS loc_created`]
        : [];
      // Tags as a filter reads them from memory tables (record-columns.ts: tag_list, the list itself).
      const filtered = fileColumns
        ? [...TOP_LIST_FILTER_COLUMNS.map((c) => ident(c)), raw(`NULL::VARCHAR AS ${TAG_SET_COLUMN}, tags AS ${TAG_LIST_COLUMN}`)]
        : [];
      return sql`SELECT ${joinSql([...cols, ...filtered, ...ms, ...places])} FROM ${read(i)} WHERE list = ${list} AND rank <= ${int(depth[i]!)}`;
    });
    const columns = fileColumns ? [...CACHED_COLUMNS, ...TOP_LIST_FILTER_COLUMNS, TAG_SET_COLUMN, TAG_LIST_COLUMN] : CACHED_COLUMNS;
    return snap.sourceWith(scope, metrics, columns, union(parts), whole, locate);
  };
  // Only the sort metric's own value is read here; other metrics a page shows are fetched afterwards.
  const q = pageKeysQuery(
    { ...plan, base },
    limit,
    offset,
    null,
    also,
    alsoMetrics.filter((m) => m === metric),
    true,
    null,
    null,
    locate,
  );
  let rows: Row[];
  let bounds: TopBound[];
  try {
    [rows, bounds] = await Promise.all([db.all(q.sql), ends()]);
  } catch {
    // Only an index: a file that cannot be read leaves the page to the keys query.
    return null;
  }
  // Short of the page, or ending at a row without the value: rows the lists leave out (those beyond a
  // list, those without the value) could belong.
  if (rows.length <= limit) return 'too few';
  const last = rows[rows.length - 1]!;
  const lastV = last[q.ownMetrics.get(metric)!];
  if (lastV === null || lastV === undefined) return 'too few';
  for (const b of bounds) if (compareKeys(Number(lastV), String(last['id']), b.v, b.id, ascending) >= 0) return 'too few';
  return { rows, ownMetrics: q.ownMetrics, candidates: depth.reduce((a, b) => a + b, 0), located: locate };
}

/**
 * How many of the best listed rows (the lists merged) a page needs so that `need` of them may match
 * the filter; null when it cannot be served from the lists: fewer than `need` of the first
 * MAX_CANDIDATES may match, or the `need`-th is not strictly better than a truncated list's last row
 * (rows beyond it could come first). `need`: the page's rows less those unlisted rows could give.
 * Exact enough to skip attempts bound to fail: a row that matches always may.
 */
function fillsWithin(plan: PlanInput, lists: readonly TopList[], need: number, metricIds: Readonly<Record<string, number>>): number | null {
  if (need <= 0) return 0;
  const ascending = plan.sort!.ascending;
  const { kept } = pick(lists, MAX_CANDIDATES, ascending);
  const cut = lists.filter((l) => l.truncated && l.rows.length > 0).map((l) => l.rows[l.rows.length - 1]!);
  let n = 0;
  for (const [i, { row }] of kept.entries()) {
    if (plan.filter !== null && !may(plan.filter, row, metricIds)) continue;
    if (++n < need) continue;
    return cut.every((b) => compareKeys(row.v, row.id, b.v, b.id, ascending) < 0) ? i + 1 : null;
  }
  return null;
}

/**
 * The best `cap` listed rows of all segments (merging the lists, each best first), and for each segment
 * the best of its rows left out: its first list row not taken, or else its list's last when the
 * segment holds more (rows beyond a list are no better than its last).
 */
function pick(lists: readonly TopList[], cap: number, ascending: boolean): { kept: { row: TopRow; seg: number }[]; bounds: TopRow[] } {
  const at = lists.map(() => 0);
  const kept: { row: TopRow; seg: number }[] = [];
  while (kept.length < cap) {
    let best = -1;
    for (let s = 0; s < lists.length; s++) {
      const r = lists[s]!.rows[at[s]!];
      if (r === undefined) continue;
      const b = best < 0 ? undefined : lists[best]!.rows[at[best]!]!;
      if (b === undefined || compareKeys(r.v, r.id, b.v, b.id, ascending) < 0) best = s;
    }
    if (best < 0) break;
    kept.push({ row: lists[best]!.rows[at[best]!]!, seg: best });
    at[best]!++;
  }
  const bounds: TopRow[] = [];
  lists.forEach((l, s) => {
    if (at[s]! < l.rows.length) bounds.push(l.rows[at[s]!]!);
    else if (l.truncated) bounds.push(l.rows[l.rows.length - 1]!);
  });
  return { kept, bounds };
}

async function attempt(
  db: SqlRunner,
  snap: Snapshot,
  scope: Scope,
  plan: PlanInput,
  limit: number,
  offset: number,
  also: readonly string[],
  alsoMetrics: readonly string[],
  { segments, whole }: { segments: SegmentEntry[]; whole: SegmentEntry[] },
  { kept, bounds }: ReturnType<typeof pick>,
): Promise<TopKPage | number> {
  const metric = plan.sort!.column.metric!;
  const ascending = plan.sort!.ascending;
  // Values go as DOUBLE lists (exact), beside the JSON of the other columns: the sort metric's, and
  // each other metric's the query reads (a filter's), by metric id (none for a metric no segment has).
  const values = kept.map(({ row }) => row.v);
  const base: PlanInput['base'] = (metrics) => {
    const json = JSON.stringify(kept.map(({ row, seg }) => candidate(row, segments[seg]!)));
    const others = metrics.map((m) => {
      const id = snap.metricIds[m];
      return m === metric || id === undefined ? null : kept.map(({ row }) => row.m[id] ?? null);
    });
    return snap.sourceWith(scope, metrics, CACHED_COLUMNS, listedRows(json, values, metrics, metric, others), whole);
  };
  const topPlan: PlanInput = { ...plan, base };
  // Only the sort metric's own value is listed; other metrics a page shows are fetched afterwards.
  const q = pageKeysQuery(
    topPlan,
    limit,
    offset,
    null,
    also,
    alsoMetrics.filter((m) => m === metric),
  );
  const rows = await db.all(q.sql);
  // Not enough: at most how many rows matched (when the page is short), else -1.
  if (rows.length <= limit) return offset + rows.length;
  const last = rows[rows.length - 1]!;
  const lastV = last[q.ownMetrics.get(metric)!];
  if (lastV === null || lastV === undefined) return -1;
  const lastId = String(last['id']);
  for (const b of bounds) if (compareKeys(Number(lastV), lastId, b.v, b.id, ascending) >= 0) return -1;
  return { rows, ownMetrics: q.ownMetrics, candidates: kept.length };
}

/** A listed row as JSON for DuckDB, with its segment's project and run. */
function candidate(r: TopRow, s: SegmentEntry): Record<string, unknown> {
  const { v: _v, ...rest } = r;
  return { ...rest, project_id: s.project_id, run_id: s.run_id };
}

const JSON_SHAPE = JSON.stringify([
  {
    seq: 'BIGINT',
    c: 'BIGINT',
    id: 'VARCHAR',
    type: 'VARCHAR',
    project_id: 'VARCHAR',
    run_id: 'VARCHAR',
    session_id: 'VARCHAR',
    trace_id: 'VARCHAR',
    parent_id: 'VARCHAR',
    has_children: 'BOOLEAN',
    status_code: 'INTEGER',
    model: 'VARCHAR',
  },
]);

/**
 * The listed rows (JSON, and their values: parameters) as a SELECT of CACHED_COLUMNS, then `metrics`
 * as mx0, mx1...: the sort metric's values, `others[i]` for the others (null: no value listed).
 */
function listedRows(
  json: string,
  values: readonly number[],
  metrics: readonly string[],
  metric: string,
  others: readonly ((number | null)[] | null)[],
): Sql {
  const cols = CACHED_COLUMNS.map((c) => (c === 'created_at' ? sql`make_timestamp(u.c) AS created_at` : sql`u.${ident(c)} AS ${ident(c)}`));
  const ms = metrics.map((m, i) =>
    m === metric
      ? sql`v AS ${ident(`mx${i}`)}`
      : others[i]
        ? sql`${ident(`o${i}`)} AS ${ident(`mx${i}`)}`
        : sql`NULL::DOUBLE AS ${ident(`mx${i}`)}`,
  );
  // Unnests in one SELECT pair up by position. A list is bound without its nulls' positions lost:
  // NaN stands for null (a listed value is never NaN: metricTopK gives up on one), turned back here.
  const lists = others.flatMap((o, i) =>
    o ? [sql`, unnest(${o.map((x) => (x === null ? Number.NaN : x))}::DOUBLE[]) AS ${ident(`r${i}`)}`] : [],
  );
  const nulls = others.flatMap((o, i) => (o ? [sql`, nullif(${ident(`r${i}`)}, 'NaN'::DOUBLE) AS ${ident(`o${i}`)}`] : []));
  // The shape is our constant (from_json takes no parameter for it).
  const listed = sql`SELECT unnest(from_json(${json}::VARCHAR, ${raw(`'${JSON_SHAPE}'`)})) AS u, unnest(${values}::DOUBLE[]) AS v${joinSql(lists, '')}`;
  return sql`SELECT ${joinSql([...cols, ...ms])} FROM (SELECT *${joinSql(nulls, '')} FROM (${listed}))`;
}
