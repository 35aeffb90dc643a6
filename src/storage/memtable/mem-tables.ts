// The in-memory part of the store: one DuckDB table per write-ahead log file (`mem_<n>` holds exactly
// the rows of `wal-<n>.arrows`). Rows go in through one writer connection, as Arrow batches read by a
// table function (batch-source.ts), each request's rows and dead marks in one transaction, so a reader
// sees a request whole or not at all. Concurrent requests share a statement (group insert). When the
// active table is full it is frozen (no more rows) and a fresh one takes the writes; the sealer turns
// frozen tables into Parquet, and a sealed table is dropped once no reader that saw it is running.
import type { RecordBatch } from 'apache-arrow';
import type { BatchSource } from '../../db/batch-source.js';
import type { Connection } from '../../db/database.js';
import { ident, int, raw, sql, type Sql } from '../../query/sql.js';
import { idHash } from '../indexes/id-index.js';
import { kindOf, tableDdl, type RecordKind } from '../../record/record-columns.js';

/** Rows of one project, run and kind in a table: what the sealer writes as one segment. */
export interface MemPartition {
  readonly projectId: string;
  readonly runId: string;
  readonly kind: RecordKind;
  /** Id hashes of every row written (a superset of the live ones; candidates are confirmed in DuckDB). */
  readonly hashes: number[];
  readonly metrics: Set<string>;
  rows: number;
  /**
   * Span partitions: per type, whether any row has children and which noted columns any row sets (a
   * superset of the live rows'), so the planner's facts need not scan the table; null once rows came
   * whose columns were not looked at (replayed from the log).
   */
  types: TypeNotes | null;
  /** created_at (epoch µs) of its oldest and newest row, and how far the most belated row came behind the newest before it. */
  oldestUs: number;
  newestUs: number;
  behindUs: number;
}

/** Span type -> whether a row of it has children, and the noted columns some row of it sets. */
export type TypeNotes = Map<string, { children: boolean; columns: Set<string> }>;

export class MemTable {
  readonly number: number;
  readonly name: string;
  /** Sequence numbers from here on were written to this table (lower ones are in older tables or segments). */
  readonly firstSeq: number;
  rows = 0;
  bytes = 0;
  frozen = false;
  /** Resolves once the table exists; every insert waits for it. */
  readonly created: Promise<void>;
  /** True once the table exists (snapshots leave out tables that do not yet). */
  ready = false;
  readonly partitions = new Map<string, MemPartition>();
  /** Sequence numbers this table's log file marks dead (deletes and replaced versions). */
  readonly dead: number[] = [];
  /** Sequence numbers this table's log file marks childless (has_children overrides, see snapshot.ts). */
  readonly childless: number[] = [];
  /**
   * Awaited parents this table's log file adds ([project, run, id]) or resolves (null: the parent
   * arrived), by run/id key, in the order of their last change; the seal applies them to the manifest.
   */
  readonly awaits = new Map<string, readonly [string, string, string] | null>();
  /** Inserts not yet committed; the sealer waits for them. */
  pending = 0;
  #idle: (() => void)[] = [];

  /** `name`: the DuckDB table (a read-only store numbers its tables apart from the log files'). */
  constructor(number: number, firstSeq: number, created: Promise<void>, name = `mem_${number}`) {
    this.number = number;
    this.name = name;
    this.firstSeq = firstSeq;
    this.created = created.then(() => {
      this.ready = true;
    });
    // Inserts into the table see a failure; nobody else has to handle it.
    this.created.catch(() => undefined);
  }

  /**
   * Notes rows appended (in the log already, in DuckDB soon) for the sealer: their partitions, id
   * hashes and metric names. The rows of one append belong to one project and run.
   */
  noteRows(
    projectId: string,
    runId: string,
    rows: readonly ({ id: string; type: string; created_at?: unknown } & Record<string, unknown>)[],
    metricsByKind: ReadonlyMap<RecordKind, ReadonlySet<string>>,
    bytes: number,
    noted: readonly string[] | null,
  ): void {
    this.rows += rows.length;
    this.bytes += bytes;
    let last: MemPartition | undefined;
    for (const r of rows) {
      const kind = kindOf(r.type);
      if (!last || last.kind !== kind) last = this.#partition(projectId, runId, kind);
      last.rows++;
      last.hashes.push(idHash(r.id));
      if (kind === 'span' && last.types) {
        if (noted === null) last.types = null;
        else noteType(last.types, r, noted);
      }
      // Rows without a time (a replayed log's link columns) count as out of order: the seal sorts.
      const c = typeof r.created_at === 'number' ? r.created_at : Number.NaN;
      if (c < last.oldestUs) last.oldestUs = c;
      if (c > last.newestUs) last.newestUs = c;
      else if (!(last.newestUs - c <= last.behindUs)) last.behindUs = Number.isNaN(c) ? Infinity : last.newestUs - c;
    }
    for (const [kind, names] of metricsByKind) for (const n of names) this.#partition(projectId, runId, kind).metrics.add(n);
  }

