// Strategy: counts that remember each segment's share. A segment never changes, so the number of its
// rows a filter matches is the same on every ask while retention cuts none of them and the dead rows
// among them stay the same: that count is kept (per segment file, level and filter; for a segment with
// dead rows, also per the snapshot's view of the dead rows, Snapshot.deadView), and a repeated count
// reads only the rest (partly expired segments, small ones, memory tables). After a large delete every
// segment has dead rows: counts asked again while nothing is logged then cost no segment read.
// Applies when: the filter does not test has_children (childless marks change it without a dead row)
// and the count needs no roll-up (it would read other records), and some segment is large and whole.
// Returns: the count, or null (then the caller runs its one count query).
// Assumes: nothing decided at read time but dead rows and retention enters a segment's count; the
// first count of a filter still reads everything.
import type { SqlRunner } from '../../db/database.js';
import { columnsOf } from '../match-facts.js';
import { countQuery, type PlanInput } from '../plan.js';
import type { Scope } from '../../storage/record-store.js';
import type { SegmentEntry } from '../../storage/manifest/manifest.js';
import type { Snapshot } from '../../storage/snapshot/snapshot.js';
import type { SourcePick } from '../../storage/snapshot/snapshot-source.js';
import { valueIndexOf } from '../../storage/indexes/value-index.js';
import { countSet, servedTests, valueRows, type ValueRows } from './value-rows.js';

/** Segment counts kept at most (each a short string key and a number; least recently used go first). */
const MAX_ENTRIES = 20_000;
/**
 * Smaller segments are read by the count of the rest: each kept segment costs the first count one
 * statement of its own, and small segments are cheap to read and soon merged.
 */
export const MIN_ROWS = 100_000; // value indexes start at the same size (VALUE_INDEX_MIN_ROWS)

export class SegmentCounts {
  readonly #counts = new Map<string, number>();
  readonly #max: number;
  readonly minRows: number;
  /** Segment counts answered from memory and counted by a query, since the store opened (for tests and benchmarks). */
  readonly stats = { hits: 0, misses: 0 };

  constructor(minRows = MIN_ROWS, max = MAX_ENTRIES) {
    this.minRows = minRows;
    this.#max = max;
  }

  get(key: string): number | undefined {
    const v = this.#counts.get(key);
    if (v !== undefined) {
      this.#counts.delete(key);
      this.#counts.set(key, v);
    }
    return v;
  }

  set(key: string, n: number): void {
    this.#counts.delete(key);
    this.#counts.set(key, n);
    while (this.#counts.size > this.#max) this.#counts.delete(this.#counts.keys().next().value!);
  }
}

/**
 * The count of `plan` over `scope`, from kept segment counts where they apply, or null when the plan
 * cannot use them (then the caller runs its one count query). `steps` gets what was read.
 */
export async function countBySegment(
  db: SqlRunner,
  cache: SegmentCounts,
  snap: Snapshot,
  scope: Scope,
  plan: PlanInput,
  steps: string[],
): Promise<number | null> {
  if (columnsOf(plan.filter).has('has_children') || countQuery(plan).rolled.length > 0) return null;
  const deadFree = snap.deadFreeFiles();
  const cut = snap.cutoffs(scope.projectId, scope.runId);
  // Segments (large enough) whose every row is unexpired at this snapshot (a segment wholly expired
  // is not in segmentsFor at all).
  const whole = snap
    .segmentsFor(scope)
    .filter((s) => s.rows >= cache.minRows && !(cut.has(s.run_id) && s.min_created_us < cut.get(s.run_id)!));
  if (whole.length === 0) return null;
  const filterKey = `${plan.level}\n${JSON.stringify(plan.filter)}`;
  const view = snap.deadView;
  const key = (s: SegmentEntry) => `${s.file}\n${s.rows}\n${s.min_seq}\n${s.max_seq}\n${deadFree.has(s.file) ? '' : view}\n${filterKey}`;
  const over = (pick: SourcePick): PlanInput => ({
    ...plan,
    base: (metrics, text, created) => snap.source(scope, metrics, text, created, pick),
  });
  const run = async (p: PlanInput) => {
    const q = countQuery(p);
    return Number((await db.all(q.sql))[0]!['n']);
  };
  let n = 0;
  let kept = 0;
  // Without a filter, a segment with dead rows counts its row count less its dead rows (the snapshot's
  // lists of them): no read of the segment.
  const listed: SegmentEntry[] = [];
  const misses: SegmentEntry[] = [];
  for (const s of whole) {
    const v = cache.get(key(s));
    if (v !== undefined) {
      n += v;
      kept++;
      cache.stats.hits++;
    } else if (plan.filter === null && !deadFree.has(s.file)) listed.push(s);
    else misses.push(s);
  }
  const lists = listed.length > 0 ? await snap.liveRows(listed) : null;
  if (lists) n += lists.rows;
  // The statements side by side: each one's fixed cost (planning, the file's metadata) overlaps the
  // others' reads.
  // Decided from the filter alone: a filter the value index cannot answer loads no index. A filter
  // whose every test the index serves is counted from it, less the segment's dead rows (their places
  // in its file, from its dead-row list): no read of the segment. Other filters read it (value-rows.ts
  // says why).
  const served = servedTests(plan.filter);
  const fromIndex = new Map<SegmentEntry, ValueRows>();
  const ids = snap.metricIds;
  if (served)
    for (const s of misses) {
      const ix = valueIndexOf(snap.path(s), s.rows);
      const stored = (name: string) => (ids[name] !== undefined && s.metrics.includes(ids[name]) ? ids[name] : undefined);
      const v = ix ? valueRows(ix, served, stored) : null;
      if (v !== null) fromIndex.set(s, v);
    }
  const dirty = [...fromIndex.keys()].filter((s) => !deadFree.has(s.file));
  const deadRows = dirty.length > 0 ? snap.deadFileRows(dirty) : null;
  const counted = misses.map(async (s) => {
    const v = fromIndex.get(s);
    let c: number;
    if (v === undefined) c = await run(over({ files: new Set([s.file]), only: true, memory: false }));
    else c = v.count - (deadRows === null ? 0 : countSet(v.bits, (await deadRows).get(s.file) ?? []));
    cache.set(key(s), c);
    cache.stats.misses++;
    return c;
  });
  // The rest: smaller or partly expired segments and memory tables, when there are any (a statement
  // over nothing still costs its planning beside the others).
  const others = snap.segmentsFor(scope).length > whole.length || snap.hasMemoryRows(scope);
  const rest = others ? run(over({ files: new Set(whole.map((s) => s.file)), only: false, memory: true })) : Promise.resolve(0);
  // Every statement settles before an error is thrown (none is left to reject unheard).
  for (const r of await Promise.allSettled([...counted, rest])) {
    if (r.status === 'rejected') throw r.reason;
    n += r.value;
  }
  steps.push(`count (${kept} of ${whole.length} segment counts kept${fromIndex.size > 0 ? `, ${fromIndex.size} from value indexes` : ''})`);
  if (lists) steps.push(`${listed.length} segments counted from their dead-row lists (${lists.made} made)`);
  return n;
}
