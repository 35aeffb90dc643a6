// The state the record store's parts share: the manifest, the memory tables, the id index, the dead
// set, the log. One object, so the writer (record-store.ts), the sealer (sealer.ts) and the compactor
// (compactor.ts) see the same thing; each change of the manifest goes through `commit`, which changes
// the in-memory state only after the new manifest is on disk.
import type { Connection, Database } from '../db/database.js';
import { ReadOnlyError, StorageError } from '../errors.js';
import type { RecordLinks } from '../record/record.js';
import type { CompactionPolicy } from './segments/compaction.js';
import { DeadSet } from './manifest/dead-set.js';
import { SealedIdIndex } from './indexes/id-index.js';
import { saveManifest, type ManifestState } from './manifest/manifest.js';
import type { MemInserter, MemTable } from './memtable/mem-tables.js';
import { Mutex } from './mutex.js';
import { KeptFiles } from './readers/leases.js';
import { ReplacedError } from './fs-util.js';
import { removeSegmentFiles } from './segments/segments.js';
import { SegmentDeadRows } from './snapshot/segment-dead-rows.js';
import type { RetentionView } from './snapshot/snapshot.js';
import type { WriteAheadLog } from './wal/wal.js';
import { sql } from '../query/sql.js';

/** Segments from this many rows get top lists when written (Infinity: none are written, topLists false). */
export const listsFrom = (o: Pick<StoreOptions, 'topLists' | 'topListMinRows'>): number => (o.topLists ? o.topListMinRows : Infinity);

export interface StoreOptions {
  /** Bytes of logged rows that freeze the active memory table for sealing. */
  readonly memTableBytes: number;
  /** Rows that freeze the active memory table. */
  readonly sealRows: number;
  readonly rowGroupSize: number;
  /** Rows per row group of sealed segments (RecordStoreOptions.sealRowGroupSize). */
  readonly sealRowGroupSize: number;
  readonly textIndex: boolean;
  /** RecordStoreOptions.topLists. */
  readonly topLists: boolean;
  /** RecordStoreOptions.topListMinRows. */
  readonly topListMinRows: number;
  /** RecordStoreOptions.valueIndexMinRows. */
  readonly valueIndexMinRows: number;
  readonly autoCompact: boolean;
  readonly compaction: CompactionPolicy;
  readonly compactionLevel: number;
  readonly notedColumns: readonly string[];
  /** Acknowledged appends whose insert may still run (RecordStoreOptions.pipelineDepth). */
  readonly pipelineDepth: number;
  readonly mergePauseMs: number;
  readonly mergeMaxDelayMs: number;
  readonly mergeThreads: number;
  /** RecordStoreOptions.deadRowLists. */
  readonly deadRowLists: { readonly afterDelete: number; readonly fromRows: number };
  /** Most ms a retired segment is kept for a read-only store's lease (RecordStoreOptions.readerGraceMs). */
  readonly readerGraceMs: number;
  /** RecordStoreOptions.idCheckpointAfter. */
  readonly idCheckpointAfter: number;
  /** RecordStoreOptions.indexRepair. */
  readonly indexRepair: 'background' | 'held';
  /** RecordStoreOptions.warmFooters. */
  readonly warmFooters: boolean;
}

/**
 * Bytes the store has written since open, by what wrote them (write amplification): Parquet segments
 * and their side files (id hashes, child and text indexes) by seals, merges and bulk loads, side files
 * rebuilt after open, and the manifest. The log's own count is the log's (WriteAheadLog.bytesWritten).
 */
export interface WriteTally {
  sealParquet: number;
  sealIndexes: number;
  mergeParquet: number;
  mergeIndexes: number;
  loadParquet: number;
  loadIndexes: number;
  /** Side files rebuilt after open (segments/index-repair.ts): missing, damaged or stale ones. */
  repairIndexes: number;
  manifest: number;
}

/** A recent record's links (what logging needs without asking DuckDB) and the memory table holding it. */
export type MemEntry = RecordLinks & { readonly table: number };

/** Forgets whose seq ranges are kept (RecordStore.isLive cannot tell about a mark older than them). */
const FORGET_LOG = 256;

