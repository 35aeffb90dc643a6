// store.data: data in and out of the store. Read-only SQL over the live records (sql-sandbox.ts),
// export as Arrow batches or one file (export.ts), import of an export or of v2 logging bodies
// (import.ts), how long records are kept (retention.ts), and the model prices costs come from.
import { join } from 'node:path';
import type { RecordBatch, Table } from 'apache-arrow';
import type { Catalog } from '../../catalog/catalog.js';
import type { Database } from '../../db/database.js';
import { invalid } from '../../errors.js';
import type { RecordQueries, RunScope } from '../../query/exec/record-queries.js';
import { contentDigest } from '../../ingest/ids.js';
import { assertValid } from '../../schemas/check.js';
import { LogSpansBody, LogTracesBody, type LogSpansRequest, type LogTracesRequest } from '../../schemas/ingest.js';
import { FilterBody } from '../../schemas/query.js';
import type { RecordStore } from '../../storage/record-store.js';
import type { OpenGuard } from '../open-guard.js';
import { resolveTarget, type TargetCatalog } from '../otlp/otlp-target.js';
import type { Ingest } from '../records/ingest.js';
import { resolveScope, type RunIds } from '../run-scope.js';
import { EXPORT_FORMATS, Exporter, type ExportFileOptions, type ExportSelection } from './export.js';
import { importFile, type ImportOptions, type ImportResult, type ImportSink } from './import.js';
import { Retention, type RetentionSetting } from './retention.js';
import type { ModelPriceBook, ModelPriceSetting } from '../records/model-prices.js';
import { storeSql, type SqlOptions, type SqlParam } from './sql-sandbox.js';

export interface DataHost {
  readonly guard: OpenGuard;
  readonly dir: string;
  /** Where SQL and export work files go: <data>/tmp, or a folder outside the data folder for a read-only store. */
  readonly scratch: string;
  readonly catalog: Catalog;
  readonly store: RecordStore;
  readonly db: Database;
  readonly queries: RecordQueries;
  /** Writes an import's rows into a run, as logging does. */
  readonly ingest: Ingest;
  /** Logs an import's v2 bodies as the logging routes would (Ingest's, with an idempotency key each). */
  readonly log: Pick<Ingest, 'logTraces' | 'logSpans'>;
  /** Finds or creates the project and log stream an import goes to. */
  readonly targets: TargetCatalog;
  readonly retention: Retention;
  /** Model prices for computed costs (a project's own, the operator's, the shipped table). */
  readonly prices: ModelPriceBook;
  /** DuckDB limits of the SQL sandbox and the importer (the store's own). */
  readonly limits: { threads?: number; memoryLimit: string };
}

export class StoreData {
  readonly #host: DataHost;
  readonly #exporter: Exporter;

  constructor(host: DataHost) {
    this.#host = host;
    this.#exporter = new Exporter(host.dir, host.scratch, host.store, host.db, host.queries);
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
    this.#host.guard.assertOpen();
    const { catalog, store, db, scratch, limits } = this.#host;
    return storeSql(catalog, store, db, { scratch, ...limits }, query, params, options);
  }

  // ------------------------------------------------------------------ export (export.ts)

  /**
   * The live records of a project, or of one run (`log_stream_id`...), as Arrow RecordBatches, read
   * lazily with bounded memory. With `level`, only records of that level matching `filters` /
   * `filter_tree`, and their descendants. Columns: EXPORT_COLUMNS (docs/storage-format.md).
   */
  export(projectId: string, body: ExportSelection & RunIds = {}): AsyncIterable<RecordBatch> {
    this.#host.guard.assertOpen();
    return this.#exporter.batches(this.#exportScope(projectId, body), body);
  }

  /** Writes an export as one Parquet, JSON lines or Arrow IPC file at `out` (whole, or not at all). */
  async exportFile(projectId: string, out: string, options: ExportSelection & RunIds & ExportFileOptions): Promise<{ rows: number }> {
    this.#host.guard.assertOpen();
    const { format, onProgress, ...body } = options;
    if (!EXPORT_FORMATS.includes(format))
      throw invalid(['format'], `Input should be one of ${EXPORT_FORMATS.join(', ')}`, format, 'literal_error');
    return this.#exporter.toFile(this.#exportScope(projectId, body), body, out, { format, ...(onProgress ? { onProgress } : {}) });
  }

