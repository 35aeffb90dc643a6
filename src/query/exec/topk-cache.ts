// Support for metric-topk.ts: the best rows of each segment by one metric. For a (segment, metric,
// direction), the first TOP_ROWS rows with a value in the order a metric-sorted page uses (value, then
// id), with the narrow columns a page's keys show and simple filters test.
// Returns: a list per segment, best first, and whether the segment holds more.
// Assumes: segments never change, so each list is read once and kept by file name: from the segment's
// top lists file where it has one (written with it, or later by the fact backfill: a few thousand rows),
// else by one sorted scan of the segment. Dead rows are listed too (the list is of the file): liveness
// is checked when a page is asked.
import type { Row, SqlRunner } from '../../db/database.js';
import { ident, int, joinSql, raw, sql } from '../sql.js';
import type { SegmentEntry } from '../../storage/manifest/manifest.js';
import type { Snapshot } from '../../storage/snapshot/snapshot.js';
import { readTopList, readTopValues, TOP_LIST_COLUMNS, TOP_LIST_ROWS } from '../../storage/indexes/top-lists.js';

/** Rows kept per list (as the segments' top lists files keep them). */
export const TOP_ROWS = TOP_LIST_ROWS;

/** The physical columns a list keeps (besides the metric's value `v`); filters on these need no scan. */
export const CACHED_COLUMNS = TOP_LIST_COLUMNS;

/** One listed row: `c` is created_at in epoch µs; project_id and run_id are the segment's. */
export interface TopRow {
  seq: number;
  c: number;
  id: string;
  type: string | null;
  session_id: string | null;
  trace_id: string | null;
  parent_id: string | null;
  has_children: boolean | null;
  status_code: number | null;
  model: string | null;
  v: number;
  /** Every metric's value of the row, by metric id (the segment's metrics; null where the row has none). */
  m: Readonly<Record<number, number | null>>;
}

export interface TopList {
  /** Best first. */
  readonly rows: readonly TopRow[];
  /** Whether the segment has more rows with a value than the list holds (then rows after it are no better than its last). */
  readonly truncated: boolean;
  /** Metrics of the segment whose values the rows' `m` does not hold (a file's list reads them when asked). */
  readonly missing?: ReadonlySet<number>;
}

interface Kept extends TopList {
  readonly missing: Set<number>;
}

const EMPTY: TopList = { rows: [], truncated: false };

/** A truncated list's last kept row: every row of its segment left out comes after it. */
export interface TopBound {
  readonly v: number;
  readonly id: string;
}

export class TopKCache {
  readonly #db: SqlRunner;
  readonly #lists = new Map<string, Promise<Kept>>();
  /** Reads of a kept list's metric values under way, by list key and metric id. */
  readonly #values = new Map<string, Promise<void>>();
  /** Keys of lists handed to the background and not yet started (a page awaits them as it would a list being read). */
  readonly #queued = new Set<string>();
  /** Keys of lists read to the end (a page answers from them without waiting). */
  readonly #ready = new Set<string>();
  /** By segment, list number and depth: the list's last kept row when truncated, else null (metric-topk.ts fromFiles). */
  readonly ends = new Map<string, TopBound | null>();
  /** Rows kept per list. */
  readonly rows: number;
  /** Segments smaller than this without a top lists file are read whole by a page (they have no list). */
  readonly minRows: number;
  /**
   * Rows of the scope per candidate from which a page is answered from the lists: passing n candidates
   * costs about what the keys query over this many times n rows does (1M spans: 3,000 candidates took
   * 20 ms to pass and 34 to query, the keys query 50), and reading the lists about what passing a
   * list's rows does. So at 1M spans the keys query answers; from ~1.5M the lists.
   */
  readonly rowsPerCandidate: number;

  constructor(db: SqlRunner, rows = TOP_ROWS, minRows = 0, rowsPerCandidate = 500) {
    this.#db = db;
    this.rows = rows;
    this.minRows = minRows;
    this.rowsPerCandidate = rowsPerCandidate;
  }

  /** Whether a page reads the segment whole instead of its list: small, and without a top lists file. */
  whole(segment: SegmentEntry): boolean {
    return segment.top_lists !== true && segment.rows < this.minRows;
  }

