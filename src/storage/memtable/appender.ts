// The write half of the record store: logs a request's rows as one Arrow batch and inserts it into
// the active memory table before the request is acknowledged (append), and logs tombstones and
// has_children overrides (deleteSeqs). Sequence numbers are taken in the same synchronous step as the
// log write, so the log holds them in order; the in-memory state changes only once the log has
// taken the entry (see record-store.ts for the invariants).
import { join } from 'node:path';
import { noteAwaits, resolveAwaits } from './awaited.js';
import { StorageError } from '../../errors.js';
import { BatchBuilder } from './batch-builder.js';
import { cpuTurn } from './cpu-turns.js';
import { distinctSorted, sortedHas } from './seq-lists.js';
import { partitionKey } from '../manifest/manifest.js';
import type { MemInserter, MemTable } from './mem-tables.js';
import type { Sealer } from '../segments/sealer.js';
import type { Snapshot } from '../snapshot/snapshot.js';
import { memKey, type MemEntry, type StoreState } from '../store-state.js';
import { encodeEntry } from '../wal/wal.js';
import { takeMintedFresh, type LogRow } from '../../record/record.js';
import { sql } from '../../query/sql.js';

/** Waits (ms) before each new try of a failed insert into a memory table. */
const INSERT_RETRIES = [50, 250, 1000, 4000];

export class Appender {
  readonly #s: StoreState;
  readonly #sealer: Sealer;
  readonly #builders: BatchBuilder[] = [];
  readonly #read: <T>(fn: (snap: Snapshot) => Promise<T>) => Promise<T>;
  readonly #afterDelete: () => void;
  /** Inserts of appends not yet visible, oldest first (acknowledged or not). */
  readonly #unseen: Promise<void>[] = [];
  /** Why an acknowledged request's rows never reached DuckDB (reads refuse to miss them: see `visible`). */
  #lost: unknown = null;

  constructor(state: StoreState, sealer: Sealer, read: <T>(fn: (snap: Snapshot) => Promise<T>) => Promise<T>, afterDelete: () => void) {
    this.#s = state;
    this.#sealer = sealer;
    this.#read = read;
    this.#afterDelete = afterDelete;
  }

