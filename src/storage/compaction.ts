// Which segments to merge. Every seal adds one small segment per partition; left alone, a long-lived
// log stream would be hundreds of files (slow to plan and to scan). The policy is tiered: when a
// partition holds at least MERGE_FANIN segments below the size cap, the smallest of them merge into
// one, so each row is rewritten about log4(total / seal size) times. A segment whose rows are mostly
// dead (deleted or replaced) is rewritten alone, which also purges its dead seqs from the manifest.
import type { SegmentEntry } from './manifest.js';

export const MERGE_FANIN = 4;

export interface CompactionPolicy {
  /** Segments stop growing by merges past this many rows (default 2,000,000). */
  maxSegmentRows: number;
  /** Share of dead rows that makes a segment worth rewriting alone (default 0.3). */
  deadShare: number;
  /**
   * has_children overrides the manifest may hold (default 50,000): past it, the segment holding the
   * most is rewritten alone, which writes them in (merges that run anyway fold them too).
   */
  maxChildless?: number;
}

export const DEFAULT_POLICY: CompactionPolicy = { maxSegmentRows: 2_000_000, deadShare: 0.3, maxChildless: 50_000 };

/** The next merge to run, if any: segments of one partition. `deadIn` counts dead rows of a segment. */
export function pickMerge(segments: readonly SegmentEntry[], deadIn: (s: SegmentEntry) => number, policy: CompactionPolicy = DEFAULT_POLICY): SegmentEntry[] | null {
  const byPartition = new Map<string, SegmentEntry[]>();
  for (const s of segments) {
    const key = `${s.project_id}/${s.run_id}/${s.kind}`;
    const list = byPartition.get(key) ?? [];
    list.push(s);
    byPartition.set(key, list);
  }
  for (const list of byPartition.values()) {
    const small = list.filter((s) => s.rows < policy.maxSegmentRows).sort((a, b) => a.rows - b.rows);
    if (small.length >= MERGE_FANIN) {
      const pick: SegmentEntry[] = [];
      let rows = 0;
      for (const s of small) {
        if (pick.length >= MERGE_FANIN && rows + s.rows > policy.maxSegmentRows) break;
        pick.push(s);
        rows += s.rows;
      }
      return pick;
    }
  }
  for (const s of segments) if (s.rows > 0 && deadIn(s) / s.rows >= policy.deadShare) return [s];
  return null;
}
