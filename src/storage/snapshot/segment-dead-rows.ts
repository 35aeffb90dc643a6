// Which rows of each segment are dead, listed per segment. After a large delete every segment holds
// some dead rows, and counting a segment's live rows then read its seq column and tested every row
// against the whole dead set. With the list, the count is the segment's row count less the listed seqs
// a snapshot honours: a small lookup in the `dead` table, no read of the segment.
// A list holds the seqs of the segment's rows that were in the store's dead set when it was made, with
// a digest of that set's part in the segment's seq range. While the digest still matches, no row of the
// segment was marked since (a mark on a row of a listed segment is never forgotten, and the store's
// set holds every mark before any snapshot honours it), so the list holds every mark a snapshot can
// honour on the segment's rows. Lists are saved in one file beside the manifest, so a reopened store
// does not read every segment again; a missing, damaged or stale file only costs those reads.
// The digest is compared once per list (a list from the file, or one just made); the list then notes
// the dead set's version, and while the set reports no change in the segment's range since, it stays
// current without hashing the range again (after a large delete, a million seqs on every count).
// Each listed seq comes with its row's place in the file (file_row_number), so a count answered from
// the segment's value index leaves dead rows out of its row set without reading the segment.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SqlRunner } from '../../db/database.js';
import { sql } from '../../query/sql.js';
import { writeFileAtomic } from '../fs-util.js';
import type { DeadSet } from '../manifest/dead-set.js';
import type { SegmentEntry } from '../manifest/manifest.js';
import { lowerBound } from '../memtable/seq-lists.js';
import { packSeqs, unpackSeqs } from '../seq-pack.js';

export const DEAD_ROWS_FILE = 'dead-rows.json';

interface DeadList {
  /** Digest of the store's dead seqs within the segment's seq range when the list was made. */
  readonly digest: string;
  /** The segment's rows among them (their seqs, ascending). */
  readonly seqs: readonly number[];
  /** Where each of those rows lies in the segment's file (file_row_number), in the order of `seqs`. */
  readonly rows: readonly number[];
  /** The dead set and its version at which the digest last matched (null: not compared yet). */
  checked: { readonly set: DeadSet; version: number } | null;
}

/** The segment's dead rows: their seqs (ascending) and places in its file (in the same order). */
export interface DeadRowsOf {
  readonly file: string;
  readonly seqs: readonly number[];
  readonly rows: readonly number[];
}

/** Format 1 lists had no places: such a file is not read (its lists are made again as counts need them). */
interface SavedLists {
  readonly format: 2;
  readonly segments: Record<string, { digest: string; seqs: string; rows: string }>;
}

/** The part of an ascending array within [lo, hi]. */
function within(sorted: Float64Array, lo: number, hi: number): Float64Array {
  return sorted.subarray(lowerBound(sorted, lo), lowerBound(sorted, hi + 1));
}

function digestOf(seqs: Float64Array): string {
  return createHash('sha256')
    .update(new Uint8Array(seqs.buffer, seqs.byteOffset, seqs.byteLength))
    .digest('base64');
}

export class SegmentDeadRows {
  readonly #path: string;
  /** Whether the file may be written (a read-only store reads it, never writes it). */
  readonly #persist: () => boolean;
  #lists: Map<string, DeadList> | null = null;

  constructor(dir: string, persist: () => boolean) {
    this.#path = join(dir, DEAD_ROWS_FILE);
    this.#persist = persist;
  }

