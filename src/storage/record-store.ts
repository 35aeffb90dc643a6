// A small LSM over Parquet. A request's rows become one Arrow batch, written to the write-ahead log
// (Arrow IPC, see wal.ts) and inserted into the active in-memory DuckDB table before it is
// acknowledged, so every read sees every acknowledged row without loading anything first. A full
// table is frozen and sealed in the background into immutable ZSTD Parquet segments per (project,
// run, kind), sorted by created_at then id; background merges keep segments few. Replacing or
// deleting a row marks its sequence number dead (a tombstone logged with the request that caused it);
// readers skip dead rows until a seal or merge leaves them out of the files.
//
// Invariants:
// - the memory table mem_<n> holds exactly the rows of log file n; files up to manifest.sealed_wal are
//   in segments (and deleted);
// - every acknowledged row and tombstone is in the log or in the manifest (tombstones reach the
//   manifest with the seal of their log file, never before the rows that replaced them are on disk);
// - for each id at most one live row exists across the memory tables and the segments;
// - the in-memory state changes only after the manifest write that records the change succeeded.
import { join } from 'node:path';
import type { Database, Param, Row } from '../db/database.js';
import { BatchSource } from '../db/batch-source.js';
import { StorageError } from '../errors.js';
import { BatchBuilder, type Row as WireRowLike } from './batch-builder.js';
import { DEFAULT_POLICY, pickMerge, type CompactionPolicy } from './compaction.js';
import { ensureDir } from './fs-util.js';
import { idHash, SealedIdIndex } from './id-index.js';
import { keepRejected, readLegacyWal, removeLegacyWal } from './legacy-wal.js';
import { loadManifest, partitionKey, saveManifest, type ManifestState, type SegmentEntry } from './manifest.js';
import { MemInserter, MemTable } from './mem-tables.js';
import { writeMerge } from './merge.js';
import { RECORD_COLUMNS, tableDdl, type RecordKind } from './record-columns.js';
import { writeSealSegments } from './seal.js';
import { readHashes, removeSegmentFiles, removeUnlisted } from './segments.js';
import { EMPTY_TABLE, Snapshot, type Scope, type SourceSql } from './snapshot.js';
import { encodeEntry, readWalFile, WriteAheadLog } from './wal.js';
import { Mutex } from './mutex.js';

export interface RecordStoreOptions {
  /** Bytes of logged rows that freeze the active memory table for sealing (default 64 MiB). */
  memTableBytes?: number;
  /** Rows that freeze the active memory table (default 1,000,000). */
  sealRows?: number;
  /** Former name of `memTableBytes` (the log file and the memory table are one unit now). */
  walRollBytes?: number;
  /** Rows per Parquet row group (default 65,536): smaller skips more, larger compresses better. */
  rowGroupSize?: number;
  /** Merge small segments in the background after seals (default true). */
  autoCompact?: boolean;
  /** When segments merge (see compaction.ts). */
  compaction?: CompactionPolicy;
  /** ZSTD level of merged segments (default 3: the level seals use; higher costs twice the CPU for ~5% less disk). */
  compactionLevel?: number;
}

/** A row as the engine hands it over: column name -> JS value (see batch-builder.ts). */
export type WireRow = WireRowLike & { seq: number; id: string; type: string; project_id: string; run_id: string };

/** What the engine needs to know about a recent record without asking DuckDB (links, for logging spans). */
export interface MemEntry {
  readonly seq: number;
  readonly project_id: string;
  readonly type: string;
  readonly trace_id: string | null;
  readonly session_id: string | null;
  readonly has_children: boolean;
  /** The memory table holding it. */
  readonly table: number;
}

/** Frozen tables waiting for the sealer before writers wait (bounds memory at about 3 tables). */
const MAX_FROZEN = 2;

const memKey = (runId: string, id: string) => `${runId}/${id}`;

