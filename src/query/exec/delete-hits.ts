// Strategy: a span delete by a filter the value index serves (value-rows.ts: type, name, model, tags,
// stored metrics) finds its matches in each segment's value index as row numbers, and learns whether
// they are leaves from the has_children bits of the segment's child row file
// (storage/indexes/child-index.ts): no column of the segment is read. At 1% of 100M spans the
// statement this replaces scanned type, tags, seq and has_children of every span (about a third of
// the delete). The seqs come later, from the row file, as the settling reads the rows around each
// match anyway (leaf-settle.ts), and dead rows among the matches are left out there by their seqs:
// a segment's dead rows as row numbers are made by reading its seqs after each delete, which a
// second delete then waited for (+1.3 s at 100M).
// Applies to: a span delete over a scope without retention cuts (the caller holds the child indexes),
// whose filter the value index serves wholly and needs no roll-up.
// Returns: the match rows of each segment served, by its row file, dead ones among them; the segments
// not served (smaller ones, those without a usable index) and rows in memory are left to the hits
// statement.
// Assumes: stored has_children, cleared by childless marks only, is what the bits hold: a match whose
// bit is set is a parent unless it is dead or marked childless (its seq read to tell).
import type { Connection } from '../../db/database.js';
import { childRowsFlagsAt, childRowsHeader, childRowsPath, ROWS_HEADER } from '../../storage/indexes/child-index.js';
import { sortedHas } from '../../storage/memtable/seq-lists.js';
import { readFully, withFile } from '../../storage/fs-util.js';
import { valueIndexOf } from '../../storage/indexes/value-index.js';
import type { SegmentEntry } from '../../storage/manifest/manifest.js';
import type { Scope } from '../../storage/record-store.js';
import type { Snapshot } from '../../storage/snapshot/snapshot.js';
import { countQuery, type PlanInput } from '../plan.js';
import { rowsOf, servedTests, valueRows, type ValueRows } from './value-rows.js';
import { seqsAscending } from './leaf-settle.js';

/** A delete's matches in the segments whose value index served its filter. */
export interface IndexedMatches {
  /** Match rows, ascending, by the path of the segment's child row file. */
  readonly rows: ReadonlyMap<string, Uint32Array>;
  /** The segments served (manifest file names): the hits statement reads the others. */
  readonly files: ReadonlySet<string>;
}

/**
 * The matches of `plan` found in value indexes (dead rows among them: `dead` gives the snapshot's dead
 * seqs ascending, read when first asked); 'parents' when a live one has children (the caller takes the general path);
 * null when no segment is served.
 */
export async function indexedMatches(
  c: Connection,
  snap: Snapshot,
  plan: PlanInput,
  scope: Scope,
  dead: () => Promise<Float64Array>,
): Promise<IndexedMatches | 'parents' | null> {
  const served = servedTests(plan.filter);
  if (served === null || plan.level !== 'span' || countQuery(plan).rolled.length > 0) return null;
  const ids = snap.metricIds;
  const found: { seg: SegmentEntry; v: ValueRows; path: string; flags: Uint32Array }[] = [];
  for (const seg of snap.segmentsFor({ ...scope, kinds: ['span'] })) {
    const abs = snap.path(seg);
    const ix = valueIndexOf(abs, seg.rows);
    if (ix === null) continue;
    const path = childRowsPath(abs);
    const header = await childRowsHeader(c, path, seg.rows);
    if (header === null) continue;
    const stored = (name: string) => (ids[name] !== undefined && seg.metrics.includes(ids[name]) ? ids[name] : undefined);
    const v = valueRows(ix, served, stored);
    const flags = v === null ? null : parentBits(path, seg.rows, header.ascending);
    if (v !== null && flags !== null) found.push({ seg, v, path, flags });
  }
  if (found.length === 0) return null;
  let childless: Float64Array | undefined;
  const rows = new Map<string, Uint32Array>();
  for (const { v, path, flags } of found) {
    for (let w = 0; w < flags.length; w++) {
      const both = flags[w]! & v.bits[w]!;
      if (both === 0) continue;
      // Rare: a match stored with children. A dead version is no match; one marked childless is a leaf.
      childless ??= await seqsAscending(c, snap.childlessSeqs);
      for (const r of rowsOf(Uint32Array.of(both))) {
        const seq = seqAt(path, 32 * w + r);
        if (seq === null) return 'parents';
        if (!sortedHas(await dead(), seq) && !sortedHas(childless, seq)) return 'parents';
      }
    }
    rows.set(path, Uint32Array.from(rowsOf(v.bits)));
  }
  return { rows, files: new Set(found.map((f) => f.seg.file)) };
}

/** The seq of row `r` of a row file; null when it cannot be read. */
function seqAt(path: string, r: number): number | null {
  const seq = new Float64Array(1);
  const bytes = new Uint8Array(seq.buffer);
  return withFile(path, (fd) => (readFully(fd, bytes, ROWS_HEADER + 16 * r + 8) === 8 ? seq[0]! : null));
}

/** The has_children bits of a row file of `n` rows; null when they cannot be read (the segment is left to the statement). */
function parentBits(path: string, n: number, ascending: boolean): Uint32Array | null {
  const flags = new Uint32Array(Math.ceil(n / 32));
  const bytes = new Uint8Array(flags.buffer);
  return withFile(path, (fd) => (readFully(fd, bytes, childRowsFlagsAt(n, ascending)) === bytes.length ? flags : null));
}