  /**
   * Logs rows of one project and run (their seq is assigned here), replacing older versions of the
   * same ids. Resolves once they are in the log (on disk, if `sync`); a read that starts after that
   * sees them (it waits for their insert into DuckDB: `visible`), while the caller goes on to build
   * its next request as DuckDB inserts this one.
   * `awaits`: ids of parent spans (not logged yet) that these rows are children of; a row logged
   * later with such an id gets has_children true, also after a restart (awaited.ts).
   */
  async append(rows: readonly LogRow[], sync: boolean, awaits: readonly string[] = []): Promise<void> {
    this.#s.lastAppend = performance.now();
    this.#s.assertWritable();
    if (rows.length === 0) return;
    const s = this.#s;
    await this.#sealer.backpressure();
    if (s.wal.failed) this.#sealer.freeze();
    // Each row's key in the recent-records map, made once: three lookups per row below use it.
    const keys = new Array<string>(rows.length);
    for (let i = 0; i < rows.length; i++) keys[i] = memKey(rows[i]!.run_id, rows[i]!.id);
    // Rows whose ids were minted from a random seed cannot replace a sealed version: not looked up.
    const lookup: number[] = [];
    for (let i = 0; i < rows.length; i++) if (!takeMintedFresh(rows[i]!)) lookup.push(i);
    for (;;) {
      // The batch is built in the continuation of this wait (or of the lookup below): see cpu-turns.ts.
      await cpuTurn();
      // A seal that commits while we look up sealed versions moves ids out of the recent map: look again.
      const generation = s.sealGeneration;
      const dead = await this.#sealedVersions(lookup.filter((i) => !s.memIds.has(keys[i]!)).map((i) => rows[i]!));
      if (generation !== s.sealGeneration) continue;
      this.#s.assertWritable();
      for (let i = 0; i < rows.length; i++) {
        const prev = s.memIds.get(keys[i]!);
        if (prev !== undefined) dead.push(prev.seq);
      }
      // Sequence numbers are taken in the same synchronous step as the log write, so the log holds
      // them in order.
      const first = s.nextSeq;
      const inRequest = new Map<string, number>();
      for (let i = 0; i < rows.length; i++) {
        const r = rows[i]!;
        r.seq = first + i;
        // The same id twice in one request: the later row wins.
        const earlier = inRequest.get(r.id);
        if (earlier !== undefined) dead.push(earlier);
        inRequest.set(r.id, r.seq);
      }
      // Parents that children logged before them wait for: they arrive with has_children.
      const arrived: string[] = [];
      if (s.awaited.size > 0) {
        for (let i = 0; i < rows.length; i++) {
          const k = keys[i]!;
          if (!s.awaited.has(k)) continue;
          rows[i]!.has_children = true;
          arrived.push(k);
        }
      }
      const builder = this.#builders.pop() ?? new BatchBuilder();
      let batch: ReturnType<BatchBuilder['build']>;
      let bytes: Uint8Array;
      let durable: Promise<void>;
      try {
        batch = builder.build(rows);
        bytes = encodeEntry(batch, dead, first + rows.length - 1, [], awaits);
        // Throws, with nothing written and nothing changed, when the log cannot take the request.
        durable = s.wal.append(bytes, sync);
      } catch (err) {
        this.#builders.push(builder);
        throw err instanceof StorageError
          ? err
          : new StorageError(`the rows could not be stored: ${(err as Error).message}`, { cause: err });
      }
      s.nextSeq = first + rows.length;
      const at = ++s.clock;
      const table = s.active;
      s.dead.addAll(dead);
      // One push per value: a spread of a 1M-span delete's seqs overflows the call stack (found at 100M).
      for (const q of dead) table.dead.push(q);
      for (let i = 0; i < rows.length; i++) s.memIds.set(keys[i]!, entryOf(rows[i]!, table.number));
      table.noteRows(rows[0]!.project_id, rows[0]!.run_id, rows, builder.metricsByKind, bytes.length, s.options.notedColumns);
      if (arrived.length > 0) resolveAwaits(s, table, arrived);
      if (awaits.length > 0) noteAwaits(s, table, rows[0]!.project_id, rows[0]!.run_id, awaits);
      let failed: unknown = null;
      let acked = false;
      const visible = this.#insert(table, batch, at, dead)
        .catch((err: unknown) => {
          failed = err;
          // Acknowledged rows that no read would see: reads fail from now on (a reopen replays the log).
          if (acked) this.#lost ??= err;
          throw err;
        })
        .finally(() => {
          this.#builders.push(builder);
          this.#unseen.splice(this.#unseen.indexOf(visible), 1);
          s.unapplied.splice(s.unapplied.indexOf(entry), 1);
        });
      visible.catch(() => undefined);
      this.#unseen.push(visible);
      const entry = { at, firstSeq: first, done: visible };
      s.unapplied.push(entry);
      // A caller that waits for its insert anyway has it start at once (no lingering for a group).
      if (s.options.pipelineDepth === 0) s.inserter.flush();
      this.#sealer.maybeFreeze();
      durable.catch(() => undefined);
      await durable;
      // At most pipelineDepth acknowledged appends not yet visible (0: this one is visible before it is
      // acknowledged); a caller faster than DuckDB waits for its oldest insert.
      while (failed === null && this.#unseen.indexOf(visible) >= s.options.pipelineDepth) {
        s.inserter.flush();
        await this.#unseen[0]!.catch(() => undefined);
      }
      if (failed !== null) throw failed;
      acked = true;
      if (at > s.ackedClock) s.ackedClock = at;
      return;
    }
  }