  #load(): Map<string, DeadList> {
    if (this.#lists) return this.#lists;
    const lists = new Map<string, DeadList>();
    try {
      const saved = JSON.parse(readFileSync(this.#path, 'utf8')) as SavedLists;
      if (saved.format === 2)
        for (const [file, l] of Object.entries(saved.segments))
          if (typeof l?.digest === 'string' && typeof l.seqs === 'string' && typeof l.rows === 'string') {
            const seqs = unpackSeqs(l.seqs);
            const rows = unpackSeqs(l.rows);
            if (rows.length === seqs.length) lists.set(file, { digest: l.digest, seqs, rows, checked: null });
          }
    } catch {
      // none saved yet, or unreadable: the lists are made again as counts need them
    }
    return (this.#lists = lists);
  }

  /** Whether a list still holds every mark of the segment's range in `dead` (see the header). */
  #current(list: DeadList, seg: SegmentEntry, dead: DeadSet, inRange: Float64Array): boolean {
    const c = list.checked;
    if (c !== null && c.set === dead && dead.changedIn(c.version, seg.min_seq, seg.max_seq) === false) {
      c.version = dead.version;
      return true;
    }
    // Changed in the range (perhaps by a change that only straddles it), or never compared.
    if (list.digest !== digestOf(inRange)) return false;
    list.checked = { set: dead, version: dead.version };
    return true;
  }

  /**
   * The rows of the segments that are dead for some snapshot (every mark on them that a current
   * snapshot can honour is among them), each segment's from its list, made by a read of the segment
   * where missing or stale: one entry per segment with some (the lists' own arrays: not to be
   * changed), and how many rows they hold. `live`: every segment the manifest lists (others' lists are
   * dropped). `stop`: asked before each segment; when it answers true, the rest are left out (what was
   * made is saved).
   */
  async deadSeqs(
    db: SqlRunner,
    dir: string,
    segs: readonly SegmentEntry[],
    dead: DeadSet,
    live: readonly SegmentEntry[],
    stop: () => boolean = () => false,
  ): Promise<{ lists: DeadRowsOf[]; count: number; made: number }> {
    const lists = this.#load();
    const out: DeadRowsOf[] = [];
    let count = 0;
    let made = 0;
    for (const seg of segs) {
      if (stop()) break;
      const inRange = within(dead.sorted(), seg.min_seq, seg.max_seq);
      if (inRange.length === 0) continue; // no mark in its range: none of its rows is dead
      let list = lists.get(seg.file);
      if (list === undefined || !this.#current(list, seg, dead, inRange)) {
        // The marks in the segment's range as the `dead` table holds them, and which are rows of the
        // segment, in one statement: the digest is of the very set the list was made from (the store's
        // set runs ahead of the table while a request's marks are not in yet; then it does not match).
        const rows = await db.all(
          sql`WITH d AS (SELECT DISTINCT seq FROM dead WHERE seq BETWEEN ${seg.min_seq} AND ${seg.max_seq}),
              mine AS (SELECT seq, file_row_number AS r FROM read_parquet(${join(dir, seg.file)}, hive_partitioning = false)
                WHERE seq IN (SELECT seq FROM d))
              SELECT d.seq, mine.r FROM d LEFT JOIN mine USING (seq) ORDER BY d.seq`,
        );
        const range = Float64Array.from(rows, (r) => Number(r['seq']));
        const mine = rows.filter((r) => r['r'] !== null && r['r'] !== undefined);
        // Compared with the store's set on the next call (it may have run ahead or behind meanwhile).
        list = { digest: digestOf(range), seqs: mine.map((r) => Number(r['seq'])), rows: mine.map((r) => Number(r['r'])), checked: null };
        lists.set(seg.file, list);
        made++;
      }
      if (list.seqs.length === 0) continue;
      out.push({ file: seg.file, seqs: list.seqs, rows: list.rows });
      count += list.seqs.length;
    }
    if (made > 0) this.#save(live);
    return { lists: out, count, made };
  }

  #save(live: readonly SegmentEntry[]): void {
    const lists = this.#lists!;
    const listed = new Set(live.map((s) => s.file));
    for (const file of lists.keys()) if (!listed.has(file)) lists.delete(file);
    if (!this.#persist()) return;
    const segments: SavedLists['segments'] = {};
    for (const [file, l] of lists) segments[file] = { digest: l.digest, seqs: packSeqs(l.seqs), rows: packSeqs(l.rows) };
    try {
      writeFileAtomic(this.#path, JSON.stringify({ format: 2, segments } satisfies SavedLists));
    } catch {
      // a cache: the next count that needs the lists makes them again
    }
  }
}