  /**
   * The list of a segment for a metric (by its id in the manifest), best first in the given direction,
   * its rows' `m` holding the values of `values` (metric ids; those of other metrics only when read
   * before; `missing` names those a file could not give).
   */
  async list(
    snap: Snapshot,
    segment: SegmentEntry,
    metricId: number | undefined,
    ascending: boolean,
    values: readonly number[] = [],
  ): Promise<TopList> {
    if (metricId === undefined || !segment.metrics.includes(metricId)) return EMPTY;
    const path = snap.path(segment);
    const key = listKey(path, metricId, ascending);
    let p = this.#lists.get(key);
    if (!p) {
      p = this.#listed(segment)
        ? this.#readListed(path, metricId, ascending, segment.metrics, values)
        : this.#read(path, metricId, ascending, segment.metrics);
      // A failed read is not remembered (the next query tries again).
      p.then(
        () => this.#ready.add(key),
        () => this.#lists.delete(key),
      );
      this.#lists.set(key, p);
      this.#queued.delete(key);
    }
    const kept = await p;
    const wanted = values.filter((id) => kept.missing.has(id));
    try {
      if (wanted.length > 0) await this.#readValues(key, path, metricId, ascending, kept, wanted);
    } catch {
      // They stay missing: the caller does without the list.
    }
    return kept;
  }

  /** Reads the values of `ids` for a file's list (each metric once, whichever page asks first). */
  async #readValues(key: string, path: string, metricId: number, ascending: boolean, kept: Kept, ids: readonly number[]): Promise<void> {
    const fresh = ids.filter((id) => !this.#values.has(`${key}\n${id}`));
    if (fresh.length > 0) {
      const read = readTopValues(this.#db, path, metricId, ascending, kept.rows.length, fresh).then((cols) => {
        fresh.forEach((id, j) => {
          const col = cols[j]!;
          kept.rows.forEach((r, i) => {
            const v = col[i];
            (r.m as Record<number, number | null>)[id] = v === null || v === undefined ? null : Number(v);
          });
          kept.missing.delete(id);
        });
      });
      for (const id of fresh) this.#values.set(`${key}\n${id}`, read);
      // A failed read is not remembered (the next page tries again).
      read.catch(() => {
        for (const id of fresh) this.#values.delete(`${key}\n${id}`);
      });
    }
    await Promise.all(ids.map((id) => this.#values.get(`${key}\n${id}`)));
  }

  /** Whether a segment needs no sorted read for its list: no values of the metric, a top lists file, or read whole. */
  #nothingToRead(segment: SegmentEntry, metricId: number): boolean {
    return !segment.metrics.includes(metricId) || this.#listed(segment) || this.whole(segment);
  }