export const memKey = (runId: string, id: string): string => `${runId}/${id}`;

export class StoreState {
  manifest: ManifestState;
  readonly index = new SealedIdIndex();
  readonly written: WriteTally = {
    sealParquet: 0,
    sealIndexes: 0,
    mergeParquet: 0,
    mergeIndexes: 0,
    loadParquet: 0,
    loadIndexes: 0,
    repairIndexes: 0,
    manifest: 0,
  };
  /** Every record in a memory table, by run and id (its newest version). */
  readonly memIds = new Map<string, MemEntry>();
  /** Every dead sequence number (the manifest's and the log's); mirrored by the `dead` table. */
  readonly dead = new DeadSet();
  /** Per segment, which of its rows are dead (counts of whole segments after a large delete). */
  readonly deadRows: SegmentDeadRows;
  /**
   * Bumped whenever dead seqs or has_children overrides are forgotten: a seq absent from `dead` and
   * `childless` is a version unchanged since a read only if this did not move since (RecordStore.isLive).
   */
  forgotten = 0;
  /** The seq range of each of the latest forgets (`n`: `forgotten` after it), oldest first. */
  readonly forgetLog: { readonly n: number; readonly lo: number; readonly hi: number }[] = [];
  /**
   * Log entries taken since open. Each entry's dead marks and childless marks carry its number in their
   * `clock` column, so a snapshot ignores marks logged after it began (see snapshot.ts).
   */
  clock = 0;
  /**
   * Log entries taken whose rows and marks are not in DuckDB yet, in clock order (an entry leaves once
   * its insert has committed or failed). `clock` and `nextSeq` move when an entry is taken, before its
   * insert commits: a snapshot bounded by them could see the entry in one statement and not in the
   * next (a record's old version in the first, its new one dead... see `visibleBounds`).
   */
  readonly unapplied: { readonly at: number; readonly firstSeq: number; readonly done: Promise<void> }[] = [];
  /** The newest log entry acknowledged to its writer (every read must see it). */
  ackedClock = 0;
  /** When rows were last appended (performance.now()): background merges wait for a pause in writing. */
  lastAppend = -Infinity;
  /** When a question last began or ended, and how many are under way: background work that competes with questions waits for a pause in them. */
  #lastRead = -Infinity;
  #readsInFlight = 0;
  /**
   * Sequence numbers of row versions whose has_children reads false (the manifest's and the log's),
   * mirrored by the `childless` table; a seal or merge writes the value into the file and drops them.
   */
  readonly childless = new Set<number>();
  /**
   * Parent spans that children logged before them wait for (the manifest's and the log's), by run/id
   * key, oldest first; a row logged with such an id gets has_children (see RecordStore.append).
   */
  readonly awaited = new Map<string, readonly [string, string, string]>();
  /** Memory tables, oldest first; the last one takes the writes. */
  mem: MemTable[] = [];
  nextSeq: number;
  nextSegment: number;
  /** Serialises changes of the manifest: seals, merge commits, drops. */
  readonly maint = new Mutex();
  /** Bumped whenever a seal moves records out of the memory tables. */
  sealGeneration = 0;
  /** Cleanups waiting for readers, compactions: run one after another. */
  background: Promise<unknown> = Promise.resolve();
  /** Set when the memory tables stopped matching the log (an insert failed): writes wait for a reopen. */
  broken: unknown = null;
  closed = false;
  /** A read-only store's state (readers/follower.ts): it follows the writer's files and changes none. */
  readOnly = false;

  /**
   * Where a snapshot taken now ends: before the oldest entry not yet in DuckDB, so every statement
   * over it sees the same rows and marks whenever it runs (entries after that one are left out too,
   * even those already committed: their inserts may have overtaken a retried one).
   */
  visibleBounds(): { clock: number; lastSeq: number } {
    const oldest = this.unapplied[0];
    return oldest ? { clock: oldest.at - 1, lastSeq: oldest.firstSeq - 1 } : { clock: this.clock, lastSeq: this.nextSeq - 1 };
  }

  assertOpen(): void {
    if (this.closed) throw new StorageError('record store is closed');
  }

