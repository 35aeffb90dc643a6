// Choosing how a page's keys are found, in order: the metric top-k lists (metric-topk.ts), then for
// the default and created_at sorts a time window of the newest (oldest) row groups widened as needed,
// narrowed to exact created_at ranges when few rows match (match-ranges.ts); for other sorts, the
// ranges of a filter that admits few rows, else one keys query over everything.
// Applies to: every search page (search.ts calls it with the plan and the page's bounds).
// Returns: the page's keys in order, limit + 1 of them when more follow, with the result columns that
// hold the metrics' own and rolled-up values; each candidate plan gives the same keys.
// Assumes: segments hold their rows (nearly) in created_at order, with each row group's created_at
// range known (the snapshot's time profile), and an estimate (match-estimate.ts) only chooses between plans, never changes an answer.
import type { Row, SqlRunner } from '../../db/database.js';
import {
  chooseWindow,
  pageKeysQuery,
  rollTopApplies,
  rowsPast,
  timeOrdered,
  type PlanInput,
  type TimeWindow,
  type TraceBound,
} from '../plan.js';
import { requiredContains } from '../text-needs.js';
import type { Scope, Snapshot } from '../../storage/snapshot/snapshot.js';
import { fewMatchesWindow, pageTimesWindow } from './match-ranges.js';
import { listReads, listsNot, metricTopK, testsFileColumns, topKApplies } from './metric-topk.js';
import { sortKeyWindow } from './sort-key-window.js';
import { type ListedOwn, traceBound, traceBoundApplies } from './trace-bound.js';
import { estimateMatches, totalRows, type MatchEstimate, type PlanEstimate } from './match-estimate.js';
import type { TopKCache } from './topk-cache.js';

/** What the search of a RecordQueries fixes for every page it finds keys for. */
export interface PageKeySettings {
  readonly db: SqlRunner;
  readonly topK: TopKCache | null;
  /**
   * Rows the first time window of a time-ordered page aims to cover (then as its match rate says). The
   * window's bound may fall inside a row group (chooseWindow): DuckDB then skips the group's vectors
   * before it. At 10M spans a 3.5% text filter's first page took half the CPU with 8,192 (then meaning
   * the whole newest row group) that it did with 50,000 (two groups), and a 0.15% filter, which widens
   * either way, a third; at 1M, bounds inside the group took 0.58x the time of whole groups over 69
   * text pages (0.50x the CPU).
   */
  readonly windowRows: number;
  /** How the planner estimates a filter's matches (tests force wrong estimates). */
  readonly estimateMode: PlanEstimate;
  /** Row groups from which the estimate samples (tests lower it). */
  readonly estimateMinGroups: number | undefined;
  /**
   * Row groups per page row (offset + limit + 1) from which a metric-sorted page first reads its sort
   * keys alone (sort-key-window.ts); tests set 0 (always, without the tie sample) and Infinity (never).
   */
  readonly sortKeyGroups: number;
  /**
   * When a metric-sorted page finds some of its segments' lists not yet read: 'await' reads them
   * first (then answers from them); 'background' answers with the keys query over everything and
   * hands the reads to `background`, so the next such page finds them.
   */
  readonly topKBuild: 'await' | 'background';
  /**
   * Row groups per page row (offset + limit + 1) from which a metric-sorted page whose keys query reads
   * every matching row carries only the keys (seq, created_at, the sort) and fetches its columns for the
   * page's rows alone; tests set 0 (always) and Infinity (never).
   */
  readonly narrowKeyGroups: number;
  /** Runs work after the page is answered, on a snapshot of its own (one piece at a time); it reports the lists it read. */
  readonly background: (work: (snap: Snapshot) => Promise<number>) => void;
}

/** Roll-ups a page sorted by one first reads (at least, and at most: beyond it, every record is read). */
const ROLL_TOP_MIN = 1000;
const ROLL_TOP_MAX = 200_000;

export interface PageKey {
  /** null (and c NaN) for a stored row of narrow keys: it is located by row.loc_file and row.loc_row, its seq comes with its fetch. */
  seq: number | null;
  c: number;
  row: Row;
}

/** A page's keys in order, and where their rows' metric values came along (name -> result column). */
export type PageKeys = PageKey[] & {
  ownMetrics: Map<string, string>;
  rolledMetrics: Map<string, string>;
  /** Whether the keys carry none of the page's columns (the page fetches them by seq). */
  narrow?: boolean;
  /** Whether every stored row carries its place (loc_file, loc_row) beside its seq: a fetch reads those rows alone. */
  located?: boolean;
};

/**
 * Keys of a page. Sorted by time (the default), it first looks only at the newest row groups that
 * could hold the page, widening the window 8x at a time until the page is full or the window is all.
 */
