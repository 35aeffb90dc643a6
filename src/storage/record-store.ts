// A small LSM over Parquet. A request's rows become one Arrow batch, written to the write-ahead log
// (Arrow IPC, see wal.ts) and inserted into the active in-memory DuckDB table before it is
// acknowledged, so every read sees every acknowledged row without loading anything first. A full
// table is frozen and sealed in the background into immutable ZSTD Parquet segments per (project,
// run, kind), sorted by created_at then id; background merges keep segments few. Replacing or
// deleting a row marks its sequence number dead (a tombstone logged with the request that caused it);
// readers skip dead rows until a seal or merge leaves them out of the files. A parent a delete leaves
// without children is not rewritten: the seq of its row version is marked childless in the same log
// entry, readers show has_children false for it, and a seal or merge writes that value into the file.
// A newer version of the parent has a new seq, so the override never hides it.
//
// Invariants:
// - the memory table mem_<n> holds exactly the rows of log file n; files up to manifest.sealed_wal are
//   in segments (and deleted);
// - every acknowledged row and tombstone is in the log or in the manifest (tombstones reach the
//   manifest with the seal of their log file, never before the rows that replaced them are on disk);
// - for each id at most one live row exists across the memory tables and the segments;
// - the in-memory state changes only after the manifest write that records the change succeeded.
import { join } from 'node:path';
import { Appender } from './memtable/appender.js';
import type { Database } from '../db/database.js';
import type { Param } from '../query/sql.js';
import type { LogRow, StoredRow } from '../record/record.js';
import { storedRows } from '../record/record-checks.js';
import { bulkLoad, type BulkBatch } from './segments/bulk-load.js';
import { Compactor } from './segments/compactor.js';
import { FactBackfill } from './segments/fact-backfill.js';
import { warmFooters } from './segments/footer-warm.js';
import { partitionKey, type ManifestState } from './manifest/manifest.js';
import { convertLegacy, openStoreState } from './record-store-open.js';
import type { RecordStoreOptions } from './record-store-options.js';
import { Follower, type FollowOptions } from './readers/follower.js';
import { isVanishedFile } from './readers/vanished.js';
import { IndexRepair } from './segments/index-repair.js';
import { Sealer } from './segments/sealer.js';
import type { SourceSql } from './snapshot/snapshot-source.js';
import { Snapshot, type RetentionView, type Scope } from './snapshot/snapshot.js';
import { memKey, type MemEntry, type StoreState, type WriteTally } from './store-state.js';
import { raw, sql } from '../query/sql.js';

/** Tries of a read-only store's read that meets vanished files (each after a refresh). */
const READ_TRIES = 4;

export class RecordStore {
  readonly #s: StoreState;
  readonly #sealer: Sealer;
  readonly #compactor: Compactor;
  readonly #appender: Appender;
  /** Facts missing from older segments' entries, measured in the background (segments/fact-backfill.ts). */
  readonly #facts: FactBackfill;

  /** A read-only store's view of the writer's files (readers/follower.ts); null for the writer. */
  readonly #follower: Follower | null;
  /** Refresh before every read (a read-only store's option). */
  readonly #refreshEachRead: boolean;
  /** Dead-row lists being made after a large delete (see #listDeadRows); close stops them. */
  #deadLists: Promise<void> = Promise.resolve();
  /** The indexes of the segments found on open, checked after it (a writable store's; index-repair.ts). */
  #repair: IndexRepair | null = null;
  #stopping = false;
  /** The footers' warm-up after open (segments/footer-warm.ts); close waits for it to stop. */
  #warmed: Promise<void> = Promise.resolve();

