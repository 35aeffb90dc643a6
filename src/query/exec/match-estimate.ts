// Strategy support: how many records a filter admits and how widely they spread over the row groups,
// estimated from a few row groups spread evenly over time. The planner chooses between one statement
// (filter + ORDER BY + LIMIT, what a hand-written query does) and its narrowing plans (top-k lists,
// created_at windows, the match-times read) by it.
// Applies when: a filter, no roll-up, no free-text column, and at least MIN_GROUPS row groups.
// Returns: the estimate, or null (then the planner runs one statement where only an estimate would
// choose a narrowing plan).
// Assumes: every plan it chooses among gives the same answer, so a wrong estimate costs time, never
// correctness; tests force wrong ones (`PlanEstimate`).
import type { SqlRunner } from '../../db/database.js';
import { columnsOf } from '../match-facts.js';
import { sampleQuery, type PlanInput } from '../plan.js';
import type { Snapshot } from '../../storage/snapshot/snapshot.js';

type Profile = ReturnType<Snapshot['timeProfile']>;

/**
 * Row groups the sample reads. A count's cost is mostly the fixed cost of a statement, and grows with
 * every row group it reads: two keep the sample well under the match-times read it can spare.
 */
export const SAMPLE_GROUPS = 2;
/**
 * Fewer row groups are not sampled: the sample's fixed cost (through the store) is then as much as
 * the narrowing it could choose saves, so the planner runs one statement. From 64 row groups (about
 * 2M spans) it is under a tenth of a full read.
 */
export const MIN_GROUPS = 64;
/** Columns of free text: reading them (a sample, or the match-times read) costs about what the keys query does. */
export const FREE_TEXT = new Set([
  'input',
  'output',
  'dataset_input',
  'dataset_output',
  'user_metadata',
  'dataset_metadata',
  'error_message',
  'progress_message',
  'tools',
]);

export interface MatchEstimate {
  /** Matching records per record, over the rows sampled. */
  readonly rate: number;
  /** Share of the sampled row groups holding at least one match (0..1). */
  readonly spread: number;
  /** Records the rate predicts over all rows. */
  readonly matches: number;
  /** For a sort by a metric's own value: the sample's best keys, best first (at most TOP_KEYS per row group). */
  readonly bestKeys?: readonly number[];
}

/** Best sort keys the sample keeps of each row group it reads. */
export const TOP_KEYS = 8;

/**
 * 'measured' (the default) samples; tests force an estimate: 'few' (every filter admits few records in
 * few row groups: the narrowing plans always run) or 'many' (every filter admits many, everywhere: one
 * statement wherever a narrowing plan could run).
 */
export type PlanEstimate = 'measured' | 'few' | 'many';

export const totalRows = (p: Profile) => p.rowGroups.reduce((n, g) => n + g[2], 0) + p.memRows;

/** Rows of the row groups whose created_at span meets one of `ranges` (rows in memory not counted). */
export const groupRowsIn = (p: Profile, ranges: readonly (readonly [number, number])[]) =>
  p.rowGroups.filter((g) => ranges.some(([a, b]) => g[0] <= b && a <= g[1])).reduce((n, g) => n + g[2], 0);

/**
 * The estimate for a plan's filter, or null when there is nothing to sample cheaply (no filter, a
 * roll-up, a free-text column, fewer than MIN_GROUPS row groups): then the planner runs one statement
 * where only an estimate would choose a narrowing plan.
 */
export async function estimateMatches(
  db: SqlRunner,
  plan: PlanInput,
  profile: Profile,
  mode: PlanEstimate,
  steps: string[],
  minGroups = MIN_GROUPS,
): Promise<MatchEstimate | null> {
  if (mode === 'few') return { rate: 0, spread: 0, matches: 0 };
  if (mode === 'many') return { rate: 1, spread: 1, matches: totalRows(profile) };
  if (plan.filter === null || profile.rowGroups.length < minGroups || [...columnsOf(plan.filter)].some((c) => FREE_TEXT.has(c)))
    return null;
  // Evenly spaced row groups in time order; each sampled range is one row group's created_at span
  // (rows of other segments' row groups overlapping it are read and counted too).
  const groups = [...profile.rowGroups].sort((a, b) => a[0] - b[0]);
  const picked = Array.from({ length: SAMPLE_GROUPS }, (_, i) => groups[Math.floor(((i + 0.5) * groups.length) / SAMPLE_GROUPS)]!);
  const ranges = picked.map((g) => [g[0], g[1]] as const);
  const q = sampleQuery(plan, ranges, TOP_KEYS);
  if (q.rolled.length > 0) return null;
  steps.push('estimate');
  const rows = await db.all(q.sql);
  const read = groupRowsIn(profile, ranges);
  let n = 0;
  let hit = 0;
  const keys: number[] = [];
  for (const r of rows) {
    if (r['g'] === null || r['g'] === undefined) continue;
    n += Number(r['n']);
    if (Number(r['n']) > 0) hit++;
    if (Array.isArray(r['top'])) for (const v of r['top']) if (typeof v === 'number') keys.push(v);
  }
  const rate = read > 0 ? n / read : 0;
  const bestKeys = plan.sort?.ascending ? keys.sort((a, b) => a - b) : keys.sort((a, b) => b - a);
  return { rate, spread: hit / SAMPLE_GROUPS, matches: rate * totalRows(profile), bestKeys };
}