  /** Whether a segment's list was asked for (read, being read, or queued), or there is nothing to read or only its top lists file. */
  asked(snap: Snapshot, segment: SegmentEntry, metricId: number | undefined, ascending: boolean): boolean {
    if (metricId === undefined || this.#nothingToRead(segment, metricId)) return true;
    const key = listKey(snap.path(segment), metricId, ascending);
    return this.#lists.has(key) || this.#queued.has(key);
  }

  /** Whether a segment's list has been read (or there is nothing to read, or only its top lists file): a page from the lists then waits for no scan. */
  ready(snap: Snapshot, segment: SegmentEntry, metricId: number | undefined, ascending: boolean): boolean {
    if (metricId === undefined || this.#nothingToRead(segment, metricId)) return true;
    return this.#ready.has(listKey(snap.path(segment), metricId, ascending));
  }

  /** Marks lists the background is about to read (pages asked meanwhile await them rather than scan everything). */
  queue(snap: Snapshot, segments: readonly SegmentEntry[], metricId: number | undefined, ascending: boolean): void {
    if (metricId === undefined) return;
    for (const s of segments)
      if (s.metrics.includes(metricId) && !this.whole(s)) this.#queued.add(listKey(snap.path(s), metricId, ascending));
  }

  /** Forgets the queued marks of lists not started (the background work ended early): a later page queues them again. */
  dequeue(snap: Snapshot, segments: readonly SegmentEntry[], metricId: number | undefined, ascending: boolean): void {
    if (metricId === undefined) return;
    for (const s of segments) {
      const key = listKey(snap.path(s), metricId, ascending);
      if (!this.#lists.has(key)) this.#queued.delete(key);
    }
  }

  /** Whether the segment's lists come from its top lists file (they hold TOP_LIST_ROWS rows: a cache keeping more reads the segment). */
  #listed(segment: SegmentEntry): boolean {
    return segment.top_lists === true && this.rows <= TOP_LIST_ROWS;
  }

  /** From the segment's top lists file; from the segment itself when that file cannot be read (it is only an index). */
  async #readListed(
    path: string,
    metricId: number,
    ascending: boolean,
    metrics: readonly number[],
    values: readonly number[],
  ): Promise<Kept> {
    // Other metrics' values only as a filter asks for them (converting every metric's column cost most
    // of a list's read).
    const asked = values.filter((m) => m !== metricId && metrics.includes(m));
    let rows: Row[];
    try {
      rows = await readTopList(this.#db, path, metricId, ascending, this.rows, asked);
    } catch {
      return this.#read(path, metricId, ascending, metrics);
    }
    return this.#listOf(rows, metricId, asked, new Set(metrics.filter((m) => m !== metricId && !asked.includes(m))));
  }

  async #read(path: string, metricId: number, ascending: boolean, metrics: readonly number[]): Promise<Kept> {
    const dir = raw(ascending ? 'ASC' : 'DESC');
    // Metric ids are numbers from the manifest, never user text.
    const col = ident(`m${Math.trunc(metricId)}`);
    const all = joinSql(metrics.map((m) => ident(`m${Math.trunc(m)}`)));
    const rows = await this.#db.all(
      sql`SELECT seq, epoch_us(created_at) AS c, id, type, session_id, trace_id, parent_id, has_children, status_code, model, ${col} AS v, ${all}
       FROM read_parquet(${path}, hive_partitioning = false) WHERE ${col} IS NOT NULL ORDER BY ${col} ${dir}, id ${dir} LIMIT ${int(this.rows + 1)}`,
    );
    return this.#listOf(rows, metricId, metrics, new Set());
  }

  /** A list from its rows, best first (one more than kept when the segment holds more), with the values of `metrics` and the sort metric's. */
  #listOf(rows: Row[], metricId: number, metrics: readonly number[], missing: Set<number>): Kept {
    const list = rows.slice(0, this.rows).map((r) => ({
      seq: Number(r['seq']),
      c: Number(r['c']),
      id: String(r['id']),
      type: (r['type'] as string | null) ?? null,
      session_id: (r['session_id'] as string | null) ?? null,
      trace_id: (r['trace_id'] as string | null) ?? null,
      parent_id: (r['parent_id'] as string | null) ?? null,
      has_children: (r['has_children'] as boolean | null) ?? null,
      status_code: r['status_code'] === null || r['status_code'] === undefined ? null : Number(r['status_code']),
      model: (r['model'] as string | null) ?? null,
      v: Number(r['v']),
      m: {
        ...Object.fromEntries(metrics.map((id) => [id, r[`m${id}`] === null || r[`m${id}`] === undefined ? null : Number(r[`m${id}`])])),
        [metricId]: Number(r['v']),
      },
    }));
    return { rows: list, truncated: rows.length > this.rows, missing };
  }

  /** Forgets lists of files merged or deleted since, once the cache has grown past what is live. */
  prune(snap: Snapshot): void {
    const live = [...snap.segmentsOfKind('span'), ...snap.segmentsOfKind('trace'), ...snap.segmentsOfKind('session')];
    if (this.#lists.size + this.ends.size <= 4 * live.length + 64) return;
    const keep = new Set(live.map((s) => snap.path(s)));
    for (const k of this.ends.keys()) if (!keep.has(k.split('\n')[0]!)) this.ends.delete(k);
    for (const k of this.#lists.keys()) {
      if (keep.has(k.split('\n')[0]!)) continue;
      this.#lists.delete(k);
      this.#queued.delete(k);
      this.#ready.delete(k);
    }
  }
}

const listKey = (path: string, metricId: number, ascending: boolean) => `${path}\n${metricId}\n${ascending ? 'asc' : 'desc'}`;
