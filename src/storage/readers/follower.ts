// A read-only store's state: the writer's manifest plus the acknowledged tail of its write-ahead log,
// read from the files without the writer's help and without changing any of them (a torn last request
// is left out in memory, not cut off). Each log file not yet sealed becomes a memory table of this
// process's own DuckDB, as on a writer's open; `refresh` reads what was added since (the new bytes of
// each log file, a new manifest) and moves the state forward in one step, like the writer's commits:
// rows and marks loaded by a refresh carry sequence numbers and a clock above every earlier snapshot's
// bounds, so a snapshot taken before keeps its view, and tables and marks that the new state no longer
// needs are dropped once no snapshot that may read them is running.
//
// Consistency: the manifest is read, then the log files it has not sealed, then the manifest's stamp
// again; the writer deletes a log file only after a manifest that seals it, so an unchanged stamp
// means the files read are exactly the unsealed ones, and each is read as a prefix of its requests
// (a file is complete before the next one is written), so the state is a prefix of the log.
import { join } from 'node:path';
import { BatchSource } from '../../db/batch-source.js';
import type { Database } from '../../db/database.js';
import { StorageError } from '../../errors.js';
import { ident, int, raw, sql } from '../../query/sql.js';
import { RECORD_COLUMNS, tableDdl } from '../../record/record-columns.js';
import { EMPTY_MANIFEST, loadManifestStamped, manifestStamp, type ManifestState } from '../manifest/manifest.js';
import { MemInserter, MemTable } from '../memtable/mem-tables.js';
import { resolveOptions } from '../record-store-open.js';
import type { RecordStoreOptions } from '../record-store-options.js';
import { EMPTY_TABLE } from '../snapshot/snapshot-source.js';
import { StoreState } from '../store-state.js';
import { linkColumns, metricNames } from '../wal/replay.js';
import { listWalFiles, readWalFrom, WriteAheadLog, type WalEntry, type WalFile } from '../wal/wal.js';
import { DEFAULT_LEASE_MS, ReaderLease } from './leases.js';

export interface FollowOptions {
  /** Keep a lease in `<data>/readers` when the folder can be written there (default true; readers/leases.ts). */
  lease?: boolean;
  /** The lease's term in ms (default 30 s). */
  leaseMs?: number;
}

/** A log file as loaded: which file it was, how far it was read, its memory table. */
interface Followed {
  readonly number: number;
  readonly ino: number;
  readonly firstSeq: number;
  consumed: number;
  readonly table: MemTable;
}

interface LogRead {
  readonly file: WalFile;
  /** The same file as loaded before (its new requests follow), or undefined: a file new to us. */
  readonly known: Followed | undefined;
  readonly entries: WalEntry[];
  readonly firstSeq: number;
  readonly validBytes: number;
  readonly ino: number;
}

/** Tries of a refresh against a writer that keeps replacing the manifest while it reads. */
const MAX_TRIES = 50;

export class Follower {
  readonly #s: StoreState;
  #files = new Map<number, Followed>();
  #stamp: string | null = null;
  #tables = 0;
  #lease: ReaderLease | null = null;
  /** Live snapshots by the manifest generation they read (the lease names the oldest). */
  readonly #pins = new Map<number, number>();
  #running: Promise<void> | null = null;
  #queued: Promise<void> | null = null;

  private constructor(s: StoreState) {
    this.#s = s;
  }

  /** Loads the folder's current state into a state of its own over `db`. */
  static async open(
    dir: string,
    db: Database,
    options: RecordStoreOptions & FollowOptions,
  ): Promise<{ state: StoreState; follower: Follower }> {
    const source = new BatchSource(RECORD_COLUMNS);
    const writer = await db.dedicated(source.functions);
    const conn = await db.dedicated();
    const resolved = { ...resolveOptions(options), autoCompact: false };
    const s = new StoreState(
      dir,
      db,
      WriteAheadLog.detached(join(dir, 'wal')),
      new MemInserter(writer, source),
      { seal: conn, merge: conn, mergeWrite: conn },
      resolved,
      EMPTY_MANIFEST,
    );
    s.readOnly = true;
    await writer.run(sql`CREATE TABLE dead (seq BIGINT, gen BIGINT NOT NULL DEFAULT 0, clock BIGINT NOT NULL DEFAULT 0)`);
    await writer.run(sql`CREATE TABLE childless (seq BIGINT, clock BIGINT NOT NULL DEFAULT 0)`);
    await writer.run(raw(tableDdl(EMPTY_TABLE)));
    const follower = new Follower(s);
    await follower.refresh();
    if (options.lease !== false)
      follower.#lease = ReaderLease.take(dir, () => follower.#oldestGeneration(), options.leaseMs ?? DEFAULT_LEASE_MS);
    return { state: s, follower };
  }

