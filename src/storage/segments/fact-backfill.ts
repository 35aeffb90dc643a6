// Segments written before their manifest entries kept the planner's facts (type-facts.ts,
// metric-facts.ts) or before segments had top lists (indexes/top-lists.ts) lack them until a merge
// rewrites them, and the planner then reads their footers or scans them on a process's first
// question. After a writable open they are measured (lists written) from the files in the
// background: one segment per turn of the store's background queue (cleanups queued meanwhile are
// not held back long), each once no question has run for a moment (the first questions after an open
// would otherwise scan the same files at the same time), and saved in the manifest in batches under
// the manifest lock. Only segments still listed at that moment get facts: a merge or drop committed
// meanwhile wins, and what a close stops before saving is measured again by the next open.
import type { Connection } from '../../db/database.js';
import { interruptUntilSettled } from '../../db/interrupt-until.js';
import { join } from 'node:path';
import { sql } from '../../query/sql.js';
import { partitionRows, type ManifestState, type SegmentEntry } from '../manifest/manifest.js';
import { listsFrom, type StoreState } from '../store-state.js';
import { measureFullMetrics } from './metric-facts.js';
import { measureTypeFacts } from './type-facts.js';
import { listedEntry, TOP_LIST_ROWS, topListRows, writeTopLists } from '../indexes/top-lists.js';

/** Segments measured before their facts are saved (one manifest write each). */
const SAVE_EVERY = 16;

type Facts = Pick<SegmentEntry, 'type_facts' | 'full_metrics' | 'top_lists' | 'top_list_rows' | 'top_list_places' | 'top_list_filters'>;

/**
 * Whether a segment's top lists would be written with it (`minRows`: from StoreOptions.topListMinRows,
 * Infinity for none) and are not on disk as this build writes them (as deep, with the rows' places and
 * filter columns).
 */
const lacksLists = (seg: SegmentEntry, minRows: number, partition: number) =>
  seg.metrics.length > 0 &&
  seg.rows >= minRows &&
  (seg.top_lists !== true ||
    seg.top_list_places !== true ||
    seg.top_list_filters !== true ||
    (seg.top_list_rows ?? TOP_LIST_ROWS) < topListRows(seg.rows, partition));

/**
 * Whether a segment's entry lacks a fact a seal of this build would record for it (`factColumns`:
 * StoreOptions.notedColumns; `partition`: the rows of its run and kind, itself included).
 */
export function lacksFacts(seg: SegmentEntry, factColumns: readonly string[], listMinRows = Infinity, partition = seg.rows): boolean {
  return (
    seg.full_metrics === undefined ||
    (seg.kind === 'span' && factColumns.length > 0 && seg.type_facts === undefined) ||
    lacksLists(seg, listMinRows, partition)
  );
}

/** The facts a seal would record for the segment and its entry lacks, measured from its file (only those that could be read). */
async function measure(
  conn: Connection,
  abs: string,
  seg: SegmentEntry,
  factColumns: readonly string[],
  listMinRows: number,
  partition: number,
  stopped: () => boolean,
): Promise<Facts> {
  const out: { -readonly [K in keyof Facts]?: Facts[K] } = {};
  if (seg.kind === 'span' && factColumns.length > 0 && seg.type_facts === undefined) {
    const facts = await measureTypeFacts(conn, abs, factColumns);
    if (facts) out.type_facts = facts;
  }
  if (seg.full_metrics === undefined && !stopped()) {
    // As a seal records it: no metric column, nothing to read.
    const full = seg.metrics.length > 0 ? await measureFullMetrics(conn, abs) : [];
    if (full) out.full_metrics = full;
  }
  // Written before the manifest says so (a crash in between leaves a file the next open writes again).
  const depth = topListRows(seg.rows, partition);
  if (lacksLists(seg, listMinRows, partition) && !stopped() && (await writeTopLists(conn, abs, seg.metrics, depth)))
    Object.assign(out, listedEntry(depth));
  return out;
}

