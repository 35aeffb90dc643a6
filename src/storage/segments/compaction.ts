// Which segments to merge. Every seal adds one small segment per partition; left alone, a long-lived
// log stream would be hundreds of files (slow to plan and to scan). Two pickers:
// - pickMerge, when the store is quiet (and for compact()): when a partition holds at least
//   MERGE_FANIN segments below the size cap, all its small segments merge, smallest first, up to the
//   cap. Between bursts of logging that leaves few, big files. Run after every seal it would rewrite
//   a growing segment again and again.
// - pickTiered, while rows keep arriving: in every partition, segments of about one size (within a
//   factor MERGE_FANIN) merge once MERGE_FANIN of them are there, so each row is rewritten about
//   log4(total / seal size) times and every partition gets its turn. pickMerge, one merge per cycle,
//   let trace and session segments pile up behind the span partition's (hundreds of files).
// A segment whose rows are mostly dead (deleted or replaced) is rewritten alone, which also purges its
// dead seqs from the manifest.
import type { SegmentEntry } from '../manifest/manifest.js';

export const MERGE_FANIN = 4;
/**
 * At most this many segments merge at once in pickTiered. A round comes at most every mergeMaxDelayMs
 * (30 s) while rows arrive, and a partition gets one merge a round: a small fan-in cannot keep up with
 * a long ingest's seals, which then leaves hundreds of files for its final compaction.
 */
export const MAX_TIER_FANIN = 256;

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
export function pickMerge(
  segments: readonly SegmentEntry[],
  deadIn: (s: SegmentEntry) => number,
  policy: CompactionPolicy = DEFAULT_POLICY,
): SegmentEntry[] | null {
  for (const small of smallByPartition(segments, policy)) {
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
  return pickDead(segments, deadIn, policy);
}

/** A segment worth rewriting alone for its dead rows, if any. */
export function pickDead(
  segments: readonly SegmentEntry[],
  deadIn: (s: SegmentEntry) => number,
  policy: CompactionPolicy = DEFAULT_POLICY,
): SegmentEntry[] | null {
  for (const s of segments) if (s.rows > 0 && deadIn(s) / s.rows >= policy.deadShare) return [s];
  return null;
}

/**
 * The merges to run while logging goes on: at most one per partition, of MERGE_FANIN to MAX_TIER_FANIN
 * segments whose sizes lie within a factor MERGE_FANIN of the smallest, smallest sizes first, under
 * the size cap.
 */
export function pickTiered(segments: readonly SegmentEntry[], policy: CompactionPolicy = DEFAULT_POLICY): SegmentEntry[][] {
  const out: SegmentEntry[][] = [];
  for (const small of smallByPartition(segments, policy)) {
    for (let i = 0; i + MERGE_FANIN <= small.length; i++) {
      const top = Math.max(small[i]!.rows, 1) * MERGE_FANIN;
      if (small[i + MERGE_FANIN - 1]!.rows > top) continue;
      const pick: SegmentEntry[] = [];
      let rows = 0;
      for (let j = i; j < small.length && pick.length < MAX_TIER_FANIN && small[j]!.rows <= top; j++) {
        if (pick.length >= MERGE_FANIN && rows + small[j]!.rows > policy.maxSegmentRows) break;
        pick.push(small[j]!);
        rows += small[j]!.rows;
      }
      if (pick.length >= MERGE_FANIN) {
        out.push(pick);
        break;
      }
    }
  }
  return out;
}

/** Each partition's segments below the size cap, smallest first. */
function smallByPartition(segments: readonly SegmentEntry[], policy: CompactionPolicy): SegmentEntry[][] {
  const out = new Map<string, SegmentEntry[]>();
  for (const s of segments) {
    if (s.rows >= policy.maxSegmentRows) continue;
    const key = `${s.project_id}/${s.run_id}/${s.kind}`;
    const list = out.get(key) ?? [];
    list.push(s);
    out.set(key, list);
  }
  return [...out.values()].map((list) => list.sort((a, b) => a.rows - b.rows));
}
