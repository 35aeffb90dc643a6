// A reader's view of the store: the segments of one manifest generation plus the memory tables live
// when it was taken. Readers never wait for writers, seals or merges: a snapshot costs a few array
// copies, and it pins the database so no file or table it names is deleted before it is released
// (even if its statements start later). Dead rows are filtered by the `dead` table, read in the same
// statement as the rows, so a replaced record shows its old or its new version, never both. Marks
// that a commit makes effective (a bulk load's, written before its manifest) carry that commit's
// generation: a snapshot of an older manifest ignores them, as it does the segments they go with.
// Rows whose seq is in the `childless` table (parents a delete left without children) read
// has_children false; the expression is added only while any such override exists.
// Every statement over one snapshot sees the same state, however many it runs: memory rows logged
// after it began (seq above its last one) and marks logged after it (`clock` above its own) are left
// out, and a request's rows and marks commit in one transaction, so an entry counts whole or not at
// all. The bounds are those of the entries already in DuckDB (StoreState.visibleBounds): an entry
// taken but not committed when the snapshot began would count in statements run after its commit
// only. That makes reading segments without any dead row (per the store's own dead set) without the
// dead-row filter safe: a mark logged later is ignored everywhere, so is the row it came with.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Database, Row } from '../../db/database.js';
import { ident, int, joinSql, raw, sql, type Sql } from '../../query/sql.js';
import { childIndexPath, childRowsPath } from '../indexes/child-index.js';
import { indexChecked } from '../indexes/unchecked-indexes.js';
import type { DeadSet } from '../manifest/dead-set.js';
import type { SealedIdIndex } from '../indexes/id-index.js';
import { partitionKey, type ManifestState, type SegmentEntry } from '../manifest/manifest.js';
import type { MemTable, TypeNotes } from '../memtable/mem-tables.js';
import { lowerBound } from '../memtable/seq-lists.js';
import { COLUMN_NAMES, KIND_SQL, STORED_SELECT, type RecordKind } from '../../record/record-columns.js';
import type { Scope } from './scope.js';
import type { DeadRowsOf, SegmentDeadRows } from './segment-dead-rows.js';
import { sourceSql, type SourceParts, type SourcePick, type SourceSql } from './snapshot-source.js';
import type { TextRequirement } from '../indexes/text-index.js';
import { textCandidates, timeProfile, type TimeProfile } from './time-profile.js';

export type { Scope, TextRequirement };

/**
 * Retention: for a project, the runs whose records expire and the created_at (epoch µs) before which
 * they do. Evaluated when a snapshot is taken; expired rows are left out of every source at once.
 */
export interface RetentionView {
  cutoffs(projectId: string): ReadonlyMap<string, number>;
}

/** Where a snapshot's view of the log ends (see the header). */
export interface SnapshotBounds {
  /** The last log entry it sees (StoreState.clock when taken). */
  readonly clock: number;
  /** The last seq logged when it was taken. */
  readonly lastSeq: number;
  /** The store's dead seqs (live: a superset of those the snapshot honours, for its segments). */
  readonly dead: DeadSet;
  /** The store's lists of each segment's dead rows (segment-dead-rows.ts). */
  readonly deadRows: SegmentDeadRows;
}

const COLS = raw(COLUMN_NAMES.join(', '));

export class Snapshot {
  readonly #dir: string;
  readonly #manifest: ManifestState;
  readonly #mem: readonly MemTable[];
  readonly #db: Database;
  readonly #index: SealedIdIndex;
  readonly #release: () => void;
  readonly #retention: RetentionView | undefined;
  readonly #cutoffCache = new Map<string, ReadonlyMap<string, number>>();
  /** `SELECT *` with has_children overridden, or plain when no override exists (nothing to join). */
  readonly #star: Sql;
  readonly #bounds: SnapshotBounds;
  #deadFree: ReadonlySet<string> | null = null;
  readonly #alsoOnRelease: (() => void)[] = [];