export class FactBackfill {
  readonly #s: StoreState;
  #stopped = false;
  #conn: Connection | null = null;
  /** The measurement under way, if any. */
  #measuring: Promise<unknown> | null = null;
  #done: Promise<void> = Promise.resolve();
  #running = false;
  /** Asked to start while running: look again for segments lacking facts before ending. */
  #again = false;

  constructor(state: StoreState) {
    this.#s = state;
  }

  /**
   * Queues the work when some listed segment lacks facts (a writable store only): after an open, and
   * after an import (whose segments get their top lists here rather than in the import's time).
   */
  start(): void {
    const s = this.#s;
    const cols = s.options.notedColumns;
    const lists = listsFrom(s.options);
    if (s.readOnly || this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    const lacks = (g: SegmentEntry) => lacksFacts(g, cols, lists, partitionRows(s.manifest.segments, g));
    if (!s.manifest.segments.some(lacks)) return;
    this.#running = true;
    const found = new Map<string, Facts>();
    const tried = new Set<string>();
    const openedAt = performance.now();
    // One segment per turn of the background queue.
    const step = async (): Promise<boolean> => {
      let seg: SegmentEntry | undefined;
      try {
        seg = this.#stopped ? undefined : s.manifest.segments.find((g) => !tried.has(g.file) && lacks(g));
        if (seg) {
          tried.add(seg.file);
          const facts = await this.#measure(seg);
          if (Object.keys(facts).length > 0) found.set(seg.file, facts);
        }
      } finally {
        // What was measured is saved, also when a stop or a failure ends the work.
        if (found.size >= SAVE_EVERY || ((seg === undefined || this.#stopped) && found.size > 0)) await this.#save(found);
      }
      return seg !== undefined;
    };
    this.#done = (async () => {
      try {
        for (;;) {
          // Questions get the CPU first, but not forever (mergeMaxDelayMs). The wait holds no turn of the
          // queue (cleanups go on); the open counts as a question: the first ones usually follow it at once.
          await s.quiet('questions', () => this.#stopped, openedAt);
          if (await s.inTurn('measuring segment facts', step, false)) continue;
          if (!this.#again || this.#stopped) return;
          this.#again = false;
        }
      } finally {
        this.#running = false;
      }
    })();
  }

  /**
   * Stops between two segments (what was measured is saved by the step under way, or the last one) and
   * interrupts a measurement under way; resolves once the work has ended. An interrupt between two
   * statements is lost, so it is repeated.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    while (this.#measuring) await interruptUntilSettled(this.#measuring, () => this.#conn);
    await this.#done;
  }

  /** Settles when the work asked for is done or stopped (tests, benchmarks). */
  settled(): Promise<void> {
    return this.#done;
  }

  async #measure(seg: SegmentEntry): Promise<Facts> {
    const s = this.#s;
    if (!this.#conn) {
      this.#conn = await s.db.dedicated();
      // Read once each: footers kept in DuckDB's cache would stay there after the segments merge away.
      await this.#conn.run(sql`SET SESSION parquet_metadata_cache = false`);
    }
    if (this.#stopped) return {};
    // A drop or merge committed meanwhile leaves the file to this read.
    const release = s.use([seg.file]);
    const partition = partitionRows(s.manifest.segments, seg);
    const measuring = measure(
      this.#conn,
      join(s.dir, seg.file),
      seg,
      s.options.notedColumns,
      listsFrom(s.options),
      partition,
      () => this.#stopped,
    );
    this.#measuring = measuring;
    try {
      return await measuring;
    } finally {
      this.#measuring = null;
      release();
    }
  }

  /** Writes the measured facts into the entries of the segments still listed, as one manifest change. */
  async #save(found: Map<string, Facts>): Promise<void> {
    const s = this.#s;
    try {
      await s.maint.run(async () => {
        let changed = false;
        const segments = s.manifest.segments.map((g) => {
          const f = found.get(g.file);
          if (!f) return g;
          changed = true;
          return { ...g, ...f };
        });
        if (!changed) return;
        const state: ManifestState = { ...s.manifest, generation: s.manifest.generation + 1, segments };
        s.commit(state, []);
      });
    } finally {
      found.clear();
    }
  }
}
