// The side indexes of the segments listed when a writable store opened, checked after the open and
// rebuilt where missing, damaged or stale (a folder of an older version has no row files, another
// DuckDB hashes differently). In the open this cost seconds at 100M spans; here it runs in the
// background, one segment at a time: child indexes first (deletes use them), then text and value indexes. A
// check only reads headers and footers; a rebuild reads the segment, so it first waits for a pause in
// appends, as merges do. Until a segment's index is checked, readers do without it
// (unchecked-indexes.ts): deletes read the segments' columns, token counts read the rows. Files are
// built aside and renamed (child-index.ts, text-index.ts), so no reader meets half a file. A close
// stops the work: what it did not check, the next open checks. A read-only store never repairs.
import { join } from 'node:path';
import type { Connection } from '../../db/database.js';
import { interruptUntilSettled } from '../../db/interrupt-until.js';
import { childIndexSound, ensureChildIndex } from '../indexes/child-index.js';
import { ensureTextIndex, textIndexSound } from '../indexes/text-index.js';
import { ensureValueIndex, removeValueIndex, valueIndexOf } from '../indexes/value-index.js';
import { markChecked, markUnchecked, type CheckedIndex } from '../indexes/unchecked-indexes.js';
import type { SegmentEntry } from '../manifest/manifest.js';
import type { StoreState } from '../store-state.js';
import { sql } from '../../query/sql.js';

interface Job {
  /** 'values': the value index, which readers check at each load (no unchecked mark). */
  readonly kind: CheckedIndex | 'values';
  readonly seg: SegmentEntry;
  readonly abs: string;
}