  constructor(
    dir: string,
    db: Database,
    manifest: ManifestState,
    mem: readonly MemTable[],
    index: SealedIdIndex,
    bounds: SnapshotBounds,
    retention?: RetentionView,
    overrides = true,
  ) {
    this.#dir = dir;
    this.#bounds = bounds;
    this.#star = overrides ? sql`* REPLACE ((has_children AND seq NOT IN ${this.childlessSeqs}) AS has_children)` : raw('*');
    this.#retention = retention;
    this.#db = db;
    this.#manifest = manifest;
    this.#mem = mem;
    this.#index = index;
    this.#release = db.pin();
    if (!Number.isSafeInteger(manifest.generation)) throw new Error(`bad manifest generation ${manifest.generation}`);
  }

  /** The dead sequence numbers this snapshot honours, as a subquery (generation and clock are the store's own counters). */
  get deadSeqs(): Sql {
    return sql`(SELECT seq FROM dead WHERE ${this.#honoured})`;
  }

  /** The dead sequence numbers this snapshot honours within [lo, hi], as a subquery. */
  deadSeqsIn(lo: number, hi: number): Sql {
    return sql`(SELECT seq FROM dead WHERE ${this.#honoured} AND seq BETWEEN ${int(lo)} AND ${int(hi)})`;
  }