export async function findPageKeys(
  o: PageKeySettings,
  snap: Snapshot,
  scope: Scope,
  plan: PlanInput,
  limit: number,
  offset: number,
  also: readonly string[],
  alsoMetrics: readonly string[],
  steps: string[],
  locators: boolean,
  narrow = false,
): Promise<PageKeys> {
  const order = timeOrdered(plan.sort);
  const profile = snap.timeProfile(scope, requiredContains(plan.filter));
  const k = offset + limit + 1;
  // The estimate of how many records match and where (a sample of a few row groups), asked at most
  // once, only where it chooses the plan.
  let estimate: MatchEstimate | null | undefined;
  const estimated = async () =>
    estimate === undefined ? (estimate = await estimateMatches(o.db, plan, profile, o.estimateMode, steps, o.estimateMinGroups)) : estimate;
  const topK = o.topK;
  const applies = topK !== null && topKApplies(plan, offset, limit, topK.rows);
  // Lists read into memory in the background could not serve a filter on name or tags.
  const background = applies && o.topKBuild === 'background' && !testsFileColumns(plan);
  const missing = background ? listsNot(topK, snap, scope, plan, 'asked') : [];
  if (topK && missing.length > 0) {
    // A question asked once: one statement over everything costs less than sorting every segment for
    // its list. The lists follow in the background for the questions after it.
    steps.push('keys (top-k: lists not read yet)');
    o.background(listReads(topK, snap, scope, missing, plan));
  } else if (background && listsNot(topK, snap, scope, plan, 'read').length > 0) {
    // Asked again while the background reads the lists: reading the rest of them first took 2-3x the
    // one statement (1M: 112-156 ms against 48-54; 10M: 567-829 against 337-410).
    steps.push('keys (top-k: lists being read)');
  } else if (topK && applies) {
    // Tried before any estimate: when the lists fill the page (most metric sorts) it is the whole
    // answer, and at scale the estimate's sample costs more than the attempt.
    // A filter admitting too few of its candidates leaves it short; the full query runs after it.
    const top = await metricTopK(o.db, topK, snap, scope, plan, limit, offset, also, alsoMetrics, profile.memRows, locators);
    if (top === 'too few') steps.push('keys (top-k: too few listed rows can match)');
    else if (top === 'costly') steps.push('keys (top-k: the candidates would cost more)');
    else if (top === 'unlisted') steps.push('keys (top-k: only lists files test name and tags)');
    else if (top) {
      steps.push(`keys (top-k of ${top.candidates} listed rows)`);
      return Object.assign(
        top.rows.map((r) => ({ seq: Number(r['seq']), c: Number(r['c']), row: r })),
        { ownMetrics: top.ownMetrics, rolledMetrics: new Map<string, string>(), located: top.located === true },
      );
    } else steps.push('keys (top-k: not enough)');
  }
  const keys = async (
    w: TimeWindow | null,
    bound: number | null = null,
    rollTop: number | null = null,
    bare = false,
    traces?: TraceBound,
  ) => {
    const p = traces ? { ...plan, traceBound: traces } : plan;
    // A whole record's has_children comes with its keys (where the snapshot's child overrides apply).
    const q = bare
      ? pageKeysQuery(p, limit, offset, w, also.includes('has_children') ? ['id', 'has_children'] : ['id'], [], true, bound, null, true)
      : pageKeysQuery(p, limit, offset, w, also, alsoMetrics, locators, bound, rollTop);
    const how = [
      ...(w ? ['window'] : []),
      ...(bound !== null ? ['bound'] : []),
      ...(rollTop !== null ? [`roll-up top ${rollTop}`] : []),
      ...(bare ? ['narrow'] : []),
      ...(traces
        ? [traces.traces === null ? 'traces reaching the bound found in it' : `${traces.traces.length} traces reaching the bound`]
        : []),
    ];
    steps.push(`keys${how.length > 0 ? ` (${how.join(', ')})` : ''}${q.rolled.length > 0 ? ` + roll-up of ${q.rolled.join(', ')}` : ''}`);
    const rows = await o.db.all(q.sql);
    return Object.assign(
      rows.map((r) => ({ seq: r['seq'] === null ? null : Number(r['seq']), c: Number(r['c'] ?? NaN), row: r })),
      { ownMetrics: q.ownMetrics, rolledMetrics: q.rolledMetrics, narrow: bare },
    );
  };
  if (order === null && rollTopApplies(plan)) {
    // Sorted by a roll-up alone (traces by their spans' tokens): first the best roll-ups, enough that
    // the filter's rate fills the page four times over; every record of the level only when the
    // records among them fall short of the page (or reach the records without the metric).
    // The filter's rate over the level's records (the sort left out: its roll-up is not sampled).
    const rate =
      plan.filter === null
        ? 1
        : ((await estimateMatches(o.db, { ...plan, sort: null }, profile, o.estimateMode, steps, o.estimateMinGroups))?.rate ?? 0);
    const n = rate > 0 ? Math.max(ROLL_TOP_MIN, Math.ceil((4 * k) / rate)) : Infinity;
    if (n <= ROLL_TOP_MAX) {
      const rows = await keys(null, null, n);
      const last = rows.at(-1)?.row[rows.rolledMetrics.get(plan.sort!.column.metric!)!];
      if (rows.length > limit && last !== null && last !== undefined) return rows;
      steps.push('keys (roll-up top: short)');
    }
  }
  if (order === null) {
    const few = await fewMatchesWindow(o.db, plan, profile, steps, await estimated());
    if (few !== null) return keys(few);
    if (traceBoundApplies(plan, offset, limit)) {
      // The k-th own value from the segments' top lists when they hold it (10M: 300 -> ~30 ms).
      const listed: ListedOwn = async (own, at, past) => {
        if (topK === null || !topKApplies(own, at - 1, 1, topK.rows)) return undefined;
        // The value `past` rows on comes along when the lists hold that many (the same statement; else
        // the k-th alone is asked).
        const ask = (n: number) => metricTopK(o.db, topK, snap, scope, own, n, at - 1, [], [], profile.memRows);
        const wide = topKApplies(own, at - 1, past + 1, topK.rows) ? await ask(past + 1) : null;
        const n = typeof wide === 'object' && wide !== null ? past + 1 : 1;
        const top = n > 1 ? wide : await ask(1);
        if (typeof top !== 'object' || top === null) return undefined;
        const column = top.ownMetrics.get(own.sort!.column.metric!)!;
        const value = (i: number) => {
          const v = top.rows[i]?.[column];
          return v === undefined || v === null ? null : Number(v);
        };
        return n > 1 && top.rows.length >= n ? { at: value(0), past: value(n - 1) } : { at: value(0) };
      };
      const traces = await traceBound(o.db, plan, k, steps, listed);
      // Few rows of few traces: narrow keys, so the page is read from those rows' places alone.
      if (traces !== null) return keys(null, null, null, true, traces);
    }
    const sorted = await sortKeyWindow(o.db, plan, k, profile, o.sortKeyGroups, await estimated(), steps);
    const w = sorted?.window ?? null;
    // Over everything, the page's string columns of every matching row cost more than fetching them for
    // the page's rows from the row groups holding them, when those are few of all.
    const bare = narrow && w === null && profile.rowGroups.length >= o.narrowKeyGroups * k;
    return keys(w, sorted?.bound ?? null, null, bare);
  }
  let want = Math.max(o.windowRows, k * 20);
  let window: TimeWindow | null = chooseWindow(profile.rowGroups, profile.memRows, want, order.ascending, profile.memGroups);
  let rows = await keys(window);
  if (window === null || rows.length > limit) return rows;
  // The window was short. Matching at the rate it saw over the rows it covered (whole row groups: often
  // more than asked for), twice the rows that rate needs would hold the page: widen once when that is
  // at most half the rows.
  const total = totalRows(profile);
  const covered = Math.max(want, windowCovers(profile, window, order.ascending));
  const seen = rows.length > 0 ? offset + rows.length : 0;
  // Nothing in the window: the sample's rate (if it saw a match) says whether the page needs most rows.
  const rate = seen > 0 ? seen / covered : ((await estimated())?.rate ?? 0);
  if (rate > 0) {
    want = Math.ceil(Math.max(2 * covered, (2 * k) / rate));
    // The page's rows spread over more than a quarter of all rows: narrowing to their row groups (a
    // read of the filter's columns everywhere first) saves less than it costs: the narrowed keys query
    // then costs what the plain one does. One statement, as a hand-written query would be.
    if (want * 2 > total) return keys(null);
    if (seen > 0) {
      window = chooseWindow(profile.rowGroups, profile.memRows, want, order.ascending, profile.memGroups);
      rows = await keys(window);
      if (window === null || rows.length > limit) return rows;
    }
  }
  // A selective filter whose matches sit away from the newest rows (or the widened window was short
  // too): rather than widening step by step (each a read of every key column of more row groups), one
  // read of created_at and the filter's columns finds when the page's rows were created; the keys
  // query then reads only the row groups holding those instants.
  const exact = await pageTimesWindow(o.db, plan, k, profile, order.ascending, steps);
  return exact === null ? rows : keys(exact);
}

/** Rows a one-bound time window holds: those of its row groups past the bound (rowsPast) and the rows in memory. */
function windowCovers(profile: Parameters<typeof totalRows>[0], w: TimeWindow, ascending: boolean): number {
  return 'us' in w ? rowsPast(profile.rowGroups, w.us, ascending) + profile.memRows : 0;
}