export class RecordStore {
  readonly #dir: string;
  readonly #db: Database;
  readonly #wal: WriteAheadLog;
  readonly #options: Required<Omit<RecordStoreOptions, 'walRollBytes'>>;
  #manifest: ManifestState;
  readonly #index = new SealedIdIndex();
  /** Every record in a memory table, by run and id (its newest version). */
  readonly #memIds = new Map<string, MemEntry>();
  /** Every dead sequence number (the manifest's and the log's); mirrored by the `dead` table. */
  readonly #dead = new Set<number>();
  /** Memory tables, oldest first; the last one takes the writes. */
  #mem: MemTable[] = [];
  readonly #inserter: MemInserter;
  readonly #sealConn: Awaited<ReturnType<Database['dedicated']>>;
  readonly #mergeConn: Awaited<ReturnType<Database['dedicated']>>;
  readonly #builders: BatchBuilder[] = [];
  #nextSeq: number;
  #nextSegment: number;
  /** Serialises changes of the manifest: seals, merge commits, drops. */
  readonly #maint = new Mutex();
  #sealer: Promise<void> | null = null;
  #sealFailure: unknown = null;
  #sealWaiters: (() => void)[] = [];
  #sealGeneration = 0;
  #compacting: Promise<number> | null = null;
  #background: Promise<unknown> = Promise.resolve();
  /** Set when the memory tables stopped matching the log (an insert failed): writes wait for a reopen. */
  #broken: unknown = null;
  #closed = false;

  private constructor(dir: string, db: Database, wal: WriteAheadLog, manifest: ManifestState, options: Required<Omit<RecordStoreOptions, 'walRollBytes'>>, conns: { writer: Awaited<ReturnType<Database['dedicated']>>; seal: Awaited<ReturnType<Database['dedicated']>>; merge: Awaited<ReturnType<Database['dedicated']>>; source: BatchSource }) {
    this.#dir = dir;
    this.#db = db;
    this.#wal = wal;
    this.#manifest = manifest;
    this.#options = options;
    this.#nextSeq = manifest.sealed_seq + 1;
    this.#nextSegment = manifest.next_segment;
    this.#inserter = new MemInserter(conns.writer, conns.source);
    this.#sealConn = conns.seal;
    this.#mergeConn = conns.merge;
  }