  /** Writes need the memory tables to match the log (see `broken`). */
  assertWritable(what = 'writing records'): void {
    this.assertOpen();
    if (this.readOnly) throw new ReadOnlyError(what);
    if (this.broken)
      throw new StorageError('the in-memory tables no longer match the log after a failed insert; reopen the store', {
        cause: this.broken,
      });
  }
  readonly #inUse = new Map<string, number>();
  /** Retired files a merge still reads, with the generation that retired them. */
  readonly #retiredInUse = new Map<string, number>();
  /** Retired segments kept for read-only stores in other processes (readers/leases.ts). */
  readonly kept: KeptFiles;
  /** Retention (set by the engine): merges leave expired rows out. */
  retention: RetentionView | undefined;

  constructor(
    readonly dir: string,
    readonly db: Database,
    readonly wal: WriteAheadLog,
    readonly inserter: MemInserter,
    readonly conns: { readonly seal: Connection; readonly merge: Connection; readonly mergeWrite: Connection },
    readonly options: StoreOptions,
    manifest: ManifestState,
    /** The separate database merges write with (RecordStoreOptions.mergeThreads), closed with the store; null: they use `db`. */
    readonly mergeDb: Database | null = null,
  ) {
    this.manifest = manifest;
    this.deadRows = new SegmentDeadRows(dir, () => !this.readOnly);
    this.nextSeq = manifest.sealed_seq + 1;
    this.nextSegment = manifest.next_segment;
    this.kept = new KeptFiles(dir, (f) => removeSegmentFiles(dir, f), options.readerGraceMs);
  }

  get active(): MemTable {
    return this.mem[this.mem.length - 1]!;
  }

  /**
   * Writes a new manifest; on failure leaves the in-memory state as it was and removes `newFiles`,
   * unless the new manifest may already be on disk (its folder's fsync failed after the rename): then
   * a crash may bring back either manifest, so the files of both stay (the next manifest written
   * without them makes them leftovers, removed on open).
   */
  commit(state: ManifestState, newFiles: readonly string[]): void {
    try {
      this.written.manifest += saveManifest(this.dir, state);
    } catch (err) {
      if (!(err instanceof ReplacedError)) for (const f of newFiles) removeSegmentFiles(this.dir, f);
      throw new StorageError('writing the manifest failed', { cause: err });
    }
    this.manifest = state;
  }

  /** Counts a written segment and its side files against what wrote it. */
  tally(cause: 'seal' | 'merge' | 'load', segment: { readonly entry: { readonly bytes: number }; readonly sideBytes: number }): void {
    this.written[`${cause}Parquet`] += segment.entry.bytes;
    this.written[`${cause}Indexes`] += segment.sideBytes;
  }

