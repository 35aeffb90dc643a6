// Strategy: a metric-sorted page that reads the page's columns of few row groups. A first read of the
// sort key, created_at and the filter's columns (never the id strings, which cost most of a sorted
// scan) finds the first 2k matches by key alone; when the k-th key's ties all lie within them, the
// rows up to the k-th key sit at known instants, and the keys query reads only the row groups holding
// those instants, bounded by that key. With more ties (a key most rows share, such as a score of 1)
// the keys query reads everything, bounded by the key.
// Applies when: the sort is a metric's own value (nothing rolled up) and the scope holds at least
// `groupsPerRow` row groups per row the page needs (offset + limit + 1): with fewer, the page's rows
// sit in nearly every row group and the first read only adds to the keys query.
// Returns: a time window and a bound for the keys query, either may be null.
// Assumes: every row sorting at or before the k-th row has a key at or before the k-th key, and the
// window holds every match with such a key (ties included), so the keys query's first k rows are the
// ones it finds over everything.
import type { SqlRunner } from '../../db/database.js';
import { sortKeysQuery, timeRanges, type PlanInput, type TimeWindow } from '../plan.js';
import type { Snapshot } from '../../storage/snapshot/snapshot.js';
import { groupRowsIn, SAMPLE_GROUPS as SAMPLED_GROUPS, totalRows, type MatchEstimate } from './match-estimate.js';

type Profile = ReturnType<Snapshot['timeProfile']>;

/** Ranges of created_at a window may test (as match-ranges.ts). */
const MAX_RANGES = 64;

export interface SortKeyPlan {
  readonly window: TimeWindow | null;
  readonly bound: number | null;
}

/** A key the bound can be tested against in SQL exactly as it was read (NaN and infinities are left to the plain query). */
const usable = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

export async function sortKeyWindow(
  db: SqlRunner,
  plan: PlanInput,
  k: number,
  profile: Profile,
  groupsPerRow: number,
  estimate: MatchEstimate | null,
  steps: string[],
): Promise<SortKeyPlan | null> {
  if (profile.rowGroups.length < groupsPerRow * k) return null;
  const q = sortKeysQuery(plan, 2 * k);
  if (q === null) return null;
  if (groupsPerRow > 0 && manyTies(estimate, k, profile.rowGroups.length)) {
    steps.push('sort keys (skipped: a key many rows share)');
    return null;
  }
  steps.push('sort keys');
  const rows = (await db.all(q)).map((r) => ({ c: Number(r['c']), v: r['v'] }));
  // Fewer than k match: the page is all of them, wherever they are.
  if (rows.length < k) return { window: windowOf(rows, profile), bound: null };
  // A NULL k-th key ties with every NULL (too many to place); a NaN or infinite one is left to the
  // plain query rather than compared in SQL.
  const kth = rows[k - 1]!.v;
  if (!usable(kth)) return null;
  // 2k rows all at or before the k-th key: its ties may go on past them.
  if (rows.length === 2 * k && rows[2 * k - 1]!.v === kth) return { window: null, bound: kth };
  // Rows come in the page's order of keys: the first k and the k-th key's ties are every row at or
  // before it (read in DuckDB's order, so NaN's place needs no comparison here).
  const window = windowOf(
    rows.filter((r, i) => i < k || r.v === kth),
    profile,
  );
  return { window, bound: kth };
}

/**
 * Sampled keys equal to the sample's best that make it a plateau (a maximal score most rows reach):
 * the best of a continuous key (a latency, a token count) is one or two rows of a sample.
 */
const PLATEAU = 2;

/**
 * Whether the planner's sample (match-estimate.ts) suggests that more than 2k matches share the best
 * key: then the k-th key's ties overflow the first read and spread over every row group, and the bound
 * keeps too many rows to save anything, so the first read would only add to the keys query.
 */
function manyTies(estimate: MatchEstimate | null, k: number, groups: number): boolean {
  const keys = estimate?.bestKeys;
  if (!keys || keys.length === 0) return false;
  const ties = keys.filter((v) => v === keys[0]).length;
  // At least this many per sampled row group share it, so about that many in every row group.
  return ties >= PLATEAU && (ties / SAMPLED_GROUPS) * groups > 2 * k;
}

/** Ranges holding every row's instant, or null when they would cover more than half the rows. */
function windowOf(rows: readonly { c: number }[], profile: Profile): TimeWindow | null {
  const ranges = timeRanges(
    rows.map((r) => r.c),
    profile.rowGroups,
  );
  // Nothing matches: an empty range (DuckDB skips every row group).
  if (ranges.length === 0) return { ranges: [[1, 0]] };
  const read = groupRowsIn(profile, ranges) + profile.memRows;
  // Instants spread over more than half the rows: the window saves less than it costs to test.
  return ranges.length > MAX_RANGES || read * 2 > totalRows(profile) ? null : { ranges };
}
