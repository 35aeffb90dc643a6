// Strategy: read only the row groups an answer can come from, when few rows match. A first read of
// created_at and the filter's columns tells when the rows the answer needs were created; the query
// after it tests created_at ranges holding those instants (DuckDB skips the row groups outside).
// Applies when: a time-ordered page's first window came back short (pageTimesWindow), or a page in
// another order has a filter the estimate expects to admit few rows in no sampled row group
// (fewMatchesWindow; no roll-up, no free-text column).
// Returns: a time window for the keys query, or null (then the caller's plan stands).
// Assumes: the ranges always hold every instant read, so the answer is the one without them.
import type { SqlRunner } from '../../db/database.js';
import type { Sql } from '../sql.js';
import { columnsOf } from '../match-facts.js';
import { matchTimesQuery, timeRanges, type PlanInput, type TimeWindow } from '../plan.js';
import type { Snapshot } from '../../storage/snapshot/snapshot.js';
import { FREE_TEXT, groupRowsIn, totalRows, type MatchEstimate } from './match-estimate.js';

/** Ranges of created_at a query may test (beyond, one bound or none). */
const MAX_RANGES = 64;
/** Matches a page in another order than time looks for before its keys query. */
const FEW = 4096;

type Profile = ReturnType<Snapshot['timeProfile']>;

/** Rows of the row groups (and memory) the ranges can read. */
const rowsIn = (p: Profile, ranges: readonly (readonly [number, number])[]) => groupRowsIn(p, ranges) + p.memRows;

async function times(db: SqlRunner, q: Sql): Promise<{ cs: number[]; n: number }> {
  const row = (await db.all(q))[0]!;
  return { cs: ((row['cs'] as unknown[] | null) ?? []).map(Number), n: Number(row['n'] ?? 0) };
}

/**
 * A time-ordered page whose first window was short: the window holding the first k matches (null:
 * nothing matches anywhere, so the short window's empty answer stands).
 */
export async function pageTimesWindow(
  db: SqlRunner,
  plan: PlanInput,
  k: number,
  profile: Profile,
  ascending: boolean,
  steps: string[],
): Promise<TimeWindow | null> {
  const t = matchTimesQuery(plan, k);
  steps.push(`page times${t.rolled.length > 0 ? ` + roll-up of ${t.rolled.join(', ')}` : ''}`);
  const { cs } = await times(db, t.sql);
  if (cs.length === 0) return null;
  const ranges = timeRanges(cs, profile.rowGroups);
  // Many scattered instants: one bound from the earliest (latest) of them holds them all.
  if (ranges.length <= MAX_RANGES) return { ranges };
  return ascending ? { op: '<=', us: ranges[ranges.length - 1]![1] } : { op: '>=', us: ranges[0]![0] };
}

/**
 * For a page in another order than time: when the filter admits few rows (at most FEW), the
 * created_at ranges holding all of them. Asked only when that read is cheap (no roll-up, no free-text
 * column) and stops at FEW + 1 matches; null when the matches are many or sit in over half the rows
 * (the keys query then reads everything, as before). Asked only when the estimate (a sample of
 * row groups) found no match at all and expects at most FEW: a filter with matches in a sampled row
 * group is likely to have them in many (at 1M spans, 20 traces' spans sit in 11 of 30 row groups),
 * where the narrowed keys query costs what the plain one does and this read comes on top. Without an
 * estimate, no read: the plain keys query is what a hand-written query does.
 */
export async function fewMatchesWindow(
  db: SqlRunner,
  plan: PlanInput,
  profile: Profile,
  steps: string[],
  estimate: MatchEstimate | null,
): Promise<TimeWindow | null> {
  if (estimate === null || estimate.spread > 0 || estimate.matches > FEW) return null;
  if (plan.filter === null || profile.rowGroups.length < 4 || [...columnsOf(plan.filter)].some((c) => FREE_TEXT.has(c))) return null;
  const t = matchTimesQuery(plan, FEW + 1);
  if (t.rolled.length > 0) return null;
  steps.push('match times');
  const { cs, n } = await times(db, t.sql);
  if (n > FEW) return null;
  // Nothing matches: an empty range (DuckDB skips every row group).
  if (cs.length === 0) return { ranges: [[1, 0]] };
  const ranges = timeRanges(cs, profile.rowGroups);
  return ranges.length <= MAX_RANGES && rowsIn(profile, ranges) * 2 <= totalRows(profile) ? { ranges } : null;
}