  /** A question (a snapshot's reads, or a server about to take them) begins; the function returned ends it, once. */
  questionBegins(): () => void {
    this.#lastRead = performance.now();
    this.#readsInFlight++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#readsInFlight--;
      this.#lastRead = performance.now();
    };
  }

  /** The current ticks of quiet() waits (wake ends them). */
  readonly #wakers = new Set<() => void>();

  /** Ends every quiet() wait's current tick now: a close has set their stops, and need not wait a tick for them. */
  wake(): void {
    for (const w of [...this.#wakers]) w();
  }

  /**
   * Resolves once `what` has paused for mergePauseMs (true), mergeMaxDelayMs have passed (false: it
   * goes on), or the store closes or `stopped` says so (true). Background work that would take CPU from
   * writes ('appends': merges, index rebuilds) or from questions ('questions': none in flight, none
   * asked since `since` or lately) waits for it; it holds nothing meanwhile.
   */
  async quiet(what: 'appends' | 'questions', stopped: () => boolean = () => false, since = -Infinity): Promise<boolean> {
    const { mergePauseMs: pause, mergeMaxDelayMs: most } = this.options;
    const until = performance.now() + most;
    for (;;) {
      const now = performance.now();
      const last = what === 'appends' ? this.lastAppend : this.#readsInFlight > 0 ? now : this.#lastRead;
      const quietFor = now - Math.max(last, since);
      if (this.closed || stopped() || quietFor >= pause) return true;
      if (now >= until) return false;
      // Short ticks, so a stop seen only by `stopped` waits at most one of them (a close wakes them at once).
      const wait = Math.min(pause - quietFor, until - now, 100);
      await new Promise<void>((r) => {
        const done = () => {
          clearTimeout(timer);
          this.#wakers.delete(done);
          r();
        };
        const timer = setTimeout(done, Math.max(1, wait));
        this.#wakers.add(done);
      });
    }
  }

  /** Runs `fn` as background work (later) and resolves with its result, or `failed` when it throws (reported as later does). */
  inTurn<T>(what: string, fn: () => Promise<T>, failed: T): Promise<T> {
    return new Promise<T>((resolve) => {
      let out = failed;
      this.later(what, async () => {
        try {
          out = await fn();
        } finally {
          resolve(out);
        }
      });
    });
  }

  /** Queues background work (never fails the chain; a failure is reported). */
  later(what: string, fn: () => Promise<unknown>): void {
    this.background = this.background
      .then(fn)
      .catch((err: unknown) => process.emitWarning(`tracelake: ${what} failed: ${(err as Error).message}`));
  }

  /** Runs `fn` once every reader that may still use what was just replaced has finished. */
  afterReaders(fn: () => Promise<void>): void {
    this.db.afterStatementsInFlight(() => this.later('cleanup', fn));
  }

  /**
   * Marks segment files as read by a merge until the returned function is called. A merge reads
   * outside the manifest lock and without a reader's pin (a pin would hold back every cleanup for the
   * seconds a merge takes), so a drop that retires its inputs meanwhile leaves their files until then.
   */
  use(files: readonly string[]): () => void {
    for (const f of files) this.#inUse.set(f, (this.#inUse.get(f) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const f of files) {
        const n = (this.#inUse.get(f) ?? 1) - 1;
        if (n > 0) {
          this.#inUse.set(f, n);
          continue;
        }
        this.#inUse.delete(f);
        const retiredAt = this.#retiredInUse.get(f);
        if (retiredAt !== undefined) {
          this.#retiredInUse.delete(f);
          this.kept.retire(f, retiredAt);
        }
      }
    };
  }

  /**
   * Deletes replaced files, then forgets their dead seqs and folded overrides, once no reader may still
   * use them (this process's readers; those of read-only stores elsewhere hold a lease: `kept`).
   */
  retire(files: readonly string[], purged: readonly number[], folded: readonly number[] = []): void {
    const retiredAt = this.manifest.generation;
    this.afterReaders(async () => {
      for (const f of files) {
        if (this.#inUse.has(f)) this.#retiredInUse.set(f, retiredAt);
        else this.kept.retire(f, retiredAt);
      }
      await this.forget(purged);
      await this.forgetChildless(folded);
    });
  }

  #noteForget(seqs: readonly number[]): void {
    let lo = Number.POSITIVE_INFINITY;
    let hi = Number.NEGATIVE_INFINITY;
    for (const q of seqs) {
      if (q < lo) lo = q;
      if (q > hi) hi = q;
    }
    this.forgetLog.push({ n: ++this.forgotten, lo, hi });
    if (this.forgetLog.length > FORGET_LOG) this.forgetLog.shift();
  }

  /** has_children overrides now written into the files (or whose rows are gone): dropped from the set. */
  async forgetChildless(seqs: readonly number[]): Promise<void> {
    if (seqs.length === 0) return;
    this.#noteForget(seqs);
    for (const s of seqs) this.childless.delete(s);
    await this.inserter.run(sql`DELETE FROM childless WHERE seq IN (SELECT unnest(${seqs}::BIGINT[]))`);
  }

  /** Dead seqs whose rows are gone from every file and table: dropped from the dead set. */
  async forget(seqs: readonly number[]): Promise<void> {
    if (seqs.length === 0) return;
    this.#noteForget(seqs);
    this.dead.deleteAll(seqs);
    await this.inserter.run(sql`DELETE FROM dead WHERE seq IN (SELECT unnest(${seqs}::BIGINT[]))`);
  }
}