  /**
   * Null when every acknowledged append is visible in DuckDB; else a promise that resolves once those
   * acknowledged so far are (a read waits for it before taking its snapshot, so it sees every
   * acknowledged row), or rejects when one of them never will be until the store is reopened.
   */
  visible(): Promise<void> | null {
    if (this.#lost !== null) return Promise.reject(lostError(this.#lost));
    // A snapshot ends before the oldest entry not in DuckDB yet (StoreState.visibleBounds), so every
    // entry up to the newest acknowledged one must be in, acknowledged or not.
    const s = this.#s;
    const owed: Promise<void>[] = [];
    for (const e of s.unapplied) {
      if (e.at > s.ackedClock) break;
      owed.push(e.done);
    }
    if (owed.length === 0) return null;
    s.inserter.flush();
    // An append that failed before it was acknowledged threw to its caller and leaves nothing to see;
    // one that failed after sets #lost (in its own chain, before `done` settles).
    return Promise.all(owed.map((p) => p.catch(() => undefined))).then(() => {
      if (this.#lost !== null) throw lostError(this.#lost);
    });
  }

  /**
   * Inserts into DuckDB. A failed insert changed nothing (its transaction rolled back), so it is tried
   * again a few times: most failures are memory running short while a seal or merge runs, which the
   * sealer then frees. One that keeps failing leaves DuckDB behind the log, so writes stop until the
   * store is reopened (the log replays the rows then).
   */
  async #insert(
    table: MemTable,
    batch: Parameters<MemInserter['insert']>[1],
    at: number,
    dead: readonly number[],
    childless: readonly number[] = [],
  ): Promise<void> {
    // Counted as pending across the retries, so the table is not sealed in a wait between two tries.
    table.pending++;
    try {
      await this.#tries(table, batch, at, dead, childless);
    } finally {
      table.done(1);
    }
  }

  async #tries(
    table: MemTable,
    batch: Parameters<MemInserter['insert']>[1],
    at: number,
    dead: readonly number[],
    childless: readonly number[],
  ): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.#s.inserter.insert(table, batch, dead, childless, at);
        return;
      } catch (err) {
        if (attempt < INSERT_RETRIES.length && !this.#s.closed) {
          this.#sealer.kick();
          await new Promise((r) => setTimeout(r, INSERT_RETRIES[attempt]));
          continue;
        }
        this.#s.broken ??= err;
        throw new StorageError('adding rows to the in-memory table failed; writes are refused until the store is reopened', { cause: err });
      }
    }
  }

  /**
   * Deletes rows by seq, durably: one tombstone entry in the log, visible at once. `childless`: row
   * versions (parents the delete leaves without children) whose has_children reads false from now on,
   * in the same entry, so a crash keeps both or neither.
   */
  async deleteSeqs(seqs: readonly number[], childless: readonly number[] = []): Promise<void> {
    this.#s.assertWritable();
    const s = this.#s;
    const fresh = distinctSorted(seqs, (q) => !s.dead.has(q));
    const cleared = distinctSorted(childless, (q) => !s.childless.has(q) && !s.dead.has(q));
    if (fresh.length === 0 && cleared.length === 0) return;
    if (s.wal.failed) this.#sealer.freeze();
    const durable = s.wal.append(encodeEntry(null, fresh, s.nextSeq - 1, cleared), true);
    const at = ++s.clock;
    const table = s.active;
    s.dead.addAll(fresh);
    for (const q of cleared) s.childless.add(q);
    // One push per value: push(...fresh) of a 1% delete at 100M spans (1.07M seqs) overflowed the stack.
    for (const q of fresh) table.dead.push(q);
    for (const q of cleared) table.childless.push(q);
    for (const [k, e] of s.memIds) {
      if (sortedHas(fresh, e.seq)) s.memIds.delete(k);
      else if (sortedHas(cleared, e.seq)) s.memIds.set(k, { ...e, has_children: false });
    }
    const done = this.#insert(table, null, at, fresh, cleared).finally(() => s.unapplied.splice(s.unapplied.indexOf(entry), 1));
    const entry = { at, firstSeq: s.nextSeq, done };
    s.unapplied.push(entry);
    durable.catch(() => undefined);
    await done;
    await durable;
    if (at > s.ackedClock) s.ackedClock = at;
    // A large delete can leave segments mostly dead: rewriting them gives the space back.
    if (s.options.autoCompact) this.#afterDelete();
  }

  /** Seqs of live sealed rows with the ids of `rows` (in the same project and run). */
  async #sealedVersions(rows: readonly LogRow[]): Promise<number[]> {
    const s = this.#s;
    const candidates = () => {
      const files = new Set<string>();
      const wanted: string[] = [];
      // A request's rows share one project and run: the prefix is made again only when they change.
      let prefix = '';
      let project: string | null = null;
      let run: string | null = null;
      for (const r of rows) {
        if (r.project_id !== project || r.run_id !== run) {
          project = r.project_id;
          run = r.run_id;
          prefix = `records/${partitionKey(project, run)}`;
        }
        const hit = s.index.candidates(r.id, prefix);
        if (hit.length === 0) continue;
        wanted.push(r.id);
        for (const f of hit) files.add(f);
      }
      return { files, wanted };
    };
    if (candidates().wanted.length === 0) return [];
    return this.#read(async () => {
      // The files are named once the read's snapshot pins them: a merge that commits while the read
      // waits for inserts deletes the files it replaced (those named before the wait may be gone).
      const { files, wanted } = candidates();
      if (wanted.length === 0) return [];
      const paths = [...files].map((f) => join(s.dir, f));
      const found = await s.db.all(
        sql`SELECT seq FROM read_parquet(${paths}, hive_partitioning = false) WHERE id IN (SELECT unnest(${wanted}::VARCHAR[]))`,
      );
      return found.map((r) => Number(r['seq'])).filter((q) => !s.dead.has(q));
    });
  }
}

function lostError(cause: unknown): StorageError {
  return new StorageError(
    'acknowledged rows could not be added to the in-memory table; reads and writes are refused until the store is reopened (the log replays them)',
    { cause },
  );
}

function entryOf(r: LogRow, table: number): MemEntry {
  return {
    seq: r.seq,
    project_id: r.project_id,
    type: r.type,
    trace_id: r.trace_id ?? null,
    session_id: r.session_id ?? null,
    has_children: r.has_children === true,
    table,
  };
}