  static async open(dir: string, db: Database, options: RecordStoreOptions = {}): Promise<RecordStore> {
    ensureDir(join(dir, 'records'));
    const manifest = loadManifest(dir);
    const opts = {
      memTableBytes: options.memTableBytes ?? options.walRollBytes ?? 64 << 20,
      sealRows: options.sealRows ?? 1_000_000,
      rowGroupSize: options.rowGroupSize ?? 65_536,
      autoCompact: options.autoCompact ?? true,
      compaction: options.compaction ?? DEFAULT_POLICY,
      compactionLevel: options.compactionLevel ?? 3,
    };
    removeUnlisted(dir, manifest);
    const { wal, replay } = WriteAheadLog.open(join(dir, 'wal'), manifest.sealed_wal);
    const source = new BatchSource(RECORD_COLUMNS);
    const conns = { writer: await db.dedicated(source.functions), seal: await db.dedicated(), merge: await db.dedicated(), source };
    const store = new RecordStore(dir, db, wal, manifest, opts, conns);
    for (const seq of manifest.dead) {
      store.#dead.add(seq);
      // Dead rows may be the newest: their numbers stay taken (a row given one would be dead on arrival).
      if (seq >= store.#nextSeq) store.#nextSeq = seq + 1;
    }
    for (const seg of manifest.segments) {
      store.#index.add({ key: seg.file, partition: seg.file, hashes: await readHashes(conns.seal, dir, seg, idHash) });
    }
    await conns.writer.run('CREATE TABLE IF NOT EXISTS dead (seq BIGINT)');
    await conns.writer.run(tableDdl(EMPTY_TABLE));
    if (store.#dead.size > 0) await conns.writer.run('INSERT INTO dead SELECT unnest($1::BIGINT[])', [[...store.#dead]]);
    await store.#replay(replay.map((f) => f.path));
    const number = wal.start(store.#nextSeq);
    store.#mem.push(new MemTable(number, store.#nextSeq, store.#inserter.create(`mem_${number}`)));
    await store.#convertLegacy();
    if (store.#mem.some((t) => t.frozen)) store.#kickSealer();
    return store;
  }

  /** Reloads log files after a restart: each becomes a frozen memory table again. */
  async #replay(paths: readonly string[]): Promise<void> {
    for (const path of paths) {
      const { entries, firstSeq } = readWalFile(path);
      const number = Number(/wal-(\d+)/.exec(path)![1]);
      const table = new MemTable(number, firstSeq, this.#inserter.create(`mem_${number}`));
      table.frozen = true;
      this.#mem.push(table);
      const inserts: Promise<void>[] = [];
      for (const e of entries) {
        this.#nextSeq = Math.max(this.#nextSeq, e.lastSeq + 1);
        for (const s of e.dead) this.#dead.add(s);
        table.dead.push(...e.dead);
        if (e.batch) {
          const rows = batchRows(e.batch);
          const projectId = rows[0]!.project_id;
          const runId = rows[0]!.run_id;
          for (const r of rows) this.#memIds.set(memKey(r.run_id, r.id), { ...r, table: number });
          table.noteRows(projectId, runId, rows, metricsOf(e.batch, rows), 0);
        }
        inserts.push(this.#inserter.insert(table, e.batch, e.dead));
      }
      await Promise.all(inserts);
    }
  }

  /** Requests logged by the NDJSON log of earlier versions are logged again (ids are kept, so it is idempotent). */
  async #convertLegacy(): Promise<void> {
    const { files, requests } = readLegacyWal(join(this.#dir, 'wal'), this.#manifest.sealed_seq);
    if (files.length === 0) return;
    for (const rows of requests) {
      try {
        await this.append(rows as WireRow[], true);
      } catch (err) {
        if (this.#broken) throw err;
        // A request the new log cannot take (a value validation would refuse) is kept aside, not dropped.
        keepRejected(join(this.#dir, 'wal', 'rejected.ndjson'), rows);
        process.emitWarning(`tracelake: a logged request could not be converted and was kept in wal/rejected.ndjson: ${(err as Error).message}`);
      }
    }
    removeLegacyWal(files);
  }

  // ---------------------------------------------------------------- writing

  /**
   * Logs rows of one project and run (their seq is assigned here), replacing older versions of the
   * same ids. Resolves once they are in the log (on disk, if `sync`) and visible to every read.
   */
  async append(rows: readonly WireRow[], sync: boolean): Promise<void> {
    this.#assertWritable();
    if (rows.length === 0) return;
    await this.#backpressure();
    for (;;) {
      // A seal that commits while we look up sealed versions moves ids out of #memIds: look again.
      const generation = this.#sealGeneration;
      const dead = await this.#sealedVersions(rows.filter((r) => !this.#memIds.has(memKey(r.run_id, r.id))));
      if (generation !== this.#sealGeneration) continue;
      this.#assertWritable();
      const inRequest = new Map<string, number>();
      for (const r of rows) {
        const prev = this.#memIds.get(memKey(r.run_id, r.id));
        if (prev !== undefined) dead.push(prev.seq);
      }
      // Sequence numbers are taken in the same synchronous step as the log write, so the log holds
      // them in order.
      const first = this.#nextSeq;
      for (let i = 0; i < rows.length; i++) {
        const r = rows[i] as WireRow;
        r.seq = first + i;
        // The same id twice in one request: the later row wins.
        const earlier = inRequest.get(r.id);
        if (earlier !== undefined) dead.push(earlier);
        inRequest.set(r.id, r.seq);
      }
      const builder = this.#builders.pop() ?? new BatchBuilder();
      let batch: ReturnType<BatchBuilder['build']>;
      let bytes: Uint8Array;
      let durable: Promise<void>;
      try {
        batch = builder.build(rows);
        bytes = encodeEntry(batch, dead, first + rows.length - 1);
        // Throws, with nothing written and nothing changed, when the log cannot take the request.
        durable = this.#wal.append(bytes, sync);
      } catch (err) {
        this.#builders.push(builder);
        throw err instanceof StorageError ? err : new StorageError(`the rows could not be stored: ${(err as Error).message}`, { cause: err });
      }
      this.#nextSeq = first + rows.length;
      const table = this.#mem[this.#mem.length - 1]!;
      for (const s of dead) this.#dead.add(s);
      table.dead.push(...dead);
      for (const r of rows) this.#memIds.set(memKey(r.run_id, r.id), entryOf(r, table.number));
      table.noteRows(rows[0]!.project_id, rows[0]!.run_id, rows, builder.metricsByKind, bytes.length);
      const visible = this.#insert(table, batch, dead).finally(() => this.#builders.push(builder));
      if (table.bytes >= this.#options.memTableBytes || table.rows >= this.#options.sealRows) this.#freeze();
      durable.catch(() => undefined);
      await visible;
      await durable;
      return;
    }
  }

  /** Inserts into DuckDB; a failure leaves DuckDB behind the log, so writes stop until the store is reopened. */
  async #insert(table: MemTable, batch: Parameters<MemInserter['insert']>[1], dead: readonly number[]): Promise<void> {
    try {
      await this.#inserter.insert(table, batch, dead);
    } catch (err) {
      this.#broken ??= err;
      throw new StorageError('adding rows to the in-memory table failed; writes are refused until the store is reopened', { cause: err });
    }
  }

  /** Writers wait while the sealer is behind (memory stays bounded); never forever (a failing seal lets them pass). */
  async #backpressure(): Promise<void> {
    while (this.#mem.filter((t) => t.frozen).length >= MAX_FROZEN && !this.#closed && this.#sealFailure === null) {
      this.#kickSealer();
      await new Promise<void>((r) => this.#sealWaiters.push(r));
    }
  }

  /** Seqs of live sealed rows with the ids of `rows` (in the same project and run). */
  async #sealedVersions(rows: readonly WireRow[]): Promise<number[]> {
    const files = new Set<string>();
    const wanted: string[] = [];
    for (const r of rows) {
      const hit = this.#index.candidates(r.id, `records/${partitionKey(r.project_id, r.run_id)}`);
      if (hit.length === 0) continue;
      wanted.push(r.id);
      for (const f of hit) files.add(f);
    }
    if (wanted.length === 0) return [];
    const snap = this.snapshot();
    try {
      const found = await this.#db.all(`SELECT seq FROM read_parquet($1, hive_partitioning = false) WHERE id IN (SELECT unnest($2::VARCHAR[]))`, [
        [...files].map((f) => join(this.#dir, f)),
        wanted,
      ]);
      return found.map((r) => Number(r['seq'])).filter((s) => !this.#dead.has(s));
    } finally {
      snap.release();
    }
  }

  /** Deletes rows by seq, durably: one tombstone entry in the log, visible at once. */
  async deleteSeqs(seqs: readonly number[]): Promise<void> {
    this.#assertWritable();
    const fresh = [...new Set(seqs)].filter((s) => !this.#dead.has(s));
    if (fresh.length === 0) return;
    const bytes = encodeEntry(null, fresh, this.#nextSeq - 1);
    const durable = this.#wal.append(bytes, true);
    const table = this.#mem[this.#mem.length - 1]!;
    for (const s of fresh) this.#dead.add(s);
    table.dead.push(...fresh);
    const gone = new Set(fresh);
    for (const [k, e] of this.#memIds) if (gone.has(e.seq)) this.#memIds.delete(k);
    durable.catch(() => undefined);
    await this.#insert(table, null, fresh);
    await durable;
    // A large delete can leave segments mostly dead: rewriting them gives the space back.
    if (this.#options.autoCompact) this.#scheduleCompaction();
  }

  /** The latest version of a record in a memory table, if any (no DuckDB round trip). */
  recent(runId: string, id: string): MemEntry | undefined {
    return this.#memIds.get(memKey(runId, id));
  }

  /** False when the id certainly has no record in the run; true when it may (then `lookup` tells). */
  mayExist(projectId: string, runId: string, id: string): boolean {
    return this.#memIds.has(memKey(runId, id)) || this.#index.candidates(id, `records/${partitionKey(projectId, runId)}`).length > 0;
  }

  // ---------------------------------------------------------------- reading

  /** A consistent view for reads; release it when done (see snapshot.ts). */
  snapshot(): Snapshot {
    this.#assertOpen();
    return new Snapshot(this.#dir, this.#db, this.#manifest, [...this.#mem], this.#index);
  }

  /** Runs `fn` over a snapshot, released afterwards. */
  async read<T>(fn: (snap: Snapshot) => Promise<T>): Promise<T> {
    const snap = this.snapshot();
    try {
      return await fn(snap);
    } finally {
      snap.release();
    }
  }

  /** Live rows with these ids in a run (any kind), timestamps as epoch µs. Sees every acknowledged row. */
  lookup(projectId: string, runId: string, ids: readonly string[]): Promise<Row[]> {
    const inMem = ids.some((id) => this.#memIds.has(memKey(runId, id)));
    return this.read((s) => s.lookup(projectId, runId, ids, inMem));
  }

  /** Live records of a project or run, every kind. */
  countScope(projectId: string, runId?: string): Promise<number> {
    return this.read(async (snap) => {
      const live = snap.source({ projectId, ...(runId === undefined ? {} : { runId }), kinds: ['span', 'trace', 'session'] });
      return Number((await this.#db.all(`SELECT count(*) AS n FROM ${live.sql}`, live.params))[0]!['n']);
    });
  }

  get stats(): { segments: number; sealedRows: number; memRows: number; memTables: number; dead: number; diskBytes: number } {
    let sealedRows = 0;
    let diskBytes = 0;
    for (const s of this.#manifest.segments) {
      sealedRows += s.rows;
      diskBytes += s.bytes;
    }
    const memRows = this.#mem.reduce((n, t) => n + t.rows, 0);
    return { segments: this.#manifest.segments.length, sealedRows, memRows, memTables: this.#mem.length, dead: this.#dead.size, diskBytes };
  }

  // ---------------------------------------------------------------- sealing

  /** Freezes the active table (if it holds anything) and starts a fresh one; the sealer takes it from there. */
  #freeze(): void {
    const active = this.#mem[this.#mem.length - 1]!;
    if (active.rows === 0 && active.dead.length === 0) return;
    try {
      this.#wal.roll(this.#nextSeq);
    } catch (err) {
      // The log stays on its file and the table keeps taking rows; the next append tries again.
      process.emitWarning(`tracelake: starting a new log file failed: ${(err as Error).message}`);
      return;
    }
    const number = this.#wal.number;
    active.frozen = true;
    this.#mem.push(new MemTable(number, this.#nextSeq, this.#inserter.create(`mem_${number}`)));
    this.#kickSealer();
  }

  #kickSealer(): void {
    if (this.#sealer) return;
    this.#sealer = this.#sealAll().finally(() => {
      this.#sealer = null;
      for (const r of this.#sealWaiters.splice(0)) r();
    });
  }

  async #sealAll(): Promise<void> {
    this.#sealFailure = null;
    for (;;) {
      const table = this.#mem.find((t) => t.frozen);
      if (!table) break;
      try {
        await this.#maint.run(() => this.#seal(table));
      } catch (err) {
        this.#sealFailure = err;
        process.emitWarning(`tracelake: sealing failed (will retry at the next seal): ${(err as Error).message}`);
        return;
      }
      for (const r of this.#sealWaiters.splice(0)) r();
    }
    if (this.#options.autoCompact && !this.#closed) this.#scheduleCompaction();
  }

  /** Seals everything in memory now (also happens by itself as tables fill up). */
  async seal(): Promise<void> {
    this.#assertOpen();
    this.#freeze();
    while (this.#mem.some((t) => t.frozen)) {
      this.#kickSealer();
      await this.#sealer;
      if (this.#sealFailure) throw new StorageError('sealing the in-memory tables failed', { cause: this.#sealFailure });
    }
  }

  async #seal(table: MemTable): Promise<void> {
    await table.created;
    await table.settled();
    const out = await writeSealSegments(
      { dir: this.#dir, conn: this.#sealConn, manifest: this.#manifest, nextSegment: () => this.#nextSegment++, rowGroupSize: this.#options.rowGroupSize },
      table,
    );
    // Tombstones of rows in this table are not needed once it is sealed (those rows were left out);
    // tombstones of older rows go to the manifest with the rows that replaced them.
    const purged = table.dead.filter((s) => s >= table.firstSeq);
    const kept = new Set(this.#manifest.dead);
    for (const s of table.dead) if (s < table.firstSeq) kept.add(s);
    const lastSeq = Math.max(this.#manifest.sealed_seq, ...out.added.map((a) => a.entry.max_seq));
    const state: ManifestState = {
      ...this.#manifest,
      generation: this.#manifest.generation + 1,
      sealed_wal: table.number,
      sealed_seq: lastSeq,
      next_segment: this.#nextSegment,
      segments: [...this.#manifest.segments, ...out.added.map((a) => a.entry)],
      dead: [...kept],
      metric_ids: out.metricIds,
    };
    this.#commit(state, out.added.map((s) => s.entry.file));
    for (const { entry, hashes } of out.added) this.#index.add({ key: entry.file, partition: entry.file, hashes });
    this.#mem = this.#mem.filter((t) => t !== table);
    for (const [k, e] of this.#memIds) if (e.table === table.number) this.#memIds.delete(k);
    this.#sealGeneration += 1;
    this.#wal.dropThrough(table.number);
    this.#afterReaders(async () => {
      await this.#sealConn.run(`DROP TABLE IF EXISTS ${table.name}`);
      await this.#forget(purged);
    });
  }

  /** Writes a new manifest; on failure removes `newFiles` and leaves everything as it was. */
  #commit(state: ManifestState, newFiles: readonly string[]): void {
    try {
      saveManifest(this.#dir, state);
    } catch (err) {
      for (const f of newFiles) removeSegmentFiles(this.#dir, f);
      throw new StorageError('writing the manifest failed', { cause: err });
    }
    this.#manifest = state;
  }

  /** Runs `fn` once every reader that may still use what was just replaced has finished. */
  #afterReaders(fn: () => Promise<void>): void {
    this.#db.afterStatementsInFlight(() => {
      this.#background = this.#background.then(fn).catch((err: unknown) => process.emitWarning(`tracelake: cleanup failed: ${(err as Error).message}`));
    });
  }

  /** Dead seqs whose rows are gone from every file and table: dropped from the dead set. */
  async #forget(seqs: readonly number[]): Promise<void> {
    if (seqs.length === 0) return;
    for (const s of seqs) this.#dead.delete(s);
    await this.#inserter.run('DELETE FROM dead WHERE seq IN (SELECT unnest($1::BIGINT[]))', [seqs as number[]]);
  }

  // ---------------------------------------------------------------- compaction

  #scheduleCompaction(): void {
    this.#background = this.#background
      .then(async () => {
        if (!this.#closed) await this.compact();
      })
      .catch((err: unknown) => process.emitWarning(`tracelake: background compaction failed: ${(err as Error).message}`));
  }

  /** Merges small segments and rewrites mostly-dead ones until the policy is satisfied; returns merges done. */
  async compact(): Promise<number> {
    this.#assertOpen();
    if (this.#compacting) return this.#compacting;
    this.#compacting = (async () => {
      let merges = 0;
      for (;;) {
        const dead = await this.#deadCounts();
        const group = pickMerge(this.#manifest.segments, (g) => dead.get(g.file) ?? 0, this.#options.compaction);
        if (!group || this.#closed) return merges;
        await this.#merge(group);
        merges++;
      }
    })().finally(() => {
      this.#compacting = null;
    });
    return this.#compacting;
  }

  /** Dead rows per segment file, counted exactly (ranges of seqs overlap between files). */
  async #deadCounts(): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (this.#dead.size === 0 || this.#manifest.segments.length === 0) return out;
    const byPath = new Map(this.#manifest.segments.map((g) => [join(this.#dir, g.file), g.file]));
    const rows = await this.#mergeConn.all(
      `SELECT filename AS f, count(*) AS n FROM read_parquet($1, hive_partitioning = false, filename = true)
       WHERE seq IN (SELECT seq FROM dead) GROUP BY filename`,
      [[...byPath.keys()]],
    );
    for (const r of rows) {
      const rel = byPath.get(String(r['f']));
      if (rel) out.set(rel, Number(r['n']));
    }
    return out;
  }

  async #merge(group: readonly SegmentEntry[]): Promise<void> {
    const out = await writeMerge(
      {
        dir: this.#dir,
        conn: this.#mergeConn,
        nextSegment: () => this.#nextSegment++,
        rowGroupSize: this.#options.rowGroupSize,
        compressionLevel: this.#options.compactionLevel,
        hashesOf: (f) => this.#index.hashesOf(f),
      },
      group,
    );
    await this.#maint.run(async () => {
      const live = new Set(this.#manifest.segments.map((g) => g.file));
      if (!group.every((g) => live.has(g.file))) {
        // The partition was dropped (or merged) meanwhile: this output is stale.
        if (out.written) removeSegmentFiles(this.#dir, out.written.entry.file);
        return;
      }
      const gone = new Set(group.map((g) => g.file));
      const purged = new Set(out.purged);
      const state: ManifestState = {
        ...this.#manifest,
        generation: this.#manifest.generation + 1,
        next_segment: this.#nextSegment,
        segments: [...this.#manifest.segments.filter((g) => !gone.has(g.file)), ...(out.written ? [out.written.entry] : [])],
        dead: this.#manifest.dead.filter((s) => !purged.has(s)),
      };
      this.#commit(state, out.written ? [out.written.entry.file] : []);
      for (const f of gone) this.#index.remove(f);
      if (out.written) this.#index.add({ key: out.written.entry.file, partition: out.written.entry.file, hashes: out.written.hashes });
      this.#retire([...gone], out.purged);
    });
  }

  /** Deletes replaced files, then forgets their dead seqs, once no reader may still use them. */
  #retire(files: readonly string[], purged: readonly number[]): void {
    this.#afterReaders(async () => {
      for (const f of files) removeSegmentFiles(this.#dir, f);
      await this.#forget(purged);
    });
  }

  // ---------------------------------------------------------------- drops

  /**
   * Removes every record of a project (or of one run of it), durably: rows in memory get tombstones,
   * segments leave the manifest and then the disk. Returns how many records went.
   */
  async dropScope(projectId: string, runId?: string): Promise<number> {
    this.#assertWritable();
    return this.#maint.run(async () => {
      const scope: Scope = { projectId, ...(runId === undefined ? {} : { runId }), kinds: ['span', 'trace', 'session'] };
      const removed = await this.countScope(projectId, runId);
      // Rows in memory tables get tombstones (rows in the dropped files go with the files).
      await this.deleteSeqs(await this.read((snap) => snap.memorySeqs(scope)));
      const gone = this.#manifest.segments.filter((g) => g.project_id === projectId && (runId === undefined || g.run_id === runId));
      const goneFiles = new Set(gone.map((g) => g.file));
      // Forget exactly the dead seqs the removed files hold (other runs' segments share seq ranges).
      const goneDead =
        gone.length === 0 || this.#dead.size === 0
          ? []
          : (await this.#db.all('SELECT seq FROM read_parquet($1, hive_partitioning = false) WHERE seq IN (SELECT seq FROM dead)', [gone.map((g) => join(this.#dir, g.file))])).map((r) => Number(r['seq']));
      const goneSet = new Set(goneDead);
      const state: ManifestState = {
        ...this.#manifest,
        generation: this.#manifest.generation + 1,
        segments: this.#manifest.segments.filter((g) => !goneFiles.has(g.file)),
        dead: this.#manifest.dead.filter((s) => !goneSet.has(s)),
      };
      this.#commit(state, []);
      for (const [key, e] of this.#memIds) if (e.project_id === projectId && (runId === undefined || key.startsWith(`${runId}/`))) this.#memIds.delete(key);
      for (const f of goneFiles) this.#index.remove(f);
      this.#retire([...goneFiles], goneDead);
      return removed;
    });
  }

  // ---------------------------------------------------------------- lifecycle

  /** Seals what is pending and closes the log. The database is closed by its owner. */
  async close(options: { seal?: boolean } = {}): Promise<void> {
    if (this.#closed) return;
    if (options.seal !== false && this.#broken === null) await this.seal().catch((err: unknown) => process.emitWarning(`tracelake: sealing on close failed: ${(err as Error).message}`));
    this.#closed = true;
    if (this.#sealer) await this.#sealer;
    if (this.#compacting) await this.#compacting.catch(() => undefined);
    await this.#background;
    await new Promise<void>((r) => this.#db.afterStatementsInFlight(r));
    await this.#background;
    await this.#inserter.idle();
    await this.#wal.close();
  }

  #assertOpen(): void {
    if (this.#closed) throw new StorageError('record store is closed');
  }

  #assertWritable(): void {
    this.#assertOpen();
    if (this.#broken) throw new StorageError('the in-memory tables no longer match the log after a failed insert; reopen the store', { cause: this.#broken });
  }

  /** Raw SQL access for the engine's queries (over a snapshot's sources). */
  get db(): Database {
    return this.#db;
  }
}

function entryOf(r: WireRow, table: number): MemEntry {
  return {
    seq: r.seq,
    project_id: r.project_id,
    type: r.type,
    trace_id: (r['trace_id'] as string | null | undefined) ?? null,
    session_id: (r['session_id'] as string | null | undefined) ?? null,
    has_children: r['has_children'] === true,
    table,
  };
}

/** The link columns of a logged batch, as rows (replay only). */
function batchRows(batch: NonNullable<Parameters<MemInserter['insert']>[1]>): (Omit<MemEntry, 'table'> & { id: string; run_id: string })[] {
  const col = (n: string) => batch.getChild(n)!;
  const [seq, id, type, project, run, trace, session, children] = ['seq', 'id', 'type', 'project_id', 'run_id', 'trace_id', 'session_id', 'has_children'].map(col) as ReturnType<typeof col>[];
  const out = [];
  for (let i = 0; i < batch.numRows; i++) {
    out.push({
      seq: Number(seq!.get(i)),
      id: String(id!.get(i)),
      type: String(type!.get(i)),
      project_id: String(project!.get(i)),
      run_id: String(run!.get(i)),
      trace_id: (trace!.get(i) as string | null) ?? null,
      session_id: (session!.get(i) as string | null) ?? null,
      has_children: children!.get(i) === true,
    });
  }
  return out;
}

/** Metric names by record kind of a logged batch (replay only). */
function metricsOf(batch: NonNullable<Parameters<MemInserter['insert']>[1]>, rows: readonly { type: string }[]): Map<RecordKind, Set<string>> {
  const out = new Map<RecordKind, Set<string>>();
  const metrics = batch.getChild('metrics')!;
  rows.forEach((r, i) => {
    const m = metrics.get(i) as { toJSON(): Record<string, number> } | null;
    if (!m) return;
    const kind: RecordKind = r.type === 'trace' ? 'trace' : r.type === 'session' ? 'session' : 'span';
    let s = out.get(kind);
    if (!s) out.set(kind, (s = new Set()));
    for (const k of Object.keys(m.toJSON())) s.add(k);
  });
  return out;
}

export type { Row, Param, SourceSql, Scope };
