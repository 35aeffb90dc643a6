// A small LSM over Parquet. Rows are appended to the write-ahead log (one JSON line each), loaded by
// DuckDB's JSON reader into an in-memory batch table (`mem`), and sealed into immutable ZSTD Parquet
// segments per (project, run, kind), sorted by created_at then id. Replacing or deleting a sealed row
// marks its sequence number dead; readers skip dead rows until compaction rewrites the segment.
//
// Invariants:
// - every acknowledged row is in the log; `refresh()` makes every logged row visible in `mem`;
// - a row with seq <= manifest.sealed_seq is in a segment named by the manifest (or was deleted);
// - for each id at most one live (not dead) row exists across `mem` and the segments.
import { appendFileSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Connection, Database, Param, Row } from '../db/database.js';
import { StorageError } from '../errors.js';
import { ensureDir, fsyncDir, fsyncFile } from './fs-util.js';
import { DEFAULT_POLICY, pickMerge, type CompactionPolicy } from './compaction.js';
import { idHash, SealedIdIndex } from './id-index.js';
import { EMPTY_MANIFEST, loadManifest, partitionKey, saveManifest, type ManifestState, type SegmentEntry } from './manifest.js';
import { KIND_SQL, kindOf, loadSelectList, RECORD_COLUMNS, STORED_SELECT, tableDdl, wireColumns, type RecordKind } from './record-columns.js';
import { WriteAheadLog, type WalFile } from './wal.js';

export interface RecordStoreOptions {
  /** Rows in the in-memory batch that trigger a seal into Parquet (default 200,000). */
  sealRows?: number;
  /** Write-ahead log file size that triggers a roll and background load (default 8 MiB). */
  walRollBytes?: number;
  /** Rows per Parquet row group (default 65,536): smaller skips more, larger compresses better. */
  rowGroupSize?: number;
  /** Merge small segments in the background after seals (default true). */
  autoCompact?: boolean;
  /** When segments merge (see compaction.ts). */
  compaction?: CompactionPolicy;
  /**
   * ZSTD level of merged segments (default 6). Seals use DuckDB's default (3) to keep ingest fast;
   * merges run in the background and rewrite most data anyway, so they spend more to store less
   * (measured here: level 3 -> 6 is about 5% smaller and twice the CPU).
   */
  compactionLevel?: number;
}

/** A row as written to the log: column name -> JSON value (see record-columns.ts for the wire types). */
export type WireRow = Record<string, unknown> & { seq: number; id: string; type: string; project_id: string; run_id: string };

export interface SourceSql {
  readonly sql: string;
  readonly params: Param[];
  /** Column (in the source's output) holding a requested metric's value. */
  metricColumn(name: string): string;
}

export interface Scope {
  projectId: string;
  /** Omit to address every run of the project. */
  runId?: string;
  kinds: readonly RecordKind[];
}

/** What the engine needs to know about a recent record without asking DuckDB (links, for logging spans). */
export interface MemEntry {
  readonly seq: number;
  readonly project_id: string;
  readonly type: string;
  readonly trace_id: string | null;
  readonly session_id: string | null;
  readonly has_children: boolean;
}

const memKey = (runId: string, id: string) => `${runId}/${id}`;

function entryOf(r: Record<string, unknown>): MemEntry {
  return {
    seq: Number(r['seq']),
    project_id: String(r['project_id']),
    type: String(r['type']),
    trace_id: (r['trace_id'] as string | null | undefined) ?? null,
    session_id: (r['session_id'] as string | null | undefined) ?? null,
    has_children: r['has_children'] === true,
  };
}

/** Serialises async critical sections (JS is single-threaded, but awaits interleave). */
class Mutex {
  #tail: Promise<void> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(fn);
    this.#tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}

export class RecordStore {
  readonly #dir: string;
  readonly #db: Database;
  readonly #wal: WriteAheadLog;
  readonly #options: Required<RecordStoreOptions>;
  #manifest: ManifestState;
  readonly #index = new SealedIdIndex();
  /** Every record logged since the last seal (loaded into `mem` or still only in the log), by run and id. */
  readonly #memIds = new Map<string, MemEntry>();
  readonly #dead = new Set<number>();
  #deadPending: number[] = [];
  /** While a seal runs: the highest seq it takes. Bumped generation when it finishes. */
  #sealingThrough = 0;
  /** Next segment number (reserved in memory at once; persisted with the next manifest). */
  #nextSegment = 1;
  #compacting: Promise<number> | null = null;
  /** Files of merged segments, deleted once no query planned before the merge can still read them. */
  readonly #retired: string[] = [];
  /** Rows logged for an id already in memory; when any are pending, a load keeps only the newest. */
  #repeatsAppended = 0;
  #repeatsLoaded = 0;
  #sealGeneration = 0;
  #nextSeq: number;
  #memRows = 0;
  /** Rows logged since the last load into `mem` began (they are only in the log). */
  #rowsSinceLoad = 0;
  #lastLoadedWal = 0;
  readonly #lock = new Mutex();
  #sealing: Promise<void> | null = null;
  #background: Promise<void> = Promise.resolve();
  #closed = false;

  private constructor(dir: string, db: Database, wal: WriteAheadLog, manifest: ManifestState, options: Required<RecordStoreOptions>) {
    this.#dir = dir;
    this.#db = db;
    this.#wal = wal;
    this.#manifest = manifest;
    this.#options = options;
    this.#nextSeq = manifest.sealed_seq + 1;
    this.#nextSegment = manifest.next_segment;
  }