export class IndexRepair {
  readonly #s: StoreState;
  readonly #jobs: readonly Job[];
  #task: Promise<void> | null = null;
  /** Its own connection, so a close can interrupt a rebuild without touching seals or merges. */
  #conn: Connection | null = null;
  #stopped = false;
  /** A delete waits for the child indexes: their rebuilds no longer wait for a pause in appends. */
  #urgent = false;
  #childrenDone: () => void = () => undefined;
  /** Settles once every child index job is done (or the work ended). */
  readonly #children = new Promise<void>((r) => {
    this.#childrenDone = r;
  });
  readonly #smallValueIndexes: readonly string[];
  /** Indexes rebuilt so far (tests, benchmarks). */
  rebuilt = 0;

  /**
   * Token files of an earlier open with the text index, which this store (without it) never checks:
   * readers leave them alone while it is open.
   */
  readonly #unusedTokens: readonly string[];

  /** Readers leave the indexes of `segments` alone from now until each is checked. */
  constructor(s: StoreState, segments: readonly SegmentEntry[]) {
    this.#s = s;
    const jobs = (kind: Job['kind'], of = segments): Job[] => of.map((seg) => ({ kind, seg, abs: join(s.dir, seg.file) }));
    this.#jobs = [
      ...jobs('child'),
      ...(s.options.textIndex ? jobs('tokens') : []),
      // Segments of an older version have none: built here, counts read the columns meanwhile.
      ...jobs(
        'values',
        segments.filter((seg) => seg.rows >= s.options.valueIndexMinRows),
      ),
    ];
    for (const j of this.#jobs) if (j.kind !== 'values') markUnchecked(j.kind, j.abs);
    // Smaller segments get none: one an earlier version (or a smaller valueIndexMinRows) wrote goes.
    this.#smallValueIndexes = segments.filter((seg) => seg.rows < s.options.valueIndexMinRows).map((seg) => join(s.dir, seg.file));
    this.#unusedTokens = s.options.textIndex ? [] : segments.map((seg) => join(s.dir, seg.file));
    for (const abs of this.#unusedTokens) markUnchecked('tokens', abs);
  }

  /** Starts the work unless it runs or ran; settles when it is done (or stopped). */
  run(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    this.#task ??= this.#work().finally(() => this.#childrenDone());
    return this.#task;
  }

  /**
   * Settles once the child indexes are checked and rebuilt (a delete without them reads every
   * segment's id strings, several times slower than the rebuild); from now on their rebuilds do not
   * wait for a pause in appends. At once when the work is held back (indexRepair 'held') or stopped.
   */
  childIndexes(): Promise<void> {
    if (this.#task === null || this.#stopped) return Promise.resolve();
    this.#urgent = true;
    return this.#children;
  }

  /** Stops the work (a rebuild under way is interrupted, its temporary files removed) and forgets what it left unchecked. */
  async stop(): Promise<void> {
    this.#stopped = true;
    // A rebuild runs several statements: each is interrupted until the work sees the stop.
    if (this.#task !== null) await interruptUntilSettled(this.#task, () => this.#conn);
    this.#childrenDone();
    // The store is closing: nothing reads through it any more.
    for (const j of this.#jobs) if (j.kind !== 'values') markChecked(j.kind, j.abs);
    for (const abs of this.#unusedTokens) markChecked('tokens', abs);
  }

  get #halted(): boolean {
    return this.#stopped || this.#s.closed;
  }

  async #work(): Promise<void> {
    // A turn first: the open's caller asks its first question before any check starts.
    await new Promise((r) => setImmediate(r));
    for (const abs of this.#smallValueIndexes) if (!this.#halted) removeValueIndex(abs);
    for (const job of this.#jobs) {
      if (job.kind !== 'child') this.#childrenDone();
      if (this.#halted) return;
      try {
        if ((await this.#settle(job)) && job.kind !== 'values') markChecked(job.kind, job.abs);
      } catch (err) {
        if (this.#halted) return;
        // Left unchecked: readers keep doing without it; the next open tries again.
        process.emitWarning(`tracelake: checking the indexes of ${job.seg.file} failed: ${(err as Error).message}`);
      }
    }
  }

  /** Checks one index, rebuilding it when needed; true when done (also when its segment left the store), false when stopped. */
  async #settle(job: Job): Promise<boolean> {
    if (await this.#whileListed(job, (c) => this.#sound(c, job))) return true;
    // A rebuild reads the whole segment: after a pause in appends (or the merges' longest wait).
    await this.#s.quiet('appends', () => this.#stopped || (this.#urgent && job.kind === 'child'));
    if (this.#halted) return false;
    await this.#whileListed(job, async (c) => {
      const bytes =
        job.kind === 'child'
          ? await ensureChildIndex(c, job.abs, job.seg)
          : job.kind === 'values'
            ? await ensureValueIndex(c, job.abs, job.seg.rows, job.seg.metrics)
            : await ensureTextIndex(c, job.abs, rowGroupRows(job.seg));
      this.#s.written.repairIndexes += bytes;
      this.rebuilt++;
      return true;
    });
    return true;
  }

  async #sound(c: Connection, job: Job): Promise<boolean> {
    if (job.kind === 'child') return childIndexSound(c, job.abs, job.seg);
    if (job.kind === 'values') return valueIndexOf(job.abs, job.seg.rows) !== null;
    const { usable, tokens } = textIndexSound(job.abs, rowGroupRows(job.seg));
    return usable && tokens;
  }

  /**
   * Runs `fn` while the segment's files are kept (a merge that retires it meanwhile leaves them, and
   * what `fn` wrote beside them, to be removed once `fn` is done); true without running it when the
   * segment is no longer listed.
   */
  async #whileListed(job: Job, fn: (c: Connection) => Promise<boolean>): Promise<boolean> {
    const s = this.#s;
    if (this.#conn === null) {
      const c = await s.db.dedicated();
      // Each segment is read once: its footer need not stay cached.
      await c.run(sql`SET SESSION parquet_metadata_cache = false`);
      this.#conn = c;
    }
    const release = s.use([job.seg.file]);
    try {
      if (!s.manifest.segments.some((g) => g.file === job.seg.file)) return true;
      return await fn(this.#conn);
    } finally {
      release();
    }
  }
}

function rowGroupRows(seg: SegmentEntry): number[] {
  return seg.row_groups.map((g) => g[2]);
}
