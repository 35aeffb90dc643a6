// TraceStore: the engine. Opens a data folder (lock, catalog, record store, DuckDB) and offers every
// operation the server has, as typed library methods taking the same request shapes. The catalog
// side (users, keys, projects, runs, scorers) is in store-base.ts; logging in ingest.ts; queries in
// record-queries.ts; export and import in transfer-api.ts; drops, compaction, retention and memory in
// maintenance-api.ts; storage in src/storage.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Catalog } from '../catalog/catalog.js';
import { TokenSigner } from '../catalog/tokens.js';
import { Database } from '../db/database.js';
import type { RecordBatch, Table } from 'apache-arrow';
import { InvalidRequestError, invalidFields } from '../errors.js';
import { columnInfo, type ColumnInfo, type Level } from '../query/columns.js';
import { assertValid } from '../schemas/check.js';
import type { LogSpansRequest, LogTracesRequest } from '../schemas/ingest.js';
import { AvailableColumnsBody, FilterBody, PartialSearchBody, SearchBody, type FilterRequest, type PartialSearchRequest, type SearchRequest } from '../schemas/query.js';
import { removeLeftovers } from '../storage/leftovers.js';
import { FolderLock } from '../storage/lock.js';
import { NOTED_COLUMNS } from '../query/exec/data-facts.js';
import { RecordStore } from '../storage/record-store.js';
import { Ingest, type LogSpansResult, type LogTracesResult, type RunIds } from './ingest.js';
import { metricInfoResolver } from '../catalog/metric-info.js';
import { logOtlpRequest, type OtlpLogOptions, type OtlpLogResult } from './otlp.js';
import { OtlpWriter } from './otlp-log.js';
import { RecordQueries, type RunScope, type SearchResult } from '../query/exec/record-queries.js';
import { recordTree } from './record-tree.js';
import { Exporter, type ExportFileOptions, type ExportSelection } from './export.js';
import { Retention, type RetentionSetting } from './retention.js';
import type { ImportOptions, ImportResult } from './import.js';
import * as maintenance from './maintenance-api.js';
import * as transfer from './transfer-api.js';
import { storeSql, type SqlOptions, type SqlParam } from './sql-sandbox.js';
import { Iceberg } from '../iceberg/publish.js';
import { RUN_ID_FIELDS, StoreBase } from './store-base.js';
import { checkedMemoryLimit, DEFAULT_MEMORY_LIMIT, type TraceStoreOptions } from './store-options.js';

export { DEFAULT_MEMORY_LIMIT, type TraceStoreOptions };
export type { LogSpansResult, LogTracesResult, RunIds };

export class TraceStore extends StoreBase {
  readonly #lock: FolderLock;
  readonly #db: Database;
  readonly #records: RecordStore;
  readonly #queries: RecordQueries;
  readonly #ingest: Ingest;
  readonly #maxSpans: number | undefined;
  readonly #sqlLimits: { threads?: number; memoryLimit: string };
  readonly #exporter: Exporter;
  readonly #retention: Retention;
  #otlp: OtlpWriter | undefined;
  #iceberg: Iceberg | undefined;

  private constructor(dir: string, lock: FolderLock, catalog: Catalog, db: Database, records: RecordStore, tokens: TokenSigner, options: TraceStoreOptions) {
    super(dir, catalog, tokens);
    this.#queries = new RecordQueries(records, db, { metricInfo: metricInfoResolver(catalog), ...(options.pageWindowRows ? { windowRows: options.pageWindowRows } : {}), ...(options.metricTopK === false ? { metricTopK: false } : {}), ...(options.segmentCounts === false ? { segmentCounts: false } : {}), ...(options.tokenCounts === false ? { tokenCounts: false } : {}), ...(options.segmentCountMinRows !== undefined ? { segmentCountMinRows: options.segmentCountMinRows } : {}), ...(options.metricTopKRows ? { topKRows: options.metricTopKRows } : {}), ...(options.planEstimate ? { planEstimate: options.planEstimate } : {}), ...(options.estimateMinGroups !== undefined ? { estimateMinGroups: options.estimateMinGroups } : {}), ...(options.onPlan ? { onPlan: options.onPlan } : {}) });
    this.#ingest = new Ingest(this, records, db, options.maxSpansPerRequest);
    this.#maxSpans = options.maxSpansPerRequest;
    this.#sqlLimits = { ...(options.threads ? { threads: options.threads } : {}), memoryLimit: options.memoryLimit ?? DEFAULT_MEMORY_LIMIT };
    this.#lock = lock;
    this.#db = db;
    this.#records = records;
    this.#exporter = new Exporter(dir, records, db, this.#queries);
    this.#retention = new Retention(catalog);
    records.retention = this.#retention;
  }