  #partition(projectId: string, runId: string, kind: RecordKind): MemPartition {
    const key = `${projectId}/${runId}/${kind}`;
    let p = this.partitions.get(key);
    if (!p)
      this.partitions.set(
        key,
        (p = {
          projectId,
          runId,
          kind,
          hashes: [],
          metrics: new Set(),
          rows: 0,
          types: kind === 'span' ? new Map() : null,
          oldestUs: Infinity,
          newestUs: -Infinity,
          behindUs: 0,
        }),
      );
    return p;
  }

  /** Resolves once no insert into this table is pending. */
  settled(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((r) => this.#idle.push(r));
  }

  done(n: number): void {
    this.pending -= n;
    if (this.pending === 0) for (const r of this.#idle.splice(0)) r();
  }

  /**
   * created_at (epoch µs) of the oldest and newest row of a scope noted here (a superset of what any
   * snapshot sees), or null when some row came without a time (a replayed log's): then it may hold any.
   */
  createdRange(projectId: string, runId: string | undefined, kinds: readonly RecordKind[]): readonly [number, number] | null {
    let lo = Infinity;
    let hi = -Infinity;
    for (const p of this.partitions.values()) {
      if (p.projectId !== projectId || (runId !== undefined && p.runId !== runId) || !kinds.includes(p.kind)) continue;
      if (!Number.isFinite(p.behindUs)) return null;
      lo = Math.min(lo, p.oldestUs);
      hi = Math.max(hi, p.newestUs);
    }
    return [lo, hi];
  }

  hasScope(projectId: string, runId: string | undefined, kinds: readonly RecordKind[]): boolean {
    for (const p of this.partitions.values()) {
      if (p.projectId === projectId && (runId === undefined || p.runId === runId) && kinds.includes(p.kind)) return true;
    }
    return false;
  }
}

function noteType(types: TypeNotes, r: { type: string } & Record<string, unknown>, noted: readonly string[]): void {
  let t = types.get(r.type);
  if (!t) types.set(r.type, (t = { children: false, columns: new Set() }));
  if (r['has_children'] === true) t.children = true;
  for (const c of noted) if (r[c] != null) t.columns.add(c);
}

type Pending =
  | {
      readonly kind: 'insert';
      readonly table: MemTable;
      readonly batch: RecordBatch | null;
      readonly dead: readonly number[];
      readonly childless: readonly number[];
      /** The log entry's number (StoreState.clock; 0 when replayed): stamped on its marks. */
      readonly at: number;
      readonly resolve: () => void;
      readonly reject: (e: unknown) => void;
    }
  | { readonly kind: 'run'; readonly q: Sql; readonly resolve: () => void; readonly reject: (e: unknown) => void };

type Insert = Extract<Pending, { kind: 'insert' }>;

/**
 * Rows of queued inserts that start a group at once; fewer wait up to LINGER_MS for more to join, so a
 * statement's fixed cost (paid per column) is shared. Nothing waits for it: appends are acknowledged
 * once logged, and whoever needs the rows in DuckDB (a read, the sealer, a full pipeline) calls flush().
 */
const GROUP_ROWS = 4096;
const LINGER_MS = 20;

/**
 * Inserts into memory tables through one connection, a transaction per group of requests. Other
 * statements on the writer's tables (dropping a sealed table, forgetting dead seqs) queue behind the
 * inserts before them.
 */
export class MemInserter {
  readonly #conn: Connection;
  readonly #source: BatchSource;
  #queue: Pending[] = [];
  #running = false;
  #queuedRows = 0;
  #linger: NodeJS.Timeout | null = null;

  constructor(conn: Connection, source: BatchSource) {
    this.#conn = conn;
    this.#source = source;
  }

  /** Creates a table (its `created` promise). */
  create(name: string): Promise<void> {
    return this.run(raw(tableDdl(name)));
  }

  /** Rows, dead marks and has_children overrides of one request; resolves once all are visible to readers. */
  insert(table: MemTable, batch: RecordBatch | null, dead: readonly number[], childless: readonly number[] = [], at = 0): Promise<void> {
    table.pending++;
    return new Promise((resolve, reject) => this.#push({ kind: 'insert', table, batch, dead, childless, at, resolve, reject }));
  }

  /** Runs a statement after everything queued before it. */
  run(q: Sql): Promise<void> {
    return new Promise((resolve, reject) => this.#push({ kind: 'run', q, resolve, reject }));
  }

  #push(p: Pending): void {
    this.#queue.push(p);
    if (p.kind === 'insert' && p.batch) this.#queuedRows += p.batch.numRows;
    if (this.#running) return;
    // Deletes and other statements go at once (their callers wait); row inserts may linger.
    if (p.kind === 'run' || !p.batch || this.#queuedRows >= GROUP_ROWS) this.flush();
    else this.#linger ??= setTimeout(() => this.flush(), LINGER_MS);
  }

  /** Starts what is queued now (a caller needs it visible). */
  flush(): void {
    if (this.#linger) clearTimeout(this.#linger);
    this.#linger = null;
    if (!this.#running && this.#queue.length > 0) void this.#loop();
  }

  /** Resolves once everything queued so far has run. */
  idle(): Promise<void> {
    return this.run(sql`SELECT 1`).catch(() => undefined);
  }

  async #loop(): Promise<void> {
    this.#running = true;
    try {
      while (this.#queue.length > 0) {
        const head = this.#queue[0]!;
        if (head.kind === 'run') {
          this.#queue.shift();
          await this.#conn.run(head.q).then(head.resolve, head.reject);
          continue;
        }
        // Inserts queued so far into the same table go in one transaction.
        let n = 0;
        while (n < this.#queue.length) {
          const p = this.#queue[n]!;
          if (p.kind !== 'insert' || p.table !== head.table) break;
          n++;
        }
        const group = this.#queue.splice(0, n) as Insert[];
        for (const p of group) if (p.batch) this.#queuedRows -= p.batch.numRows;
        try {
          await head.table.created;
          await this.#commit(head.table, group);
          for (const p of group) p.resolve();
        } catch (err) {
          for (const p of group) p.reject(err);
        } finally {
          head.table.done(group.length);
        }
      }
    } finally {
      this.#running = false;
    }
  }

  async #commit(table: MemTable, group: readonly Insert[]): Promise<void> {
    const batches = group.flatMap((p) => (p.batch && p.batch.numRows > 0 ? [p.batch] : []));
    const [dead, deadAt] = marksOf(group, (p) => p.dead);
    const keys: number[] = [];
    const inserts: Sql[] = [];
    if (batches.length > 0) {
      const key = this.#source.addBatches(batches);
      keys.push(key);
      inserts.push(sql`INSERT INTO ${ident(table.name)} SELECT * FROM ${raw(this.#source.batchesFn)}(${int(key)})`);
    }
    if (dead.length > 0) {
      const key = this.#source.addSeqs(dead, deadAt);
      keys.push(key);
      inserts.push(sql`INSERT INTO dead (seq, clock) SELECT seq, clock FROM ${raw(this.#source.seqsFn)}(${int(key)})`);
    }
    const [childless, childlessAt] = marksOf(group, (p) => p.childless);
    if (childless.length > 0) {
      const key = this.#source.addSeqs(childless, childlessAt);
      keys.push(key);
      inserts.push(sql`INSERT INTO childless (seq, clock) SELECT seq, clock FROM ${raw(this.#source.seqsFn)}(${int(key)})`);
    }
    try {
      // The inserts read table functions whose callbacks run on the main thread: polled (see runPolled).
      // One statement commits or rolls back alone: no transaction around it (two statements fewer for
      // the common group, rows without replaced versions).
      if (inserts.length === 1) {
        await this.#conn.runPolled(inserts[0]!);
        return;
      }
      await this.#conn.run(sql`BEGIN TRANSACTION`);
      for (const q of inserts) await this.#conn.runPolled(q);
      await this.#conn.run(sql`COMMIT`);
    } catch (err) {
      await this.#conn.run(sql`ROLLBACK`).catch(() => undefined);
      throw err;
    } finally {
      for (const k of keys) this.#source.release(k);
    }
  }
}

/**
 * The marks of a group of inserts and, beside each, the clock of the insert it came with, as typed
 * arrays: flatMap over a large delete's million seqs cost hundreds of milliseconds.
 */
function marksOf(group: readonly Insert[], pick: (p: Insert) => readonly number[]): [Float64Array, Float64Array] {
  let n = 0;
  for (const p of group) n += pick(p).length;
  const seqs = new Float64Array(n);
  const at = new Float64Array(n);
  let o = 0;
  for (const p of group) {
    const list = pick(p);
    for (let i = 0; i < list.length; i++) seqs[o + i] = list[i]!;
    at.fill(p.at, o, o + list.length);
    o += list.length;
  }
  return [seqs, at];
}