  #exportScope(projectId: string, body: ExportSelection & RunIds): RunScope {
    const { level, ...filter } = body;
    if (level !== undefined && !['span', 'trace', 'session'].includes(level))
      throw invalid(['body', 'level'], "Input should be 'span', 'trace' or 'session'", level, 'literal_error');
    assertValid(FilterBody, filter);
    if (level !== undefined) this.#host.queries.validateFilter(level, filter);
    return resolveScope(this.#host.catalog, projectId, body);
  }

  // ------------------------------------------------------------------ import (import.ts)

  /**
   * Imports an export file (Parquet, JSON lines or Arrow IPC) or JSON lines of v2 logging bodies into
   * project `project` and log stream `logStream` (names; both created when missing). Ids are kept, so
   * importing the same file again changes nothing. Each batch is durable and whole before the next.
   */
  async importFile(
    path: string,
    options: ImportOptions & { project: string; logStream: string },
  ): Promise<ImportResult & { projectId: string; logStreamId: string }> {
    this.#host.guard.assertWritable('importing');
    const { project, logStream, ...rest } = options;
    for (const [field, v] of [
      ['project', project],
      ['logStream', logStream],
    ] as const) {
      if (typeof v !== 'string' || v.trim() === '') throw invalid([field], 'Input should be a non-empty name', v);
    }
    const { ingest, store, log, dir, limits } = this.#host;
    const { project: p, run } = resolveTarget(this.#host.targets, { project, logStream }, null);
    const sink: ImportSink = {
      write: (drafts) => ingest.write(p.id, run.id, drafts, true),
      bulk: (batch) => store.bulkLoad(p.id, run.id, batch),
      logBody: async (body, line) => {
        const { log_stream_id: _l, experiment_id: _e, metrics_testing_id: _m, ...fields } = body;
        const target = { ...fields, log_stream_id: run.id };
        // Each body is logged as a request keyed by its line and content: importing the file again
        // (or completing an interrupted import) finds what it logged instead of logging it twice.
        const key = `import-${line}-${contentDigest(target)}`;
        // Checked here for its type (the same check, and so the same error, as logging it makes).
        if (Array.isArray(body['traces'])) {
          assertValid<LogTracesRequest>(LogTracesBody, target);
          await log.logTraces(p.id, target, key);
        } else {
          assertValid<LogSpansRequest>(LogSpansBody, target);
          await log.logSpans(p.id, target, key);
        }
      },
    };
    let result: ImportResult;
    try {
      result = await importFile(
        path,
        sink,
        { tempDirectory: join(dir, 'tmp'), ...(limits.threads ? { threads: limits.threads } : {}) },
        rest,
      );
    } finally {
      // The loaded segments' top lists, after the import (also what a failed one committed).
      store.measureLater();
    }
    return { ...result, projectId: p.id, logStreamId: run.id };
  }

  // ------------------------------------------------------------------ retention (retention.ts)

  /**
   * Sets how many days records of a project (no run id) or of one log stream (`log_stream_id`) are
   * kept; null removes the setting. A log stream's own value wins over its project's. Records older
   * than that (by created_at) leave every read at once and the disk at the next compact().
   */
  setRetention(projectId: string, body: { retention_days: number | null } & RunIds): RetentionSetting {
    this.#host.guard.assertWritable('setting retention');
    const days = Retention.validate(body?.retention_days);
    const scope = this.#retentionScope(projectId, body);
    this.#host.retention.set(scope.projectId, scope.runId, days);
    return this.#host.retention.get(scope.projectId, scope.runId);
  }

  getRetention(projectId: string, body: RunIds = {}): RetentionSetting {
    this.#host.guard.assertOpen();
    const scope = this.#retentionScope(projectId, body);
    return this.#host.retention.get(scope.projectId, scope.runId);
  }

  // ------------------------------------------------------------------ model prices (model-prices.ts)

  /** The prices costs are computed with for a project: its own, and the defaults tried after them. */
  getModelPrices(projectId: string): ModelPriceSetting {
    this.#host.guard.assertOpen();
    this.#host.catalog.project(projectId);
    return this.#host.prices.get(projectId);
  }

  /**
   * Replaces a project's own model prices (USD per 1M tokens; `{}` removes them). They apply to llm
   * records logged from now on that carry no cost of their own.
   */
  setModelPrices(projectId: string, models: unknown): ModelPriceSetting {
    this.#host.guard.assertWritable('setting model prices');
    this.#host.catalog.project(projectId);
    return this.#host.prices.set(projectId, models);
  }

  #retentionScope(projectId: string, ids: RunIds): { projectId: string; runId: string | null } {
    const scope = resolveScope(this.#host.catalog, projectId, ids);
    return { projectId: scope.projectId, runId: scope.runId ?? null };
  }
}