  /** Opens (creating if needed) a data folder. Fails with STORE_LOCKED if another process has it open. */
  static async open(dir: string, options: TraceStoreOptions = {}): Promise<TraceStore> {
    const root = resolve(dir);
    const memoryLimit = checkedMemoryLimit(options);
    mkdirSync(root, { recursive: true });
    const lock = await FolderLock.acquire(root);
    let catalog: Catalog | undefined;
    let db: Database | undefined;
    try {
      removeLeftovers(root); // after the lock: nothing it removes can belong to a live store
      catalog = Catalog.open(root);
      mkdirSync(join(root, 'tmp'), { recursive: true });
      db = await Database.open({ threads: options.threads, memoryLimit, tempDirectory: join(root, 'tmp') });
      const records = await RecordStore.open(root, db, { ...options, notedColumns: NOTED_COLUMNS });
      const store = new TraceStore(root, lock, catalog, db, records, TokenSigner.forFolder(root, options.tokenTtlSeconds), options);
      await maintenance.finishPendingDrops(store);
      return store;
    } catch (err) {
      await db?.close();
      catalog?.close();
      lock.release();
      throw err;
    }
  }

  /** Seals pending rows into Parquet and releases the folder. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.#records.close();
    } finally {
      await this.#db.close();
      this.catalog.close();
      this.#lock.release();
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  // ------------------------------------------------------------------ ingest (ingest.ts)

  /**
   * Logs an OTLP trace export: an ExportTraceServiceRequest in its JSON form (an object, or its
   * text), or its protobuf bytes. Spans go to `options.project` / `options.logStream` (names), else to the names
   * in each resource's attributes, else to `default`; both are created when missing. Spans that
   * cannot be stored are refused alone (`rejected_spans`, `error_message`); an undecodable request
   * throws BadRequestError. Decoding and mapping live in src/ingest/otlp, the writing in otlp-log.ts.
   */
  logOtlp(request: unknown, options: OtlpLogOptions = {}): Promise<OtlpLogResult> {
    this.assertOpen();
    this.#otlp ??= new OtlpWriter(this.#ingest.otlpHost());
    return logOtlpRequest(this, this.#otlp, request, options, this.#maxSpans);
  }

  /** Logs whole traces (the body the official client sends to POST /projects/{id}/traces). */
  logTraces(projectId: string, body: LogTracesRequest): Promise<LogTracesResult> {
    this.assertOpen();
    return this.#ingest.logTraces(projectId, body);
  }

  /** Logs spans under `parent_id` in trace `trace_id` (SPEC.md Log spans). Creates the trace if new. */
  logSpans(projectId: string, body: LogSpansRequest): Promise<LogSpansResult> {
    this.assertOpen();
    return this.#ingest.logSpans(projectId, body);
  }

  /** Creates a session explicitly (POST /projects/{id}/sessions); its run then reports user-created sessions. */
  createSession(projectId: string, body: Parameters<Ingest['createSession']>[1]): ReturnType<Ingest['createSession']> {
    this.assertOpen();
    return this.#ingest.createSession(projectId, body);
  }

  /**
   * Updates a logged trace or span (the PATCH routes of streaming clients): the fields given replace the
   * stored ones (`duration_ns` goes to metrics.duration_ns); a new version of the record is written.
   */
  updateRecord(level: 'trace' | 'span', projectId: string, id: string, patch: Parameters<Ingest['updateRecord']>[3]): ReturnType<Ingest['updateRecord']> {
    this.assertOpen();
    return this.#ingest.updateRecord(level, projectId, id, patch);
  }

  /** One record with its descendants nested (a trace's spans, a span's subtree, a session's traces). */
  async getRecord(level: Level, projectId: string, id: string): Promise<Record<string, unknown>> {
    this.assertOpen();
    return recordTree(this, level, projectId, id);
  }

  // ------------------------------------------------------------------ reading, counting, deleting

  /** Project and (optional) run a query addresses: with no run id it spans every run of the project. */
  resolveScope(projectId: string, ids: RunIds): RunScope {
    const project = this.catalog.project(projectId);
    if (RUN_ID_FIELDS.every(([f]) => ids[f] == null)) return { projectId: project.id };
    return { projectId: project.id, runId: this.resolveRun(projectId, ids).run.id };
  }

  /** Full records of one level (spans, traces or sessions), filtered, sorted and paged. */
  async search(level: Level, projectId: string, body: SearchRequest = {}): Promise<SearchResult> {
    this.assertOpen();
    assertValid(SearchBody, body);
    return this.#queries.search(level, this.resolveScope(projectId, body), body, false);
  }

  /** Records with only the selected columns (plus id, type and the links). */
  async partialSearch(level: Level, projectId: string, body: PartialSearchRequest = {}): Promise<SearchResult> {
    this.assertOpen();
    assertValid(PartialSearchBody, body);
    return this.#queries.search(level, this.resolveScope(projectId, body), body, true);
  }

  async count(level: Level, projectId: string, body: FilterRequest = {}): Promise<{ total_count: number }> {
    this.assertOpen();
    assertValid(FilterBody, body);
    return { total_count: await this.#queries.count(level, this.resolveScope(projectId, body), body) };
  }

  /**
   * Deletes matching records with all their descendants, durably. Refuses (422) a request with neither
   * a run id nor a filter, rather than wiping a project. A parent left without children keeps existing
   * with has_children false (a trace whose spans all went stays, as an empty trace): an override logged
   * with the delete, not a new version of the parent (see record-queries.ts).
   */
  async delete(level: Level, projectId: string, body: FilterRequest = {}): Promise<{ message: string; deleted: number }> {
    this.assertOpen();
    assertValid(FilterBody, body);
    const scope = this.resolveScope(projectId, body);
    const hasFilter = (body.filters?.length ?? 0) > 0 || (body.filter_tree !== undefined && body.filter_tree !== null);
    if (scope.runId === undefined && !hasFilter) {
      throw invalidFields(['body'], [...RUN_ID_FIELDS.map(([f]) => f), 'filters'], 'refusing to delete every record of the project: give a run id (log_stream_id, experiment_id or metrics_testing_id) or a filter', 'missing');
    }
    const { deleted } = await this.#queries.delete(level, scope, body);
    return { message: `Deleted ${deleted} record${deleted === 1 ? '' : 's'}`, deleted };
  }

  /** Columns of a run at a level: the standard columns and the metric columns its records carry. */
  async availableColumns(level: Level, projectId: string, body: RunIds = {}): Promise<{ columns: ColumnInfo[] }> {
    this.assertOpen();
    assertValid(AvailableColumnsBody, body);
    const scope = this.resolveScope(projectId, body);
    // Scorers enabled in the run have a column even before any record carries their metric (is_empty).
    const enabled = scope.runId === undefined ? [] : this.catalog.enabledScorers(scope.runId).map((s) => s.metric_name || s.name);
    return { columns: (await this.#queries.availableColumns(level, scope, enabled)).map(columnInfo) };
  }

  searchSpans(projectId: string, body: SearchRequest = {}): Promise<SearchResult> {
    return this.search('span', projectId, body);
  }

  countSpans(projectId: string, body: FilterRequest = {}): Promise<{ total_count: number }> {
    return this.count('span', projectId, body);
  }

  deleteSpans(projectId: string, body: FilterRequest = {}): Promise<{ message: string; deleted: number }> {
    return this.delete('span', projectId, body);
  }

  /** Live records of a project or run, every kind (what deleting it removes). */
  async countAllRecords(projectId: string, runId?: string): Promise<number> {
    this.assertOpen();
    return this.#records.countScope(projectId, runId);
  }

  /**
   * Deletes a project (runId null) or run in steps that survive a crash at any point: an intent is
   * recorded, the catalog entry removed, the records dropped, the intent cleared. An intent found on
   * open is finished there (the deletion was not acknowledged, so finishing it is allowed).
   */
  async finishingDrop(projectId: string, runId: string | null, removeFromCatalog: () => void): Promise<void> {
    this.assertOpen();
    return maintenance.finishingDrop(this, this.#records, projectId, runId, removeFromCatalog);
  }

  /** Removes every record of a project, or of one run, durably (used when a project or run is deleted). */
  async dropRecords(projectId: string, runId?: string): Promise<number> {
    this.assertOpen();
    return this.#records.dropScope(projectId, runId);
  }

  // ------------------------------------------------------------------ SQL (sql-sandbox.ts)

  /**
   * Runs one read-only DuckDB query over views `spans`, `traces`, `sessions` (live rows, one column
   * per metric) and tables `projects`, `runs`. `$1`, `$2`... take `params`. Anything but a single
   * SELECT is refused (SqlError, an InvalidRequestError), and the query can read no file, network
   * address or setting outside the store's snapshot.
   */
  sql(query: string, params?: readonly SqlParam[], options?: SqlOptions & { format?: 'rows' }): Promise<Record<string, unknown>[]>;
  sql(query: string, params: readonly SqlParam[] | undefined, options: SqlOptions & { format: 'arrow' }): Promise<Table>;
  async sql(query: string, params: readonly SqlParam[] = [], options: SqlOptions = {}): Promise<Record<string, unknown>[] | Table> {
    this.assertOpen();
    return storeSql(this.catalog, this.#records, this.#db, { dir: this.dir, ...this.#sqlLimits }, query, params, options);
  }

  // ------------------------------------------------------------------ export (export.ts, transfer-api.ts)

  /**
   * The live records of a project, or of one run (`log_stream_id`...), as Arrow RecordBatches, read
   * lazily with bounded memory. With `level`, only records of that level matching `filters` /
   * `filter_tree`, and their descendants. Columns: EXPORT_COLUMNS (docs/storage-format.md).
   */
  export(projectId: string, body: ExportSelection & RunIds = {}): AsyncIterable<RecordBatch> {
    this.assertOpen();
    return transfer.exportBatches(this, this.#queries, this.#exporter, projectId, body);
  }

  /** Writes an export as one Parquet, JSON lines or Arrow IPC file at `out` (whole, or not at all). */
  async exportFile(projectId: string, out: string, options: ExportSelection & RunIds & ExportFileOptions): Promise<{ rows: number }> {
    this.assertOpen();
    return transfer.exportFile(this, this.#queries, this.#exporter, projectId, out, options);
  }

  // ------------------------------------------------------------------ import (import.ts, transfer-api.ts)

  /**
   * Imports an export file (Parquet, JSON lines or Arrow IPC) or JSON lines of v2 logging bodies into
   * project `project` and log stream `logStream` (names; both created when missing). Ids are kept, so
   * importing the same file again changes nothing. Each batch is durable and whole before the next.
   */
  async importFile(path: string, options: ImportOptions & { project: string; logStream: string }): Promise<ImportResult & { projectId: string; logStreamId: string }> {
    this.assertOpen();
    return transfer.importInto(this, this.#ingest, this.#records, this.#sqlLimits.threads, path, options);
  }

  // ------------------------------------------------------------------ Iceberg tables (src/iceberg)

  /** Publishes the live records as Iceberg v2 tables (`store.iceberg.publish({ to?, s3? })`). */
  get iceberg(): Iceberg {
    this.assertOpen();
    const records = this.#records;
    this.#iceberg ??= new Iceberg({
      dir: this.dir,
      prepare: async () => {
        await records.seal();
        await records.foldOverrides();
      },
      pin: () => records.pinSealed(),
      cutoffs: (projectId) => this.#retention.cutoffs(projectId),
      withConnection: (fn) => this.#db.withConnection(fn),
    });
    return this.#iceberg;
  }

  // ------------------------------------------------------------------ maintenance (maintenance-api.ts)

  /**
   * Merges small segments and purges deleted rows from disk now (it also runs by itself after seals).
   * Records past their retention are first logged as deleted, so the rewrite of their segments
   * (a segment at least 30% dead, see compaction.ts) takes them off the disk.
   */
  async compact(): Promise<{ merges: number; expired: number }> {
    this.assertOpen();
    return maintenance.compact(this, this.#records, this.#db);
  }

  // ------------------------------------------------------------------ retention (retention.ts, maintenance-api.ts)

  /**
   * Sets how many days records of a project (no run id) or of one log stream (`log_stream_id`) are
   * kept; null removes the setting. A log stream's own value wins over its project's. Records older
   * than that (by created_at) leave every read at once and the disk at the next `compact()`.
   */
  setRetention(projectId: string, body: { retention_days: number | null } & RunIds): RetentionSetting {
    this.assertOpen();
    return maintenance.setRetention(this, this.#retention, projectId, body);
  }

  getRetention(projectId: string, body: RunIds = {}): RetentionSetting {
    this.assertOpen();
    return maintenance.getRetention(this, this.#retention, projectId, body);
  }

  /** Seals the in-memory batch into Parquet now (it also happens by itself). */
  async flush(): Promise<void> {
    this.assertOpen();
    await this.#records.seal();
  }

  get stats(): RecordStore['stats'] {
    return this.#records.stats;
  }

  /** Memory in use, in bytes: DuckDB's by tag (its buffer manager's view; merges have a database of their own) and this process's. */
  async memory(): Promise<{ duckdb: Record<string, number>; duckdbMerge: Record<string, number>; process: NodeJS.MemoryUsage; js: Record<string, number>; tables: Record<string, number> }> {
    this.assertOpen();
    return maintenance.memory(this.#records);
  }
}

export { InvalidRequestError };
export { publicUser } from './store-base.js';