  /**
   * Moves to the newest state the files hold. Calls made while one runs share the next one, so each
   * call sees everything acknowledged before it was made.
   */
  refresh(): Promise<void> {
    if (!this.#running) {
      this.#running = this.#load().finally(() => {
        this.#running = null;
      });
      return this.#running;
    }
    this.#queued ??= this.#running
      .catch(() => undefined)
      .then(() => {
        this.#queued = null;
        return this.refresh();
      });
    return this.#queued;
  }

  /** Counts a snapshot of `generation` until the returned function is called. */
  pin(generation: number): () => void {
    this.#pins.set(generation, (this.#pins.get(generation) ?? 0) + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const n = this.#pins.get(generation)! - 1;
      if (n === 0) this.#pins.delete(generation);
      else this.#pins.set(generation, n);
    };
  }

  /** Whether this store announces itself with a lease. */
  get leased(): boolean {
    return this.#lease !== null;
  }

  close(): void {
    this.#lease?.stop();
    this.#lease = null;
  }

  /** The oldest manifest generation a read may still use: the current one, or an older snapshot's. */
  #oldestGeneration(): number {
    let g = this.#s.manifest.generation;
    for (const k of this.#pins.keys()) g = Math.min(g, k);
    return g;
  }

  async #load(): Promise<void> {
    const s = this.#s;
    s.assertOpen();
    for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
      const unchanged = this.#stamp !== null && manifestStamp(s.dir) === this.#stamp;
      const { state, stamp } = unchanged ? { state: s.manifest, stamp: this.#stamp } : loadManifestStamped(s.dir);
      const reads = this.#readLogs(state.sealed_wal);
      if (reads !== null && manifestStamp(s.dir) === stamp) {
        await this.#apply(state, stamp, reads);
        return;
      }
      // The writer sealed (and deleted) a log file meanwhile: read the new manifest.
      await new Promise((r) => setTimeout(r, Math.min(2 ** attempt, 50)));
    }
    throw new StorageError(`the data folder ${s.dir} kept changing while it was read; try again`);
  }

  /** The requests of every unsealed log file that were not loaded yet; null when a file vanished meanwhile. */
  #readLogs(sealedWal: number): LogRead[] | null {
    let files: WalFile[];
    try {
      files = listWalFiles(join(this.#s.dir, 'wal'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const out: LogRead[] = [];
    for (const file of files) {
      if (file.number <= sealedWal) continue;
      let known = this.#files.get(file.number);
      try {
        let r = readWalFrom(file.path, known?.consumed ?? 0);
        // A file of that number made anew (the writer restarted) is another file: read it whole.
        if (known && (r.ino !== known.ino || (r.validBytes > 0 && r.firstSeq !== known.firstSeq))) {
          known = undefined;
          r = readWalFrom(file.path, 0);
        }
        out.push({ file, known, ...r });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw err;
      }
    }
    return out;
  }

  async #apply(manifest: ManifestState, stamp: string | null, reads: readonly LogRead[]): Promise<void> {
    const s = this.#s;
    const changed = stamp !== this.#stamp;
    const gone = [...this.#files.values()].filter((f) => !reads.some((r) => r.known === f));
    if (!changed && gone.length === 0 && reads.every((r) => r.known && r.entries.length === 0)) return;
    const clock = s.clock + 1;
    let nextSeq = Math.max(s.nextSeq, manifest.sealed_seq + 1);
    const files = new Map<number, Followed>();
    const inserts: Promise<void>[] = [];
    for (const r of reads) {
      let f = r.known;
      // A file not headed yet holds no request: it is taken once it is (its first seq is needed).
      if (!f && r.validBytes === 0) continue;
      if (!f) {
        const name = `ro_mem_${++this.#tables}`;
        const table = new MemTable(r.file.number, r.firstSeq, s.inserter.create(name), name);
        table.frozen = true;
        f = { number: r.file.number, ino: r.ino, firstSeq: r.firstSeq, consumed: 0, table };
      }
      for (const e of r.entries) {
        nextSeq = Math.max(nextSeq, e.lastSeq + 1);
        for (const q of e.dead) f.table.dead.push(q);
        for (const q of e.childless) f.table.childless.push(q);
        if (e.batch) {
          const rows = linkColumns(e.batch);
          f.table.noteRows(rows[0]!.project_id, rows[0]!.run_id, rows, metricNames(e.batch, rows), 0, null);
        }
        // The marks go in below, all of them as one set: here only the rows.
        if (e.batch) inserts.push(s.inserter.insert(f.table, e.batch, [], [], clock));
      }
      if (r.validBytes > f.consumed) f.consumed = r.validBytes;
      files.set(f.number, f);
    }
    // The marks the new state honours: the manifest's and those of the log files it has not sealed.
    // With the same manifest and every file still there, that is the last load's plus the new entries'
    // (no set of every dead seq built again on each refresh: a million after a large delete).
    // Otherwise the dead seqs are compared as sorted arrays, one walk (a JS Set of them cost most of a second).
    const appended = !changed && gone.length === 0;
    const dead = appended ? null : diffSorted(sortedMarks(manifest.dead, files), s.dead.sorted());
    const childless = appended ? null : marksOf(manifest.childless, files, 'childless');
    const newDead = dead ? dead.added : newMarks(reads, 'dead', s.dead);
    const newChildless = appended ? newMarks(reads, 'childless', s.childless) : [...childless!].filter((q) => !s.childless.has(q));
    if (newDead.length > 0)
      inserts.push(s.inserter.run(sql`INSERT INTO dead (seq, clock) SELECT unnest(${newDead}::BIGINT[]), ${int(clock)}`));
    if (newChildless.length > 0)
      inserts.push(s.inserter.run(sql`INSERT INTO childless (seq, clock) SELECT unnest(${newChildless}::BIGINT[]), ${int(clock)}`));
    await Promise.all(inserts);
    s.dead.addAll(newDead);
    for (const q of newChildless) s.childless.add(q);
    // Marks only shrink when a seal or merge left their rows behind (a new manifest) or a table went.
    const oldDead = dead ? dead.removed : [];
    const oldChildless = childless ? [...s.childless].filter((q) => !childless.has(q)) : [];
    // One synchronous step: snapshots taken from here on see the new state, older ones keep theirs.
    s.manifest = manifest;
    s.mem = [...files.values()].sort((a, b) => a.number - b.number).map((f) => f.table);
    s.nextSeq = nextSeq;
    s.clock = clock;
    this.#files = files;
    this.#stamp = stamp;
    if (gone.length > 0 || oldDead.length > 0 || oldChildless.length > 0)
      s.afterReaders(async () => {
        for (const f of gone) await s.inserter.run(sql`DROP TABLE IF EXISTS ${ident(f.table.name)}`);
        await s.forget(oldDead);
        await s.forgetChildless(oldChildless);
      });
  }
}

/** The dead seqs a state honours (the manifest's and its unsealed log files'), ascending, each once. */
function sortedMarks(listed: readonly number[], files: ReadonlyMap<number, Followed>): Float64Array {
  let n = listed.length;
  for (const f of files.values()) n += f.table.dead.length;
  const all = new Float64Array(n);
  all.set(listed);
  let at = listed.length;
  for (const f of files.values()) for (const q of f.table.dead) all[at++] = q;
  let ascending = true;
  for (let i = 1; i < n && ascending; i++) if (all[i]! <= all[i - 1]!) ascending = false;
  if (ascending) return all;
  all.sort();
  let w = 0;
  for (let i = 0; i < n; i++) if (w === 0 || all[i] !== all[w - 1]) all[w++] = all[i]!;
  return all.subarray(0, w);
}

/** What `want` holds that `held` does not (added) and the reverse (removed); both ascending, distinct. */
export function diffSorted(want: Float64Array, held: Float64Array): { added: number[]; removed: number[] } {
  const added: number[] = [];
  const removed: number[] = [];
  let i = 0;
  let j = 0;
  while (i < want.length || j < held.length) {
    if (j === held.length || (i < want.length && want[i]! < held[j]!)) added.push(want[i++]!);
    else if (i === want.length || held[j]! < want[i]!) removed.push(held[j++]!);
    else {
      i++;
      j++;
    }
  }
  return { added, removed };
}

/** The marks of a kind a state honours: the manifest's and those of its unsealed log files. */
function marksOf(listed: readonly number[], files: ReadonlyMap<number, Followed>, kind: 'dead' | 'childless'): Set<number> {
  const out = new Set<number>(listed);
  for (const f of files.values()) for (const q of f.table[kind]) out.add(q);
  return out;
}

/** The marks of a kind the entries just read add to those held (`held`), each once. */
function newMarks(reads: readonly LogRead[], kind: 'dead' | 'childless', held: { has(q: number): boolean }): number[] {
  const out = new Set<number>();
  for (const r of reads) for (const e of r.entries) for (const q of e[kind]) if (!held.has(q)) out.add(q);
  return [...out];
}