  static async open(dir: string, db: Database, options: RecordStoreOptions = {}): Promise<RecordStore> {
    ensureDir(join(dir, 'records'));
    const manifest = loadManifest(dir);
    const opts: Required<RecordStoreOptions> = {
      sealRows: options.sealRows ?? 200_000,
      walRollBytes: options.walRollBytes ?? 8 << 20,
      rowGroupSize: options.rowGroupSize ?? 65_536,
      autoCompact: options.autoCompact ?? true,
      compaction: options.compaction ?? DEFAULT_POLICY,
      compactionLevel: options.compactionLevel ?? 6,
    };
    const { wal, replay } = WriteAheadLog.open(join(dir, 'wal'), opts.walRollBytes);
    const store = new RecordStore(dir, db, wal, manifest, opts);
    removeUnlisted(dir, manifest);
    for (const seq of manifest.dead) {
      store.#dead.add(seq);
      // Dead rows may be the newest: their numbers stay taken (a row given one would be dead on arrival).
      if (seq >= store.#nextSeq) store.#nextSeq = seq + 1;
    }
    for (const seg of manifest.segments) store.#index.add({ key: seg.file, partition: seg.file, hashes: readHashes(dir, seg) });
    await db.run(tableDdl('mem'));
    await db.run('CREATE TABLE IF NOT EXISTS dead (seq BIGINT)');
    await store.#syncDeadTable();
    await store.#replay(replay);
    return store;
  }

  // ---------------------------------------------------------------- writing

  /** Reserves `n` consecutive sequence numbers; returns the first. */
  allocateSeq(n: number): number {
    const first = this.#nextSeq;
    this.#nextSeq += n;
    return first;
  }

  /**
   * Logs rows (their seq is assigned here), replacing older versions of the same ids: versions still in memory
   * are replaced when the new rows load, sealed versions are marked dead. Resolves once the rows are
   * in the log (and on disk, if `sync`); they are visible to the next `refresh()`.
   */
  async append(rows: readonly WireRow[], sync: boolean): Promise<void> {
    this.#assertOpen();
    if (rows.length === 0) return;
    for (;;) {
      // A seal that completes while we look up sealed versions moves ids out of #memIds: look again.
      const generation = this.#sealGeneration;
      const sealed = await this.#sealedVersions(rows.filter((r) => !this.#memIds.has(memKey(r.run_id, r.id))));
      if (generation !== this.#sealGeneration) continue;
      const dead = sealed;
      let repeats = 0;
      for (const r of rows) {
        const prev = this.#memIds.get(memKey(r.run_id, r.id))?.seq;
        // Rows being sealed right now land in a segment: their old version must die there too.
        if (prev !== undefined && prev <= this.#sealingThrough) dead.push(prev);
        else if (prev !== undefined) repeats++;
      }
      // Sequence numbers are taken here, in the same synchronous step as the write, so rows reach the
      // log in seq order: the loader skips rows at or below the sealed seq, and a seal that ran while
      // this request looked up its ids must not have sealed past numbers taken before it.
      const first = this.allocateSeq(rows.length);
      let text = '';
      for (let i = 0; i < rows.length; i++) {
        (rows[i] as { seq: number }).seq = first + i;
        text += `${JSON.stringify(rows[i])}\n`;
      }
      text = withoutLoneSurrogates(text);
      // Throws (nothing written, nothing changed) when the log cannot take the rows, e.g. a full disk.
      const done = this.#wal.append(text, first + rows.length - 1, sync);
      // Only now that the new versions are in the log do the old ones die.
      this.#markDead(dead);
      this.#repeatsAppended += repeats;
      for (const r of rows) this.#memIds.set(memKey(r.run_id, r.id), entryOf(r));
      this.#rowsSinceLoad += rows.length;
      if (this.#wal.openBytes >= this.#options.walRollBytes) this.#scheduleLoad();
      await done;
      // Backpressure: a writer faster than loading and sealing waits rather than filling memory.
      while (this.#memRows + this.#rowsSinceLoad > 2 * this.#options.sealRows && !this.#closed) {
        this.#scheduleLoad();
        await this.#background;
      }
      return;
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
    const found = await this.#db.all(`SELECT seq FROM read_parquet($1, hive_partitioning = false) WHERE id IN (SELECT unnest($2::VARCHAR[]))`, [
      [...files].map((f) => join(this.#dir, f)),
      wanted,
    ]);
    return found.map((r) => Number(r['seq'])).filter((s) => !this.#dead.has(s));
  }

  /** The latest version of a record logged since the last seal, if any (no DuckDB round trip). */
  recent(runId: string, id: string): MemEntry | undefined {
    return this.#memIds.get(memKey(runId, id));
  }

  /** False when the id certainly has no record in the run; true when it may (then `lookup` tells). */
  mayExist(projectId: string, runId: string, id: string): boolean {
    return this.#memIds.has(memKey(runId, id)) || this.#index.candidates(id, `records/${partitionKey(projectId, runId)}`).length > 0;
  }

  // ---------------------------------------------------------------- reading

  /** Makes every logged row visible to queries (read-your-writes). */
  async refresh(): Promise<void> {
    this.#assertOpen();
    await this.#lock.run(() => this.#loadClosed());
  }

  /**
   * The FROM source for a scope: live rows of its segments and of the in-memory batch, as SQL plus the
   * parameters it uses (numbered from `firstParam`). Each metric in `metrics` is also exposed as a
   * DOUBLE column named by `metricColumn(name)` (the shredded column where sealed, a map lookup in memory).
   */
  source(scope: Scope, firstParam = 1, metrics: readonly string[] = []): SourceSql {
    const segments = this.segmentsFor(scope);
    const files = segments.map((s) => join(this.#dir, s.file));
    const params: Param[] = [];
    const p = (v: Param) => {
      params.push(v);
      return `$${firstParam + params.length - 1}`;
    };
    const cols = RECORD_COLUMNS.map((c) => c.name).join(', ');
    const aliases = new Map<string, string>();
    const segCols: string[] = [];
    const memCols: string[] = [];
    metrics.forEach((name, i) => {
      const alias = `mx${i}`;
      aliases.set(name, alias);
      const id = this.#manifest.metric_ids[name];
      const sealed = id !== undefined && segments.some((s) => s.metrics.includes(id));
      segCols.push(sealed ? `m${id} AS ${alias}` : `NULL::DOUBLE AS ${alias}`);
      memCols.push(`metrics[${p(name)}] AS ${alias}`);
    });
    const memWhere = [`project_id = ${p(scope.projectId)}`];
    if (scope.runId !== undefined) memWhere.push(`run_id = ${p(scope.runId)}`);
    memWhere.push(`${KIND_SQL} IN (SELECT unnest(${p([...scope.kinds])}::VARCHAR[]))`);
    const extra = (list: string[]) => (list.length > 0 ? `, ${list.join(', ')}` : '');
    const parts: string[] = [];
    if (files.length > 0) parts.push(`SELECT ${cols}${extra(segCols)} FROM read_parquet(${p(files)}, hive_partitioning = false, union_by_name = true)`);
    parts.push(`SELECT ${cols}${extra(memCols)} FROM mem WHERE ${memWhere.join(' AND ')}`);
    let sql = parts.join(' UNION ALL ');
    if (this.#dead.size > 0) sql = `SELECT * FROM (${sql}) WHERE seq NOT IN (SELECT seq FROM dead)`;
    return {
      sql: `(${sql})`,
      params,
      metricColumn: (name) => {
        const a = aliases.get(name);
        if (!a) throw new Error(`metric ${name} was not requested from the source`);
        return a;
      },
    };
  }

  /** Names of the metrics that records of a scope carry (sealed ones from the manifest; in memory by a scan of `mem`). */
  async metricNames(scope: Scope): Promise<Set<string>> {
    const byId = new Map(Object.entries(this.#manifest.metric_ids).map(([n, i]) => [i, n]));
    const names = new Set<string>();
    for (const g of this.segmentsFor(scope)) for (const i of g.metrics) names.add(byId.get(i)!);
    const params: Param[] = [scope.projectId, [...scope.kinds]];
    let where = `project_id = $1 AND ${KIND_SQL} IN (SELECT unnest($2::VARCHAR[]))`;
    if (scope.runId !== undefined) {
      params.push(scope.runId);
      where += ' AND run_id = $3';
    }
    for (const r of await this.#db.all(`SELECT DISTINCT unnest(map_keys(metrics)) AS k FROM mem WHERE ${where}`, params)) names.add(String(r['k']));
    return names;
  }

  /** Row groups (and in-memory rows) of a scope, for choosing a created_at window. */
  timeProfile(scope: Scope): { rowGroups: (readonly [number, number, number])[]; memRows: number } {
    return { rowGroups: this.segmentsFor(scope).flatMap((s) => s.row_groups), memRows: this.#memRows };
  }

  /** Live rows with these ids in a run (any kind), timestamps as epoch µs. Sees every logged row. */
  async lookup(projectId: string, runId: string, ids: readonly string[]): Promise<Row[]> {
    if (ids.length === 0) return [];
    const files = new Set<string>();
    for (const id of ids) for (const f of this.#index.candidates(id, `records/${partitionKey(projectId, runId)}`)) files.add(f);
    const inMem = ids.some((id) => this.#memIds.has(memKey(runId, id)));
    if (!inMem && files.size === 0) return [];
    if (inMem) await this.refresh();
    const params: Param[] = [projectId, runId, [...ids]];
    // Named columns: sealed files also carry shredded metric columns (m<id>), different per file.
    const cols = RECORD_COLUMNS.map((c) => c.name).join(', ');
    const parts = [`SELECT ${cols} FROM mem WHERE project_id = $1 AND run_id = $2`];
    if (files.size > 0) {
      params.push([...files].map((f) => join(this.#dir, f)));
      parts.push(`SELECT ${cols} FROM read_parquet($4, hive_partitioning = false, union_by_name = true)`);
    }
    const dead = this.#dead.size > 0 ? ' AND seq NOT IN (SELECT seq FROM dead)' : '';
    return this.#db.all(`${STORED_SELECT} FROM (${parts.join(' UNION ALL ')}) WHERE id IN (SELECT unnest($3::VARCHAR[]))${dead}`, params);
  }

  segmentsFor(scope: Scope): SegmentEntry[] {
    return this.#manifest.segments.filter(
      (s) => s.project_id === scope.projectId && (scope.runId === undefined || s.run_id === scope.runId) && scope.kinds.includes(s.kind),
    );
  }

  get stats(): { segments: number; sealedRows: number; memRows: number; dead: number; diskBytes: number } {
    let sealedRows = 0;
    let diskBytes = 0;
    for (const s of this.#manifest.segments) {
      sealedRows += s.rows;
      diskBytes += s.bytes;
    }
    return { segments: this.#manifest.segments.length, sealedRows, memRows: this.#memRows, dead: this.#dead.size, diskBytes };
  }

  // ---------------------------------------------------------------- sealing

  /** Seals the in-memory batch into Parquet segments (also runs by itself past `sealRows`). */
  async seal(): Promise<void> {
    this.#assertOpen();
    // A seal already running took only what was loaded when it began: wait for it, then seal the rest.
    if (this.#sealing) await this.#sealing;
    await this.#seal();
  }

  #seal(): Promise<void> {
    this.#sealing ??= this.#lock
      .run(async () => {
        await this.#loadClosed();
        if (this.#memRows === 0) return;
        await this.#sealLoaded();
      })
      .finally(() => {
        this.#sealing = null;
      });
    return this.#sealing;
  }

  async #sealLoaded(): Promise<void> {
    const sealedThrough = this.#nextSeqLoaded - 1;
    this.#sealingThrough = sealedThrough;
    try {
      await this.#sealThrough(sealedThrough);
    } finally {
      this.#sealingThrough = 0;
    }
  }

  async #sealThrough(sealedThrough: number): Promise<void> {
    const groups = await this.#db.all(
      `SELECT project_id, run_id, ${KIND_SQL} AS kind, count(*) AS n, min(seq) AS min_seq, max(seq) AS max_seq,
              epoch_us(min(created_at)) AS min_c, epoch_us(max(created_at)) AS max_c
       FROM mem WHERE seq <= $1 GROUP BY ALL ORDER BY ALL`,
      [sealedThrough],
    );
    const hashesByPartition = this.#memHashes(sealedThrough);
    const metricIds: Record<string, number> = { ...this.#manifest.metric_ids };
    let nextMetric = Object.keys(metricIds).length;
    const added: SegmentEntry[] = [];
    const hashes = new Map<string, Float64Array>();
    try {
      for (const g of groups) {
        const projectId = String(g['project_id']);
        const runId = String(g['run_id']);
        const kind = String(g['kind']) as RecordKind;
        const part = partitionKey(projectId, runId, kind);
        const rel = this.#segmentPath(part);
        const abs = join(this.#dir, rel);
        ensureDir(join(abs, '..'));
        const where = `seq <= $1 AND project_id = $2 AND run_id = $3 AND ${KIND_SQL} = $4`;
        const groupParams = [sealedThrough, projectId, runId, kind];
        const names = (await this.#db.all(`SELECT DISTINCT unnest(map_keys(metrics)) AS k FROM mem WHERE ${where} ORDER BY 1`, groupParams)).map((r) => String(r['k']));
        for (const n of names) if (metricIds[n] === undefined) metricIds[n] = nextMetric++;
        const shredded = names.map((n, i) => `metrics[$${5 + i}] AS m${metricIds[n]}`);
        // COPY takes no parameter for its file: the path is a quoted literal. Below the data folder it is
        // ours (catalog ids and a counter); the folder itself is the operator's and may hold quotes.
        await this.#db.run(
          `COPY (SELECT *${shredded.length ? `, ${shredded.join(', ')}` : ''} FROM mem WHERE ${where} ORDER BY created_at, id)
           TO ${sqlString(abs)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${this.#options.rowGroupSize})`,
          [...groupParams, ...names],
        );
        fsyncFile(abs);
        const groupsMeta = await this.#db.all(
          `SELECT epoch_us(stats_min::TIMESTAMP) AS lo, epoch_us(stats_max::TIMESTAMP) AS hi, row_group_num_rows AS n
           FROM parquet_metadata($1) WHERE path_in_schema = 'created_at' ORDER BY row_group_id`,
          [abs],
        );
        const h = (hashesByPartition.get(part) ?? new Float64Array(0)).sort();
        writeFileSync(abs.replace(/\.parquet$/, '.ids'), h);
        fsyncFile(abs.replace(/\.parquet$/, '.ids'));
        hashes.set(rel, h);
        added.push({
          file: rel,
          project_id: projectId,
          run_id: runId,
          kind,
          rows: Number(g['n']),
          bytes: statSync(abs).size,
          min_seq: Number(g['min_seq']),
          max_seq: Number(g['max_seq']),
          min_created_us: Number(g['min_c']),
          max_created_us: Number(g['max_c']),
          metrics: names.map((n) => metricIds[n]!),
          row_groups: groupsMeta.map((m) => [Number(m['lo']), Number(m['hi']), Number(m['n'])] as const),
        });
      }
      for (const seg of added) fsyncDir(join(this.#dir, seg.file, '..'));
    } catch (err) {
      for (const seg of added) removeSegmentFiles(this.#dir, seg.file);
      throw new StorageError('sealing the in-memory batch failed', { cause: err });
    }
    // Dead seqs of rows that never reached a segment (deleted while in memory) are no longer needed.
    const prevSealed = this.#manifest.sealed_seq;
    // Dead seqs the new files actually hold stay dead; other seqs of this seal (rows deleted while in
    // memory, never written) are no longer needed. Ranges cannot tell, the files can.
    await this.#flushDead();
    const inNew = new Set(
      added.length === 0 || this.#dead.size === 0
        ? []
        : (await this.#db.all('SELECT seq FROM read_parquet($1, hive_partitioning = false) WHERE seq IN (SELECT seq FROM dead)', [added.map((a) => join(this.#dir, a.file))])).map((r) => Number(r['seq'])),
    );
    const keptDead = [...this.#dead].filter((q) => q <= prevSealed || q > sealedThrough || inNew.has(q));
    const state: ManifestState = {
      ...this.#manifest,
      generation: this.#manifest.generation + 1,
      sealed_seq: sealedThrough,
      next_segment: this.#nextSegment,
      segments: [...this.#manifest.segments, ...added],
      dead: keptDead,
      metric_ids: metricIds,
    };
    saveManifest(this.#dir, state);
    this.#manifest = state;
    for (const seg of added) this.#index.add({ key: seg.file, partition: seg.file, hashes: hashes.get(seg.file)! });
    const keep = new Set(keptDead);
    for (const q of this.#dead) if (!keep.has(q) && q <= sealedThrough) this.#dead.delete(q);
    await this.#flushDead();
    await this.#db.run('DELETE FROM dead WHERE seq NOT IN (SELECT unnest($1::BIGINT[]))', [[...this.#dead]]);
    await this.#db.run('DELETE FROM mem WHERE seq <= $1', [sealedThrough]);
    // An in-memory DuckDB table keeps deleted rows' memory until a checkpoint vacuums them: without
    // this, memory grows by every row ever sealed (~1.2 GB per million spans). Readers are unaffected.
    await this.#db.run('CHECKPOINT');
    this.#memRows = Number((await this.#db.all('SELECT count(*) AS n FROM mem'))[0]!['n']);
    for (const [key, e] of this.#memIds) if (e.seq <= sealedThrough) this.#memIds.delete(key);
    this.#sealGeneration += 1;
    this.#wal.dropThrough(this.#lastLoadedWal);
  }

  /** Id hashes of the records being sealed, by partition, from the in-process map (no DuckDB read). */
  #memHashes(sealedThrough: number): Map<string, Float64Array> {
    const lists = new Map<string, number[]>();
    for (const [key, e] of this.#memIds) {
      if (e.seq > sealedThrough) continue;
      const part = partitionKey(e.project_id, key.slice(0, key.indexOf('/')), kindOf(e.type));
      let l = lists.get(part);
      if (!l) lists.set(part, (l = []));
      l.push(idHash(key.slice(key.indexOf('/') + 1)));
    }
    return new Map([...lists].map(([k, v]) => [k, Float64Array.from(v)]));
  }

  #segmentPath(partition: string): string {
    return join('records', partition, `seg-${String(this.#nextSegment++).padStart(9, '0')}.parquet`);
  }

  /** Row-group time stats of a written file, for time windows. */
  async #rowGroups(abs: string): Promise<[number, number, number][]> {
    const meta = await this.#db.all(
      `SELECT epoch_us(stats_min::TIMESTAMP) AS lo, epoch_us(stats_max::TIMESTAMP) AS hi, row_group_num_rows AS n
       FROM parquet_metadata($1) WHERE path_in_schema = 'created_at' ORDER BY row_group_id`,
      [abs],
    );
    return meta.map((m) => [Number(m['lo']), Number(m['hi']), Number(m['n'])]);
  }

  // ---------------------------------------------------------------- compaction

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

  /**
   * Dead rows per segment file, counted exactly (segments of one seal share a seq range, so ranges
   * cannot tell which file holds a dead seq).
   */
  async #deadCounts(): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (this.#dead.size === 0 || this.#manifest.segments.length === 0) return out;
    const byPath = new Map(this.#manifest.segments.map((g) => [join(this.#dir, g.file), g.file]));
    const rows = await this.#db.all(
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

  /** Rewrites `group` (one partition) as one sorted segment without its dead rows, then swaps the manifest. */
  async #merge(group: readonly SegmentEntry[]): Promise<void> {
    const first = group[0]!;
    const inputs = group.map((g) => join(this.#dir, g.file));
    // Exactly the dead rows these files hold (other files' dead seqs may fall in the same ranges).
    const deadSnapshot =
      this.#dead.size === 0
        ? []
        : (await this.#db.all('SELECT seq FROM read_parquet($1, hive_partitioning = false) WHERE seq IN (SELECT seq FROM dead)', [inputs])).map((r) => Number(r['seq']));
    const rel = this.#segmentPath(partitionKey(first.project_id, first.run_id, first.kind));
    const abs = join(this.#dir, rel);
    let entry: SegmentEntry;
    let hashes: Float64Array;
    try {
      await this.#db.run(
        `COPY (SELECT * FROM read_parquet($1, hive_partitioning = false, union_by_name = true)
               WHERE seq NOT IN (SELECT unnest($2::BIGINT[])) ORDER BY created_at, id)
         TO ${sqlString(abs)} (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL ${this.#options.compactionLevel}, ROW_GROUP_SIZE ${this.#options.rowGroupSize})`,
        [inputs, deadSnapshot],
      );
      fsyncFile(abs);
      const meta = (
        await this.#db.all(
          `SELECT count(*) AS n, min(seq) AS min_seq, max(seq) AS max_seq, epoch_us(min(created_at)) AS min_c, epoch_us(max(created_at)) AS max_c FROM read_parquet($1, hive_partitioning = false)`,
          [abs],
        )
      )[0]!;
      const ids = await this.#db.all('SELECT id FROM read_parquet($1, hive_partitioning = false)', [abs]);
      hashes = Float64Array.from(ids.map((r) => idHash(String(r['id'])))).sort();
      writeFileSync(abs.replace(/\.parquet$/, '.ids'), hashes);
      fsyncFile(abs.replace(/\.parquet$/, '.ids'));
      fsyncDir(join(abs, '..'));
      const rows = Number(meta['n']);
      entry = {
        file: rel,
        project_id: first.project_id,
        run_id: first.run_id,
        kind: first.kind,
        rows,
        bytes: statSync(abs).size,
        min_seq: rows ? Number(meta['min_seq']) : first.min_seq,
        max_seq: rows ? Number(meta['max_seq']) : first.max_seq,
        min_created_us: rows ? Number(meta['min_c']) : first.min_created_us,
        max_created_us: rows ? Number(meta['max_c']) : first.max_created_us,
        metrics: [...new Set(group.flatMap((g) => g.metrics))].sort((a, b) => a - b),
        row_groups: rows ? await this.#rowGroups(abs) : [],
      };
    } catch (err) {
      removeSegmentFiles(this.#dir, rel);
      throw new StorageError('compaction failed', { cause: err });
    }
    await this.#lock.run(async () => {
      const live = new Set(this.#manifest.segments.map((g) => g.file));
      if (!group.every((g) => live.has(g.file))) {
        // The partition was dropped (or merged) meanwhile: this output is stale.
        removeSegmentFiles(this.#dir, rel);
        return;
      }
      const gone = new Set(group.map((g) => g.file));
      for (const q of deadSnapshot) this.#dead.delete(q);
      const segments = this.#manifest.segments.filter((g) => !gone.has(g.file));
      if (entry.rows > 0) segments.push(entry);
      else removeSegmentFiles(this.#dir, rel);
      const state: ManifestState = { ...this.#manifest, generation: this.#manifest.generation + 1, next_segment: this.#nextSegment, segments, dead: [...this.#dead] };
      saveManifest(this.#dir, state);
      this.#manifest = state;
      for (const f of gone) this.#index.remove(f);
      if (entry.rows > 0) this.#index.add({ key: entry.file, partition: entry.file, hashes });
      await this.#db.run('DELETE FROM dead WHERE seq IN (SELECT unnest($1::BIGINT[]))', [deadSnapshot]);
      this.#retire([...gone]);
    });
  }

  /** Deletes merged inputs once the statements that may have been planned over them have finished. */
  #retire(files: string[]): void {
    this.#retired.push(...files);
    this.#db.afterStatementsInFlight(() => this.#deleteRetired(files));
  }

  #deleteRetired(files: readonly string[]): void {
    for (const f of files) {
      const i = this.#retired.indexOf(f);
      if (i >= 0) this.#retired.splice(i, 1);
      removeSegmentFiles(this.#dir, f);
    }
  }

  // ---------------------------------------------------------------- loading the log into memory

  #nextSeqLoaded = 1;

  #scheduleLoad(): void {
    this.#background = this.#background
      .then(() => this.#lock.run(() => this.#loadClosed()))
      .then(() => (this.#memRows >= this.#options.sealRows ? this.#seal() : undefined))
      .then(async () => {
        if (this.#options.autoCompact && !this.#closed) await this.compact();
      })
      .catch((err: unknown) => {
        // A failed background load is retried by the next refresh; the rows stay in the log.
        process.emitWarning(`tracelake: background load failed: ${(err as Error).message}`);
      });
  }

  /** Loads every closed log file into `mem`, replacing older versions of the same ids. Holds #lock. */
  async #loadClosed(): Promise<void> {
    await this.#flushDead();
    const repeats = this.#repeatsAppended;
    this.#rowsSinceLoad = 0;
    const files = this.#wal.roll();
    if (files.length === 0) return;
    await this.#loadSafely(files, repeats !== this.#repeatsLoaded);
    this.#repeatsLoaded = repeats;
  }

  async #loadFiles(files: readonly WalFile[], dedupe: boolean): Promise<void> {
    const columns = wireColumns()
      .map(([k, t]) => `${k}: '${t}'`)
      .join(', ');
    const paths = files.map((f) => f.path);
    const read = `SELECT ${loadSelectList()} FROM read_json($1, format = 'newline_delimited', columns = {${columns}})
      WHERE seq IS NOT NULL AND seq > $2${this.#dead.size > 0 ? ' AND seq NOT IN (SELECT seq FROM dead)' : ''}`;
    await this.#db.withConnection(async (c: Connection) => {
      if (dedupe) {
        // Some ids were logged again (retries, updates): keep only the newest version of each. Ids are
        // unique per run, not per store: other runs (and projects) may hold the same id.
        await c.run(`CREATE OR REPLACE TEMP TABLE staged AS ${read} QUALIFY row_number() OVER (PARTITION BY run_id, id ORDER BY seq DESC) = 1`, [
          paths,
          this.#manifest.sealed_seq,
        ]);
        await c.run('DELETE FROM mem WHERE (run_id, id) IN (SELECT run_id, id FROM staged)');
        await c.run('INSERT INTO mem SELECT * FROM staged');
        await c.run('DROP TABLE staged');
      } else {
        await c.run(`INSERT INTO mem ${read}`, [paths, this.#manifest.sealed_seq]);
      }
      const n = await c.all('SELECT count(*) AS n, max(seq) AS m FROM mem');
      this.#memRows = Number(n[0]!['n']);
      const maxSeq = n[0]!['m'] === null ? 0 : Number(n[0]!['m']);
      this.#nextSeqLoaded = Math.max(this.#nextSeqLoaded, maxSeq + 1);
    });
    this.#lastLoadedWal = Math.max(this.#lastLoadedWal, ...files.map((f) => f.number));
  }

  /**
   * Loads log files; if DuckDB refuses them (a row ingest validation let through), loads file by file
   * and then request by request, so one bad request cannot keep the others out. Refused requests are
   * kept in wal/rejected.ndjson and reported; they are never silently dropped.
   */
  async #loadSafely(files: readonly WalFile[], dedupe: boolean): Promise<void> {
    try {
      await this.#loadFiles(files, dedupe);
      return;
    } catch (err) {
      if (files.length > 1) {
        for (const f of files) await this.#loadSafely([f], true);
        return;
      }
      process.emitWarning(`tracelake: log file ${files[0]!.path} did not load (${(err as Error).message}); loading it request by request`);
    }
    const file = files[0]!;
    const lines = readFileSync(file.path, 'utf8').split('\n');
    const tmp = `${file.path}.part`;
    let chunk: string[] = [];
    for (const line of lines) {
      if (line === '') continue;
      chunk.push(line);
      if (!line.startsWith('{"commit":')) continue;
      writeFileSync(tmp, `${chunk.join('\n')}\n`);
      try {
        await this.#loadFiles([{ number: file.number, path: tmp }], true);
      } catch (err) {
        appendFileSync(join(this.#dir, 'wal', 'rejected.ndjson'), `${chunk.join('\n')}\n`);
        process.emitWarning(`tracelake: a logged request was refused by the database and kept in wal/rejected.ndjson: ${(err as Error).message}`);
      }
      chunk = [];
    }
    rmSync(tmp, { force: true });
  }

  /** Replays the log after a restart: reload rows, then re-derive which sealed rows they replaced. */
  async #replay(files: readonly WalFile[]): Promise<void> {
    if (files.length === 0) return;
    await this.#loadSafely(files, true);
    const rows = await this.#db.all('SELECT id, seq, project_id, run_id, type, trace_id, session_id, has_children FROM mem');
    let maxSeq = this.#manifest.sealed_seq;
    const byRun = new Map<string, { projectId: string; runId: string; ids: string[] }>();
    for (const r of rows) {
      const id = String(r['id']);
      const seq = Number(r['seq']);
      this.#memIds.set(memKey(String(r['run_id']), id), entryOf(r));
      maxSeq = Math.max(maxSeq, seq);
      const key = `${String(r['project_id'])}/${String(r['run_id'])}`;
      let g = byRun.get(key);
      if (!g) byRun.set(key, (g = { projectId: String(r['project_id']), runId: String(r['run_id']), ids: [] }));
      g.ids.push(id);
    }
    this.#nextSeq = Math.max(this.#nextSeq, maxSeq + 1);
    for (const g of byRun.values()) {
      const probe = g.ids.map((id) => ({ id, seq: 0, type: '', project_id: g.projectId, run_id: g.runId }));
      this.#markDead(await this.#sealedVersions(probe));
    }
    await this.#flushDead();
  }

  // ---------------------------------------------------------------- dead rows

  /** Marks seqs dead at once for this process; the DuckDB mirror catches up in `#flushDead` (before any load). */
  #markDead(seqs: readonly number[]): void {
    for (const seq of seqs) {
      if (this.#dead.has(seq)) continue;
      this.#dead.add(seq);
      this.#deadPending.push(seq);
    }
  }

  async #flushDead(): Promise<void> {
    if (this.#deadPending.length === 0) return;
    const batch = this.#deadPending;
    this.#deadPending = [];
    await this.#db.run('INSERT INTO dead SELECT unnest($1::BIGINT[])', [batch]);
  }

  async #syncDeadTable(): Promise<void> {
    this.#deadPending = [];
    await this.#db.run('DELETE FROM dead');
    if (this.#dead.size > 0) await this.#db.run('INSERT INTO dead SELECT unnest($1::BIGINT[])', [[...this.#dead]]);
  }

  /** Deletes rows by seq, durably. Used by delete-by-filter (the caller computes the seqs under `refresh`). */
  async deleteSeqs(seqs: readonly number[]): Promise<void> {
    this.#assertOpen();
    await this.#lock.run(async () => {
      this.#markDead(seqs);
      await this.#flushDead();
      this.#manifest = { ...this.#manifest, generation: this.#manifest.generation + 1, dead: [...this.#dead] };
      saveManifest(this.#dir, this.#manifest);
      await this.#db.run('DELETE FROM mem WHERE seq IN (SELECT unnest($1::BIGINT[]))', [[...seqs]]);
      const n = await this.#db.all('SELECT count(*) AS n FROM mem');
      this.#memRows = Number(n[0]!['n']);
    });
    // A large delete can leave segments mostly dead: rewriting them gives the space back.
    if (this.#options.autoCompact) {
      this.#background = this.#background
        .then(async () => {
          if (!this.#closed) await this.compact();
        })
        .catch((err: unknown) => process.emitWarning(`tracelake: background compaction failed: ${(err as Error).message}`));
    }
  }

  /** Live records of a project or run, every kind. */
  async countScope(projectId: string, runId?: string): Promise<number> {
    await this.refresh();
    const live = this.source({ projectId, ...(runId === undefined ? {} : { runId }), kinds: ['span', 'trace', 'session'] });
    return Number((await this.#db.all(`SELECT count(*) AS n FROM ${live.sql}`, live.params))[0]!['n']);
  }

  /**
   * Removes every record of a project (or of one run of it), durably: their segments leave the manifest
   * and the disk, rows still in memory are deleted and their seqs kept dead until sealed past.
   * Returns how many records went.
   */
  async dropScope(projectId: string, runId?: string): Promise<number> {
    this.#assertOpen();
    return this.#lock.run(async () => {
      await this.#loadClosed();
      const live = this.source({ projectId, ...(runId === undefined ? {} : { runId }), kinds: ['span', 'trace', 'session'] });
      const removed = Number((await this.#db.all(`SELECT count(*) AS n FROM ${live.sql}`, live.params))[0]!['n']);
      const where = runId === undefined ? 'project_id = $1' : 'project_id = $1 AND run_id = $2';
      const params = runId === undefined ? [projectId] : [projectId, runId];
      const memRows = await this.#db.all(`SELECT seq FROM mem WHERE ${where}`, params);
      const seqs = memRows.map((r) => Number(r['seq']));
      this.#markDead(seqs);
      await this.#flushDead();
      const gone = this.#manifest.segments.filter((g) => g.project_id === projectId && (runId === undefined || g.run_id === runId));
      const goneFiles = new Set(gone.map((g) => g.file));
      // Forget exactly the dead seqs the removed files hold (other runs' segments share seq ranges).
      const goneDead =
        gone.length === 0 || this.#dead.size === 0
          ? []
          : await this.#db.all('SELECT seq FROM read_parquet($1, hive_partitioning = false) WHERE seq IN (SELECT seq FROM dead)', [gone.map((g) => join(this.#dir, g.file))]);
      for (const r of goneDead) this.#dead.delete(Number(r['seq']));
      this.#manifest = {
        ...this.#manifest,
        generation: this.#manifest.generation + 1,
        segments: this.#manifest.segments.filter((g) => !goneFiles.has(g.file)),
        dead: [...this.#dead],
      };
      saveManifest(this.#dir, this.#manifest);
      await this.#db.run(`DELETE FROM mem WHERE ${where}`, params);
      await this.#db.run('CHECKPOINT');
      this.#memRows = Number((await this.#db.all('SELECT count(*) AS n FROM mem'))[0]!['n']);
      for (const [key, e] of this.#memIds) if (e.project_id === projectId && (runId === undefined || key.startsWith(`${runId}/`))) this.#memIds.delete(key);
      for (const f of goneFiles) this.#index.remove(f);
      this.#retire([...goneFiles]);
      return removed;
    });
  }

  // ---------------------------------------------------------------- lifecycle

  /** Seals what is pending and closes the log. The database is closed by its owner. */
  async close(options: { seal?: boolean } = {}): Promise<void> {
    if (this.#closed) return;
    await this.#background;
    if (this.#compacting) await this.#compacting;
    if (this.#sealing) await this.#sealing;
    if (options.seal !== false) await this.#seal();
    this.#closed = true;
    this.#deleteRetired([...this.#retired]);
    await this.#wal.close();
  }

  #assertOpen(): void {
    if (this.#closed) throw new StorageError('record store is closed');
  }

  /** Raw SQL access for the engine's queries (already scoped with `source`). */
  get db(): Database {
    return this.#db;
  }
}

/**
 * JSON.stringify writes a lone UTF-16 surrogate (valid in a JS string, invalid in UTF-8) as a \\udXXX
 * escape, which DuckDB's JSON reader rejects, and one bad line would keep its whole log file from
 * loading. Such escapes become U+FFFD, as a UTF-8 decoder would do. Escaped backslashes are skipped.
 */
export function withoutLoneSurrogates(text: string): string {
  // JSON.stringify writes such escapes in lower case; indexOf is far cheaper than a regex on a big string.
  if (text.indexOf('\\ud') === -1) return text;
  return text.replace(/(\\\\)|\\u[dD][89a-fA-F][0-9a-fA-F]{2}/g, (m, escapedBackslash: string | undefined) => (escapedBackslash ? m : '\\ufffd'));
}

/** A SQL string literal (DuckDB: quotes doubled, backslashes literal). */
export function sqlString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

function readHashes(dir: string, seg: SegmentEntry): Float64Array {
  const path = join(dir, seg.file.replace(/\.parquet$/, '.ids'));
  const buf = readFileSync(path);
  const out = new Float64Array(buf.byteLength / 8);
  new Uint8Array(out.buffer).set(buf);
  return out;
}

function removeSegmentFiles(dir: string, rel: string): void {
  rmSync(join(dir, rel), { force: true });
  rmSync(join(dir, rel.replace(/\.parquet$/, '.ids')), { force: true });
}

/** Segment files not named by the manifest are leftovers of an interrupted seal or compaction. */
function removeUnlisted(dir: string, manifest: ManifestState): void {
  const live = new Set(manifest.segments.flatMap((s) => [s.file, s.file.replace(/\.parquet$/, '.ids')]));
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (!live.has(relative(dir, p))) rmSync(p, { force: true });
    }
  };
  walk(join(dir, 'records'));
}

export type { Row };
export { EMPTY_MANIFEST, RECORD_COLUMNS };