  /** Whether a row of the `dead` table is a mark this snapshot honours (made at or before its generation and clock). */
  get #honoured(): Sql {
    return sql`(gen <= ${int(this.#manifest.generation)} AND clock <= ${int(this.#bounds.clock)})`;
  }

  /**
   * Names the dead rows this snapshot honours in the segments it reads: snapshots with the same view
   * filter those segments alike (a mark on a row of a listed segment is never forgotten while a
   * snapshot of that manifest lives, and later marks carry a later clock or generation).
   */
  get deadView(): string {
    return `${this.#manifest.generation}:${this.#bounds.clock}`;
  }

  /** The has_children overrides this snapshot honours, as a subquery. */
  get childlessSeqs(): Sql {
    return sql`(SELECT seq FROM childless WHERE clock <= ${int(this.#bounds.clock)})`;
  }

  /** The condition on a memory table's rows that leaves out those logged after the snapshot. */
  get memBound(): Sql {
    return sql`seq <= ${int(this.#bounds.lastSeq)}`;
  }

  /** Whether no dead seq lies in a memory table's seq range (up to the next table's first, or the snapshot's last). */
  #memDeadFree(t: MemTable): boolean {
    const next = this.#mem[this.#mem.indexOf(t) + 1];
    return !this.#bounds.dead.anyIn(t.firstSeq, next ? next.firstSeq - 1 : this.#bounds.lastSeq);
  }

  /**
   * Segments none of whose rows is dead (checked by seq range against the store's dead set: a
   * superset of the dirty ones). Reads take them without the dead-row filter (see the header).
   */
  deadFreeFiles(): ReadonlySet<string> {
    if (this.#deadFree) return this.#deadFree;
    const dead = this.#bounds.dead;
    return (this.#deadFree = new Set(this.#manifest.segments.filter((g) => !dead.anyIn(g.min_seq, g.max_seq)).map((g) => g.file)));
  }

  /**
   * How many rows of these segments (of this snapshot's manifest) are live at this snapshot: their row
   * counts less their dead rows it honours, from the segments' dead-row lists (segment-dead-rows.ts).
   * Retention is not applied: callers pass segments it cuts none of. `made`: lists made by a read.
   */
  async liveRows(segs: readonly SegmentEntry[]): Promise<{ rows: number; made: number }> {
    const { lists, count, made, notYet } = await this.#deadLists(segs);
    let n = -count;
    for (const s of segs) n += s.rows;
    for (const list of lists) n += notYet(list).length;
    return { rows: n, made };
  }

  /**
   * The rows of these segments (of this snapshot's manifest) that are dead at this snapshot, as their
   * places in each segment's file (file_row_number), by file; a segment with none is left out. From the
   * segments' dead-row lists, as liveRows.
   */
  async deadFileRows(segs: readonly SegmentEntry[]): Promise<Map<string, readonly number[]>> {
    const { lists, notYet } = await this.#deadLists(segs);
    const out = new Map<string, readonly number[]>();
    for (const list of lists) {
      const later = new Set(notYet(list));
      // The list's own array where the snapshot honours every mark (not to be changed).
      const rows = later.size === 0 ? list.rows : list.rows.filter((_, i) => !later.has(i));
      if (rows.length > 0) out.set(list.file, rows);
    }
    return out;
  }

  /**
   * The segments' dead-row lists, and for each list the indexes of its rows this snapshot does not
   * honour yet (every mark on them came after it).
   */
  async #deadLists(segs: readonly SegmentEntry[]) {
    const { lists, count, made } = await this.#bounds.deadRows.deadSeqs(
      this.#db,
      this.#dir,
      segs,
      this.#bounds.dead,
      this.#manifest.segments,
    );
    let later: number[] = [];
    // A listed seq has a row in `dead` (lists are made from it, and a mark on a row of a listed segment
    // stays): those whose every row is marked after this snapshot are not dead to it.
    if (count > 0)
      later = (
        await this.#db.all(
          sql`SELECT seq FROM dead WHERE seq IN (SELECT seq FROM dead WHERE NOT ${this.#honoured})
          GROUP BY seq HAVING NOT bool_or(${this.#honoured})`,
        )
      ).map((r) => Number(r['seq']));
    const set = later.length > 64 ? new Set(later) : null;
    const notYet = (list: DeadRowsOf): number[] => {
      if (later.length === 0) return [];
      const out: number[] = [];
      if (set === null) {
        for (const q of later) {
          const i = lowerBound(list.seqs, q);
          if (list.seqs[i] === q) out.push(i);
        }
      } else for (const [i, q] of list.seqs.entries()) if (set.has(q)) out.push(i);
      return out;
    };
    return { lists, count, made, notYet };
  }

  /** Lets the files and tables this snapshot named go (call once, when every statement over it is done). */
  release(): void {
    this.#release();
    for (const fn of this.#alsoOnRelease.splice(0)) fn();
  }

  /** Runs `fn` when the snapshot is released (a read-only store's lease counts its snapshots' generations). */
  onRelease(fn: () => void): void {
    this.#alsoOnRelease.push(fn);
  }

  /** The manifest generation the snapshot reads. */
  get generation(): number {
    return this.#manifest.generation;
  }

  segmentsFor(scope: Scope): SegmentEntry[] {
    const cut = this.cutoffs(scope.projectId, scope.runId);
    return this.#manifest.segments.filter(
      (s) =>
        s.project_id === scope.projectId &&
        (scope.runId === undefined || s.run_id === scope.runId) &&
        scope.kinds.includes(s.kind) &&
        // A segment whose newest row has expired is not read at all.
        !(cut.has(s.run_id) && s.max_created_us < cut.get(s.run_id)!),
    );
  }

  /**
   * The child indexes (child-index.ts) of a scope's segments, as absolute paths; null when retention
   * cuts the scope (the index knows no created_at), a file is missing or not checked since the open
   * (unchecked-indexes.ts): callers read the segments.
   */
  childIndexes(scope: Scope): string[] | null {
    if (this.cutoffs(scope.projectId, scope.runId).size > 0) return null;
    const segs = this.segmentsFor(scope).map((s) => join(this.#dir, s.file));
    if (!segs.every((abs) => indexChecked('child', abs))) return null;
    const out = segs.map(childIndexPath);
    return out.every((f) => existsSync(f)) ? out : null;
  }

  /**
   * The row files of the child indexes (child-index.ts) of a scope's segments, with each segment's row
   * count and seq range; null when retention cuts the scope. A file may be missing or stale: callers
   * check each (childRowsHeader) and read the others' rows otherwise.
   */
  childRowFiles(scope: Scope): { path: string; rows: number; min_seq: number; max_seq: number }[] | null {
    if (this.cutoffs(scope.projectId, scope.runId).size > 0) return null;
    return this.segmentsFor(scope).map((s) => ({
      path: childRowsPath(join(this.#dir, s.file)),
      rows: s.rows,
      min_seq: s.min_seq,
      max_seq: s.max_seq,
    }));
  }

  /** Runs of a project (or the one run) whose records expire, with their cutoffs (epoch µs). */
  cutoffs(projectId: string, runId?: string): ReadonlyMap<string, number> {
    if (!this.#retention) return new Map();
    let all = this.#cutoffCache.get(projectId);
    if (!all) this.#cutoffCache.set(projectId, (all = this.#retention.cutoffs(projectId)));
    if (runId === undefined) return all;
    const one = all.get(runId);
    return one === undefined ? new Map() : new Map([[runId, one]]);
  }

  /** Whether a memory table may hold rows of the scope created within one of `created`. */
  #memMeets(t: MemTable, scope: Scope, created: readonly (readonly [number, number])[]): boolean {
    const r = t.createdRange(scope.projectId, scope.runId, scope.kinds);
    return r === null || created.some(([a, b]) => r[1] >= a && r[0] <= b);
  }

  #memFor(scope: Scope): MemTable[] {
    return this.#mem.filter((t) => t.ready && t.hasScope(scope.projectId, scope.runId, scope.kinds));
  }

  /**
   * The FROM source for a scope: live rows of its segments and memory tables, as a SQL fragment.
   * Each metric in `metrics` is also exposed as a DOUBLE column named by `metricColumn(name)` (the
   * shredded column where sealed, a map lookup in memory).
   */
  source(
    scope: Scope,
    metrics: readonly string[] = [],
    text: readonly TextRequirement[] = [],
    created: readonly (readonly [number, number])[] | null = null,
    pick?: SourcePick,
    locate = false,
  ): SourceSql {
    return this.#source(scope, metrics, false, text, undefined, created, pick, locate);
  }

  /** Sequence numbers of rows of a scope that retention has expired but are still stored (to purge them). */
  expiredSeqs(scope: Scope): Sql | null {
    if (this.cutoffs(scope.projectId, scope.runId).size === 0) return null;
    const src = this.#source(scope, [], true, []);
    return sql`SELECT seq FROM ${src.sql}`;
  }

  /**
   * A source whose sealed part is given: `segments` is a SELECT of `columns` (then one DOUBLE per
   * metric, named mx0, mx1, ...) standing in for the segments' rows (e.g. a cached top-k of them);
   * memory tables, `whole` (segments read whole beside it, as memory tables are), dead rows and
   * retention are applied as for `source`. With `locate`, `segments` ends with loc_row, loc_file,
   * loc_seq and loc_created as the other parts' rows do (snapshot-source.ts).
   */
  sourceWith(
    scope: Scope,
    metrics: readonly string[],
    columns: readonly string[],
    segments: Sql,
    whole: readonly SegmentEntry[] = [],
    locate = false,
  ): SourceSql {
    return this.#source(scope, metrics, false, [], { columns, segments, whole }, null, undefined, locate);
  }

  #source(
    scope: Scope,
    metrics: readonly string[],
    expiredOnly: boolean,
    text: readonly TextRequirement[],
    given?: SourceParts['given'],
    created: readonly (readonly [number, number])[] | null = null,
    pick?: SourcePick,
    locate = false,
  ): SourceSql {
    let segments = expiredOnly
      ? this.#manifest.segments.filter(
          (s) =>
            s.project_id === scope.projectId && (scope.runId === undefined || s.run_id === scope.runId) && scope.kinds.includes(s.kind),
        )
      : this.segmentsFor(scope);
    // A caller that keeps only rows created within `created` (a page's time window) reads no segment
    // created wholly outside it: listing a file costs DuckDB its metadata and statistics checks even
    // when every row group is skipped.
    if (created !== null) segments = segments.filter((s) => created.some(([a, b]) => s.max_created_us >= a && s.min_created_us <= b));
    if (pick) segments = segments.filter((s) => pick.files.has(s.file) === pick.only);
    let mem = pick?.memory === false ? [] : this.#memFor(scope);
    // Memory tables too: while logging goes on, a newest-first page's window often lies within the
    // newest table, and each table read is a scan of all its rows.
    if (created !== null) mem = mem.filter((t) => this.#memMeets(t, scope, created));
    const from: SourceParts = {
      dir: this.#dir,
      scope,
      metricIds: this.#manifest.metric_ids,
      segments: textCandidates(this.#dir, segments, text),
      mem,
      deadFree: given || expiredOnly ? null : this.deadFreeFiles(),
      memDeadFree: (t) => this.#memDeadFree(t),
      deadSeqs: this.deadSeqs,
      deadSeqsIn: (lo, hi) => this.deadSeqsIn(lo, hi),
      memBound: this.memBound,
      star: this.#star,
      cutoffs: this.cutoffs(scope.projectId, scope.runId),
      expiredOnly,
      given,
      locate,
    };
    return sourceSql(from, metrics);
  }

  /**
   * Rows of a scope still in memory tables, dead ones included (a superset, for facts about the
   * data), as a subquery; null when there are none.
   */
  /** Whether memory tables hold rows of a scope (dead ones too). */
  hasMemoryRows(scope: Scope): boolean {
    return this.#memFor(scope).length > 0;
  }

  memoryRows(scope: Scope, tables?: readonly MemTable[]): Sql | null {
    const mem = tables ?? this.#memFor(scope);
    if (mem.length === 0) return null;
    const where = [sql`project_id = ${scope.projectId}`];
    if (scope.runId !== undefined) where.push(sql`run_id = ${scope.runId}`);
    where.push(sql`${raw(KIND_SQL)} IN (SELECT unnest(${[...scope.kinds]}::VARCHAR[]))`);
    const test = joinSql(where, ' AND ');
    const parts = mem.map((t) => sql`SELECT ${COLS} FROM ${ident(t.name)} WHERE ${test}`);
    return sql`(${joinSql(parts, ' UNION ALL ')})`;
  }

  /**
   * What the memory tables noted about a scope's spans as they arrived (see MemPartition.types), and
   * the tables whose notes are incomplete (rows replayed from the log): those need memoryRows.
   */
  memoryNotes(scope: Scope): { notes: TypeNotes[]; unnoted: MemTable[] } {
    const notes: TypeNotes[] = [];
    const unnoted: MemTable[] = [];
    for (const t of this.#memFor(scope)) {
      const parts = [...t.partitions.values()].filter(
        (p) => p.kind === 'span' && p.projectId === scope.projectId && (scope.runId === undefined || p.runId === scope.runId),
      );
      if (parts.some((p) => p.types === null)) unnoted.push(t);
      else for (const p of parts) notes.push(p.types!);
    }
    return { notes, unnoted };
  }

  /** Live segments of a kind across every project (for SQL over the whole store). */
  segmentsOfKind(kind: RecordKind): SegmentEntry[] {
    return this.#manifest.segments.filter((s) => s.kind === kind);
  }

  /** Absolute path of a segment. */
  path(segment: SegmentEntry): string {
    return join(this.#dir, segment.file);
  }

  /** Names of the memory tables this snapshot reads (rows not yet sealed, dead ones included). */
  memTableNames(): string[] {
    return this.#mem.filter((t) => t.ready).map((t) => t.name);
  }

  /** Metric name -> id of the shredded `m<id>` columns in segments. */
  get metricIds(): Readonly<Record<string, number>> {
    return this.#manifest.metric_ids;
  }

  /** Metric names that rows in memory tables carry, by kind (across projects). */
  memMetricNames(kind: RecordKind): Set<string> {
    const names = new Set<string>();
    for (const t of this.#mem) for (const part of t.partitions.values()) if (part.kind === kind) for (const n of part.metrics) names.add(n);
    return names;
  }

  /** Sequence numbers of the live rows of a scope that are still in memory tables. */
  async memorySeqs(scope: Scope): Promise<number[]> {
    const mem = this.#memFor(scope);
    if (mem.length === 0) return [];
    const where = [sql`project_id = ${scope.projectId}`, this.memBound];
    if (scope.runId !== undefined) where.push(sql`run_id = ${scope.runId}`);
    const test = joinSql(where, ' AND ');
    const parts = mem.map((t) => sql`SELECT seq FROM ${ident(t.name)} WHERE ${test}`);
    const rows = await this.#db.all(sql`SELECT seq FROM (${joinSql(parts, ' UNION ALL ')}) WHERE seq NOT IN ${this.deadSeqs}`);
    return rows.map((r) => Number(r['seq']));
  }

  /** Names of the metrics that records of a scope carry (from the manifest and the memory tables' notes). */
  metricNames(scope: Scope): Set<string> {
    const byId = new Map(Object.entries(this.#manifest.metric_ids).map(([n, i]) => [i, n]));
    const names = new Set<string>();
    for (const g of this.segmentsFor(scope)) for (const i of g.metrics) names.add(byId.get(i)!);
    for (const t of this.#mem) {
      for (const part of t.partitions.values()) {
        if (
          part.projectId === scope.projectId &&
          (scope.runId === undefined || part.runId === scope.runId) &&
          scope.kinds.includes(part.kind)
        ) {
          for (const n of part.metrics) names.add(n);
        }
      }
    }
    return names;
  }

  /** The scope's created_at profile, for choosing a page's time window (time-profile.ts). */
  timeProfile(scope: Scope, text: readonly TextRequirement[] = []): TimeProfile {
    return timeProfile(this.#dir, this.#memFor(scope), this.segmentsFor(scope), scope, text);
  }

  /** Live rows with these ids in a run (any kind), timestamps as epoch µs. */
  async lookup(projectId: string, runId: string, ids: readonly string[], maybeInMemory: boolean): Promise<Row[]> {
    if (ids.length === 0) return [];
    const files = new Set<string>();
    // A few ids (a read by id) leave the store's id filter on disk if it is there; many (a write's
    // parents and retries) are worth reading it for.
    const few = ids.length <= 16;
    for (const id of ids) for (const f of this.#index.candidates(id, `records/${partitionKey(projectId, runId)}`, few)) files.add(f);
    const mem = maybeInMemory ? this.#memFor({ projectId, runId, kinds: ['span', 'trace', 'session'] }) : [];
    if (mem.length === 0 && files.size === 0) return [];
    // Named columns: sealed files also carry shredded metric columns (m<id>), different per file.
    const parts: Sql[] = [];
    if (mem.length > 0) {
      const where = sql`project_id = ${projectId} AND run_id = ${runId} AND ${this.memBound}`;
      for (const t of mem) parts.push(sql`SELECT ${COLS} FROM ${ident(t.name)} WHERE ${where}`);
    }
    if (files.size > 0)
      parts.push(
        sql`SELECT ${COLS} FROM read_parquet(${[...files].map((f) => join(this.#dir, f))}, hive_partitioning = false, union_by_name = true)`,
      );
    const union = joinSql(parts, ' UNION ALL ');
    return this.#db.all(
      sql`${raw(STORED_SELECT)} FROM (SELECT ${this.#star} FROM (${union})
          WHERE id IN (SELECT unnest(${[...ids]}::VARCHAR[])) AND seq NOT IN ${this.deadSeqs})`,
    );
  }
}