  private constructor(state: StoreState, follower: Follower | null = null, refreshEachRead = false) {
    this.#s = state;
    this.#follower = follower;
    this.#refreshEachRead = refreshEachRead;
    this.#sealer = new Sealer(state);
    this.#compactor = new Compactor(state);
    this.#facts = new FactBackfill(state);
    this.#appender = new Appender(
      state,
      this.#sealer,
      <T>(fn: (snap: Snapshot) => Promise<T>) => this.read(fn),
      () => this.#compactor.schedule(),
    );
    if (state.options.warmFooters) this.#warmed = warmFooters(state, () => this.#stopping || state.closed);
    this.#sealer.onSealed = () => {
      if (state.options.autoCompact && !state.closed) this.#compactor.schedule();
    };
  }

  static open(dir: string, db: Database, options: RecordStoreOptions = {}): Promise<RecordStore> {
    return openStoreState(dir, db, options, async (s) => {
      const store = new RecordStore(s);
      // Before any reader: until checked, the indexes of the segments found are left alone.
      store.#repair = new IndexRepair(s, s.manifest.segments);
      await convertLegacy(s, (rows) => store.append(rows, true));
      if (s.mem.some((t) => t.frozen)) store.#sealer.kick();
      if (s.options.indexRepair === 'background') void store.#repair.run();
      store.#facts.start();
      return store;
    });
  }

  /**
   * A store that reads beside the folder's writer (another process) and changes nothing in the folder
   * but its lease (readers/): the manifest plus the acknowledged log, as of now; `refresh` moves it on.
   */
  static async openReadOnly(
    dir: string,
    db: Database,
    options: RecordStoreOptions & FollowOptions & { refreshBeforeRead?: boolean } = {},
  ): Promise<RecordStore> {
    const { state, follower } = await Follower.open(dir, db, options);
    return new RecordStore(state, follower, options.refreshBeforeRead === true);
  }

  /** Whether this store only reads (openReadOnly). */
  get readOnly(): boolean {
    return this.#follower !== null;
  }

  /** A read-only store moves to the newest state of the folder; the writer always has it. */
  async refresh(): Promise<void> {
    await this.#follower?.refresh();
  }

  /**
   * Whether a read that failed with `err` on its `attempt`th try (0 first) should run again on a newer
   * snapshot: a read-only store's read that met a file the writer removed after the snapshot was taken.
   */
  retriesAfter(err: unknown, attempt: number): boolean {
    return this.#follower !== null && attempt < READ_TRIES && isVanishedFile(err, this.#s.dir);
  }

  // ---------------------------------------------------------------- writing

  /**
   * Logs rows of one project and run (their seq is assigned here), replacing older versions of the
   * same ids. Resolves once they are in the log (on disk, if `sync`); every read that starts later
   * sees them (it waits for their DuckDB insert). `awaits`: ids of parent spans (not logged yet) that these rows are children of (awaited.ts).
   */
  append(rows: readonly LogRow[], sync: boolean, awaits: readonly string[] = []): Promise<void> {
    return this.#appender.append(rows, sync, awaits);
  }

  /** Writes flat rows (read by DuckDB) straight into segments of one run, one commit (bulk-load.ts). */
  async bulkLoad(projectId: string, runId: string, batch: BulkBatch): Promise<number> {
    this.#s.assertWritable();
    const n = await bulkLoad(this.#s, projectId, runId, batch);
    if (n > 0 && this.#s.options.autoCompact) this.#compactor.schedule();
    return n;
  }

  /**
   * Starts the background work on segments lacking facts or top lists: called once an import has
   * loaded its segments (bulk loads leave their top lists to it: writing them took 60% more time).
   */
  measureLater(): void {
    this.#facts.start();
  }

  /** Deletes rows by seq and marks parents childless, durably, in one log entry (see Appender.deleteSeqs). */
  async deleteSeqs(seqs: readonly number[], childless: readonly number[] = []): Promise<void> {
    await this.#appender.deleteSeqs(seqs, childless);
    if (seqs.length >= this.#s.options.deadRowLists.afterDelete) this.#deadLists = this.#deadLists.then(() => this.#listDeadRows());
  }

  /**
   * After a large delete, which spreads dead rows over many segments, makes the large segments' dead-row
   * lists in the background (segment-dead-rows.ts), so the counts that follow, and those after the
   * next open, need not read the segments. Stops between two segments when the store closes.
   */
  async #listDeadRows(): Promise<void> {
    const s = this.#s;
    if (this.#stopping) return;
    const snap = this.snapshot();
    try {
      const free = snap.deadFreeFiles();
      // Smaller segments are cheap to read, and soon merged.
      const dirty = s.manifest.segments.filter((g) => g.rows >= s.options.deadRowLists.fromRows && !free.has(g.file));
      await s.deadRows.deadSeqs(s.db, s.dir, dirty, s.dead, s.manifest.segments, () => this.#stopping);
    } catch (err) {
      // Only a cache: counts make what is missing.
      process.emitWarning(`tracelake: listing dead rows failed: ${(err as Error).message}`);
    } finally {
      snap.release();
    }
  }

  /** The highest seq assigned so far (every row written later has a higher one). */
  get lastSeq(): number {
    return this.#s.nextSeq - 1;
  }

  /** The latest version of a record in a memory table, if any (no DuckDB round trip). */
  recent(runId: string, id: string): MemEntry | undefined {
    return this.#s.memIds.get(memKey(runId, id));
  }

  /** A mark to give `isLive` for rows read after it was taken. */
  liveMark(): number {
    return this.#s.forgotten;
  }

  /**
   * Whether the row version `seq` (read after `mark` was taken) is still its record's live version as
   * read: false once a newer version or a delete replaced it (marked dead when that write was taken),
   * or a has_children override applies to it (read again to know its value). Null when the store
   * cannot tell: marks in a range holding `seq` were forgotten since `mark` (it may have been one).
   */
  isLive(seq: number, mark: number): boolean | null {
    const s = this.#s;
    if (s.dead.has(seq) || s.childless.has(seq)) return false;
    if (s.forgotten === mark) return true;
    // Forgotten since the mark: only a seq outside every range forgotten since is known live.
    const log = s.forgetLog;
    if (log.length === 0 || log[0]!.n > mark + 1) return null;
    for (let i = log.length - 1; i >= 0 && log[i]!.n > mark; i--) if (seq >= log[i]!.lo && seq <= log[i]!.hi) return null;
    return true;
  }

  /** False when the id certainly has no record in the run; true when it may (then `lookup` tells). */
  mayExist(projectId: string, runId: string, id: string): boolean {
    return this.#s.memIds.has(memKey(runId, id)) || this.#s.index.candidates(id, `records/${partitionKey(projectId, runId)}`).length > 0;
  }

  // ---------------------------------------------------------------- reading

  /** Which records have expired (retention); reads leave them out and merges drop them. Set by the engine. */
  get retention(): RetentionView | undefined {
    return this.#s.retention;
  }

  set retention(view: RetentionView | undefined) {
    this.#s.retention = view;
  }

  /**
   * Resolves once every acknowledged append is visible to a snapshot taken afterwards (appends return
   * before their DuckDB insert commits). `read` and `lookup` wait for it; a caller of `snapshot` must.
   */
  async settled(): Promise<void> {
    await this.#appender.visible();
    if (this.#refreshEachRead) await this.#follower?.refresh();
  }

  /** Settles when the id filter's background work (covering segments, a rebuild, saving its checkpoint) is done (tests, benchmarks). */
  idFilterSettled(): Promise<void> {
    return this.#s.index.settled();
  }

  /** Settles when the facts missing from older segments' entries are measured and saved, or the work stopped (tests, benchmarks). */
  factsSettled(): Promise<void> {
    return this.#facts.settled();
  }

  /** Settles once the footers' warm-up after open has read them all or stopped (tests, benchmarks). */
  footersWarmed(): Promise<void> {
    return this.#warmed;
  }

  /**
   * Settles once the child and text indexes of the segments found on open are checked and those
   * missing, damaged or stale rebuilt (or the store closed); starts that work with indexRepair 'held'.
   * Returns how many were rebuilt (tests, benchmarks).
   */
  async indexesRepaired(): Promise<number> {
    await this.#repair?.run();
    return this.#repair?.rebuilt ?? 0;
  }

  /** Settles once the child indexes of the segments found on open are checked and rebuilt (a delete waits for them; see IndexRepair.childIndexes). */
  childIndexesChecked(): Promise<void> {
    return this.#repair?.childIndexes() ?? Promise.resolve();
  }

  /** A consistent view for reads, of what is in DuckDB (see `settled`); release it when done (see snapshot.ts). */
  snapshot(): Snapshot {
    this.#s.assertOpen();
    const s = this.#s;
    const snap = new Snapshot(
      s.dir,
      s.db,
      s.manifest,
      [...s.mem],
      s.index,
      { ...s.visibleBounds(), dead: s.dead, deadRows: s.deadRows },
      this.retention,
      s.childless.size > 0,
    );
    if (this.#follower) snap.onRelease(this.#follower.pin(snap.generation));
    snap.onRelease(s.questionBegins());
    return snap;
  }

  /**
   * Questions are about to come (a server is starting): until the returned function is called, and for
   * a pause after, background work that waits for a pause in questions (the open's id filter cover,
   * the footers' warm-up, the facts' backfill) waits, as for a question in flight. Calling it again
   * does nothing.
   */
  expectQuestions(): () => void {
    return this.#s.questionBegins();
  }

  /** Resolves once no question has run for a moment (StoreState.quiet): background reads that compete with questions wait for it. */
  questionsPause(): Promise<boolean> {
    return this.#s.quiet('questions');
  }

  /**
   * Runs `fn` over a snapshot, released afterwards. In a read-only store, a read that meets a file the
   * writer removed meanwhile runs again on a newer snapshot (`retriesAfter`).
   */
  async read<T>(fn: (snap: Snapshot) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      if (this.#follower) await this.settled();
      else {
        const unseen = this.#appender.visible();
        if (unseen) await unseen;
      }
      const snap = this.snapshot();
      try {
        return await fn(snap);
      } catch (err) {
        if (!this.retriesAfter(err, attempt)) throw err;
      } finally {
        snap.release();
      }
      await this.#follower!.refresh();
    }
  }

  /** Live rows with these ids in a run (any kind), timestamps as epoch µs. Sees every acknowledged row. */
  async lookup(projectId: string, runId: string, ids: readonly string[]): Promise<StoredRow[]> {
    if (ids.length === 0) return [];
    const inMem = ids.some((id) => this.#s.memIds.has(memKey(runId, id)));
    return storedRows(await this.read((snap) => snap.lookup(projectId, runId, ids, inMem)));
  }

  /** Live records of a project or run, every kind. */
  countScope(projectId: string, runId?: string): Promise<number> {
    return this.read(async (snap) => {
      const live = snap.source({ projectId, ...(runId === undefined ? {} : { runId }), kinds: ['span', 'trace', 'session'] });
      return Number((await this.#s.db.all(sql`SELECT count(*) AS n FROM ${live.sql}`))[0]!['n']);
    });
  }

  get stats(): {
    segments: number;
    sealedRows: number;
    memRows: number;
    memTables: number;
    dead: number;
    diskBytes: number;
    /** Bytes written since open, by what wrote them: the log, segments and side files by cause, the manifest. */
    written: WriteTally & { log: number };
  } {
    const s = this.#s;
    let sealedRows = 0;
    let diskBytes = 0;
    for (const g of s.manifest.segments) {
      sealedRows += g.rows;
      diskBytes += g.bytes;
    }
    const memRows = s.mem.reduce((n, t) => n + t.rows, 0);
    return {
      segments: s.manifest.segments.length,
      sealedRows,
      memRows,
      memTables: s.mem.length,
      dead: s.dead.size,
      diskBytes,
      written: { ...s.written, log: s.wal.bytesWritten },
    };
  }

  /** Sizes of the store's JS structures that can grow with stored rows (for memory benchmarks). */
  jsSizes(): Record<string, number> {
    const s = this.#s;
    return {
      idIndexHashes: s.index.size,
      idIndexBytes: s.index.bytes,
      idFilterUncovered: s.index.uncovered,
      idStoreFilterBytes: s.index.storeFilterBytes,
      idFilterFill: s.index.storeFill,
      memIds: s.memIds.size,
      dead: s.dead.size,
      childless: s.childless.size,
      awaited: s.awaited.size,
      memTables: s.mem.length,
      segments: s.manifest.segments.length,
      manifestJsonBytes: JSON.stringify(s.manifest).length,
    };
  }

  /** DuckDB's tables with their estimated row counts (for memory benchmarks: what still holds rows). */
  async duckdbTables(): Promise<Record<string, number>> {
    const rows = await this.#s.db.all(sql`SELECT table_name AS t, estimated_size AS n FROM duckdb_tables()`);
    return Object.fromEntries(rows.map((r) => [String(r['t']), Number(r['n'])]));
  }

  /** DuckDB's memory by what holds it (its buffer manager's view: tables, sorts, Parquet buffers), in bytes. */
  async duckdbMemory(): Promise<Record<string, number>> {
    await this.settled(); // what acknowledged appends hold counts too
    return memoryByTag(this.#s.db, false);
  }

  /** The merge database's memory by tag, every tag listed (empty when merges share the store's database). */
  async mergeDbMemory(): Promise<Record<string, number>> {
    return this.#s.mergeDb ? memoryByTag(this.#s.mergeDb, true) : {};
  }

  // ---------------------------------------------------------------- maintenance

  /** Seals everything in memory now (also happens by itself as tables fill up). */
  async seal(): Promise<void> {
    this.#s.assertWritable('sealing');
    await this.#sealer.sealAll();
  }

  /** Rewrites every segment holding has_children overrides, so its file says what reads say; returns merges done. */
  foldOverrides(): Promise<number> {
    this.#s.assertWritable('rewriting segments');
    return this.#compactor.foldOverrides();
  }

  /**
   * The sealed state (the manifest); its segment files stay on disk until `release`, even when a merge
   * or drop replaces them meanwhile (an Iceberg publish links or uploads them).
   */
  pinSealed(): { readonly manifest: ManifestState; release(): void } {
    this.#s.assertWritable('publishing Iceberg tables');
    const manifest = this.#s.manifest;
    return { manifest, release: this.#s.use(manifest.segments.map((g) => g.file)) };
  }

  /** Merges small segments and rewrites mostly-dead ones until the policy is satisfied; returns merges done. */
  compact(): Promise<number> {
    this.#s.assertWritable('compacting');
    return this.#compactor.run();
  }

  /**
   * Removes every record of a project (or of one run of it), durably: rows in memory get tombstones,
   * segments leave the manifest and then the disk. Returns how many records went.
   */
  async dropScope(projectId: string, runId?: string): Promise<number> {
    this.#s.assertWritable();
    const s = this.#s;
    return s.maint.run(async () => {
      const scope: Scope = { projectId, ...(runId === undefined ? {} : { runId }), kinds: ['span', 'trace', 'session'] };
      const removed = await this.countScope(projectId, runId);
      // Rows in memory tables get tombstones (rows in the dropped files go with the files).
      await this.deleteSeqs(await this.read((snap) => snap.memorySeqs(scope)));
      const gone = s.manifest.segments.filter((g) => g.project_id === projectId && (runId === undefined || g.run_id === runId));
      const goneFiles = new Set(gone.map((g) => g.file));
      // Forget exactly the dead seqs and has_children overrides the removed files hold (other runs'
      // segments share seq ranges): one read of the files for both.
      const marked =
        gone.length === 0 || (s.dead.size === 0 && s.manifest.childless.length === 0)
          ? []
          : await s.db.all(
              sql`SELECT seq, d, c FROM (SELECT seq, seq IN (SELECT seq FROM dead) AS d,
                  seq IN (SELECT unnest(${[...s.manifest.childless]}::BIGINT[])) AS c
                  FROM read_parquet(${gone.map((g) => join(s.dir, g.file))}, hive_partitioning = false)) WHERE d OR c`,
            );
      const goneDead = marked.filter((r) => r['d'] === true).map((r) => Number(r['seq']));
      const goneSet = new Set(goneDead);
      const goneChildless = marked.filter((r) => r['c'] === true).map((r) => Number(r['seq']));
      const goneOff = new Set(goneChildless);
      const state: ManifestState = {
        ...s.manifest,
        generation: s.manifest.generation + 1,
        segments: s.manifest.segments.filter((g) => !goneFiles.has(g.file)),
        dead: s.manifest.dead.filter((q) => !goneSet.has(q)),
        childless: s.manifest.childless.filter((q) => !goneOff.has(q)),
        awaited: s.manifest.awaited.filter((e) => !(e[0] === projectId && (runId === undefined || e[1] === runId))),
      };
      s.commit(state, []);
      for (const [key, e] of s.memIds)
        if (e.project_id === projectId && (runId === undefined || key.startsWith(`${runId}/`))) s.memIds.delete(key);
      for (const [key, e] of s.awaited) if (e[0] === projectId && (runId === undefined || e[1] === runId)) s.awaited.delete(key);
      for (const f of goneFiles) s.index.remove(f);
      s.retire([...goneFiles], goneDead, goneChildless);
      return removed;
    });
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * Seals what is pending and closes the log. A merge under way is stopped, not waited for (it is
   * redone later: its inputs stay listed). With `seal: false` nothing large is waited for: a seal under
   * way is stopped too, and what is in memory stays in the log (fsynced here) for the next open to
   * replay, as after a crash. The database is closed by its owner.
   */
  async close(options: { seal?: boolean } = {}): Promise<void> {
    const s = this.#s;
    if (s.closed) return;
    this.#stopping = true;
    const factsStopped = this.#facts.stop();
    this.#follower?.close();
    const seal = options.seal !== false && s.broken === null && !s.readOnly;
    // The id filter's background work stops first: what it did not cover or save, the next open does.
    const indexStopped = s.index.stop();
    const repairStopped = this.#repair?.stop();
    // Background work waiting for a pause (the id filter's cover, the footers' warm-up, the facts) sees its stop now.
    s.wake();
    if (seal)
      await this.seal().catch((err: unknown) => process.emitWarning(`tracelake: sealing on close failed: ${(err as Error).message}`));
    s.closed = true;
    // Merges (and seals, when not sealing) are only ever committed whole: stopped midway, they leave a
    // file the next open removes. An interrupt between two statements is lost, so it is repeated
    // until they are done.
    const stopping = [s.conns.merge, s.conns.mergeWrite, ...(seal ? [] : [s.conns.seal])];
    const background = Promise.all([this.#sealer.idle(), this.#compactor.idle()]);
    let done = false;
    void background.finally(() => {
      done = true;
    });
    while (!done) {
      for (const c of stopping) c.interrupt();
      await Promise.race([background, new Promise((r) => setTimeout(r, 20))]);
    }
    // Before the files it keeps are let go (a release may retire them).
    await repairStopped;
    await this.#warmed;
    // A bulk load in progress holds the manifest lock until it has committed (or failed).
    await s.maint.run(async () => undefined);
    await this.#sealer.idle();
    await this.#compactor.idle();
    await this.#deadLists;
    await factsStopped;
    await s.background;
    await new Promise<void>((r) => s.db.afterStatementsInFlight(r));
    await s.background;
    await s.inserter.idle();
    await s.mergeDb?.close();
    await s.wal.close();
    s.kept.close();
    await indexStopped;
    s.index.close();
  }

  /** The columns memory tables note per span type (RecordStoreOptions.notedColumns). */
  get notedColumns(): readonly string[] {
    return this.#s.options.notedColumns;
  }

  /** Segments smaller than this have no top lists: a metric-sorted page reads them whole (RecordStoreOptions.topListMinRows). */
  get topListMinRows(): number {
    return this.#s.options.topListMinRows;
  }

  /** The database merges write their files with: its own (RecordStoreOptions.mergeThreads), or `db`. */
  get mergeDb(): Database {
    return this.#s.mergeDb ?? this.#s.db;
  }

  /** The store's database, for storage's own tests and tools (query execution is given a SqlRunner, not this). */
  get db(): Database {
    return this.#s.db;
  }
}

export type { MemEntry, Param, RecordStoreOptions, SourceSql, Scope };

/** A database's memory by buffer-manager tag, in bytes (`all`: tags holding nothing too). */
async function memoryByTag(db: Database, all: boolean): Promise<Record<string, number>> {
  const rows = await db.all(
    sql`SELECT tag, memory_usage_bytes AS b FROM duckdb_memory()${raw(all ? '' : ' WHERE memory_usage_bytes > 0')}`,
  );
  return Object.fromEntries(rows.map((r) => [String(r['tag']).toLowerCase(), Number(r['b'])]));
}
