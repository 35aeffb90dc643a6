// store.records: logging (whole traces, spans under a parent, sessions, streaming updates) and reading
// records back (search, count, delete, one record with its descendants, the columns a run has).
// Requests are checked here and resolved to the project and run they address; logging is done by
// Ingest (ingest.ts), questions by RecordQueries (src/query/exec), storage by the RecordStore.
import type { Catalog } from '../../catalog/catalog.js';
import { invalid, invalidFields } from '../../errors.js';
import { columnInfo, type ColumnInfo, type Level } from '../../query/columns.js';
import type { AggregateResult, RecordQueries, SearchResult } from '../../query/exec/record-queries.js';
import { AggregateBody, type AggregateRequest } from '../../schemas/aggregate.js';
import { assertValid } from '../../schemas/check.js';
import type { LogSpansRequest, LogTracesRequest } from '../../schemas/ingest.js';
import {
  AvailableColumnsBody,
  FilterBody,
  PartialSearchBody,
  SearchBody,
  type FilterRequest,
  type PartialSearchRequest,
  type SearchRequest,
} from '../../schemas/query.js';
import type { RecordStore } from '../../storage/record-store.js';
import type { OpenGuard } from '../open-guard.js';
import { resolveScope, RUN_ID_FIELDS, type RunIds } from '../run-scope.js';
import { checkedKey, IdempotencyKeys, type LogOptions } from './idempotency.js';
import type { Ingest, LogSpansResult, LogTracesResult } from './ingest.js';
import { recordTree } from './record-tree.js';

export interface RecordsHost {
  readonly guard: OpenGuard;
  readonly catalog: Catalog;
  readonly store: RecordStore;
  readonly queries: RecordQueries;
  readonly ingest: Ingest;
}

const LEVELS: readonly Level[] = ['span', 'trace', 'session'];

/** A level a caller without types may misspell ('spans'): named in the error, not read as a column's. */
function checkLevel(level: Level): void {
  if (!LEVELS.includes(level)) throw invalid(['level'], `level must be one of ${LEVELS.join(', ')}, not ${JSON.stringify(level)}`, level);
}

export class Records {
  readonly #guard: OpenGuard;
  readonly #catalog: Catalog;
  readonly #store: RecordStore;
  readonly #queries: RecordQueries;
  readonly #ingest: Ingest;
  readonly #keys = new IdempotencyKeys();

  constructor(host: RecordsHost) {
    this.#guard = host.guard;
    this.#catalog = host.catalog;
    this.#store = host.store;
    this.#queries = host.queries;
    this.#ingest = host.ingest;
  }

  // ------------------------------------------------------------------ logging (ingest.ts)

  /**
   * Logs whole traces (the body the official client sends to POST /projects/{id}/traces). Every call
   * logs new records (ids minted unless given); `idempotencyKey` makes a retry safe (idempotency.ts).
   * `keyLoc` names where the key came from in a 422 (the server's header).
   */
  async logTraces(
    projectId: string,
    body: LogTracesRequest,
    options: LogOptions = {},
    keyLoc: (string | number)[] = ['options', 'idempotencyKey'],
  ): Promise<LogTracesResult> {
    this.#guard.assertWritable('logging traces');
    const key = checkedKey(options?.idempotencyKey, keyLoc);
    if (key === null) return this.#ingest.logTraces(projectId, body);
    return this.#keys.run(`traces/${projectId}`, key, body, keyLoc, () => this.#ingest.logTraces(projectId, body, key));
  }

  /** Logs spans under `parent_id` in trace `trace_id`. Creates the trace if new. `options` as logTraces. */
  async logSpans(
    projectId: string,
    body: LogSpansRequest,
    options: LogOptions = {},
    keyLoc: (string | number)[] = ['options', 'idempotencyKey'],
  ): Promise<LogSpansResult> {
    this.#guard.assertWritable('logging spans');
    const key = checkedKey(options?.idempotencyKey, keyLoc);
    if (key === null) return this.#ingest.logSpans(projectId, body);
    return this.#keys.run(`spans/${projectId}`, key, body, keyLoc, () => this.#ingest.logSpans(projectId, body, key));
  }

  /** Creates a session explicitly (POST /projects/{id}/sessions); its run then reports user-created sessions. `options` as logTraces. */
  async createSession(
    projectId: string,
    body: Parameters<Ingest['createSession']>[1],
    options: LogOptions = {},
    keyLoc: (string | number)[] = ['options', 'idempotencyKey'],
  ): ReturnType<Ingest['createSession']> {
    this.#guard.assertWritable('creating a session');
    const key = checkedKey(options?.idempotencyKey, keyLoc);
    if (key === null) return this.#ingest.createSession(projectId, body);
    return this.#keys.run(`sessions/${projectId}`, key, body, keyLoc, () => this.#ingest.createSession(projectId, body, key));
  }

  /**
   * Updates a logged trace or span (the PATCH routes of streaming clients): the fields given replace the
   * stored ones (`duration_ns` goes to metrics.duration_ns); a new version of the record is written.
   */
  updateRecord(
    level: 'trace' | 'span',
    projectId: string,
    id: string,
    patch: Parameters<Ingest['updateRecord']>[3],
  ): ReturnType<Ingest['updateRecord']> {
    this.#guard.assertWritable('updating a record');
    return this.#ingest.updateRecord(level, projectId, id, patch);
  }

  // ------------------------------------------------------------------ reading, counting, deleting

  /** One record with its descendants nested (a trace's spans, a span's subtree, a session's traces). */
  async getRecord(level: Level, projectId: string, id: string): Promise<Record<string, unknown>> {
    this.#guard.assertOpen();
    checkLevel(level);
    return recordTree({ catalog: this.#catalog, search: (l, p, b) => this.search(l, p, b) }, level, projectId, id);
  }

  /** Full records of one level (spans, traces or sessions), filtered, sorted and paged. */
  async search(level: Level, projectId: string, body: SearchRequest = {}): Promise<SearchResult> {
    this.#guard.assertOpen();
    checkLevel(level);
    assertValid(SearchBody, body);
    return this.#queries.search(level, resolveScope(this.#catalog, projectId, body), body, false);
  }

  /** Records with only the selected columns (plus id, type and the links). */
  async partialSearch(level: Level, projectId: string, body: PartialSearchRequest = {}): Promise<SearchResult> {
    this.#guard.assertOpen();
    checkLevel(level);
    assertValid(PartialSearchBody, body);
    return this.#queries.search(level, resolveScope(this.#catalog, projectId, body), body, true);
  }

  async count(level: Level, projectId: string, body: FilterRequest = {}): Promise<{ total_count: number }> {
    this.#guard.assertOpen();
    checkLevel(level);
    assertValid(FilterBody, body);
    return { total_count: await this.#queries.count(level, resolveScope(this.#catalog, projectId, body), body) };
  }

  /**
   * Counts and measures of matching records (a run's, or the project's), grouped by up to two
   * columns or created_at time buckets: `{rows, interval?, groups_truncated?}`. The filters are
   * search's; a metric reads as search shows it (own value, else the roll-up). See
   * src/query/aggregate-plan.ts for the semantics.
   */
  async aggregate(level: Level, projectId: string, body: AggregateRequest): Promise<AggregateResult> {
    this.#guard.assertOpen();
    checkLevel(level);
    assertValid(AggregateBody, body);
    return this.#queries.aggregate(level, resolveScope(this.#catalog, projectId, body), body);
  }

  /**
   * Deletes matching records with all their descendants, durably. Refuses (422) a request with neither
   * a run id nor a filter, rather than wiping a project. A parent left without children keeps existing
   * with has_children false (a trace whose spans all went stays, as an empty trace): an override logged
   * with the delete, not a new version of the parent (see record-delete.ts).
   */
  async delete(level: Level, projectId: string, body: FilterRequest = {}): Promise<{ message: string; deleted: number }> {
    this.#guard.assertWritable('deleting records');
    checkLevel(level);
    assertValid(FilterBody, body);
    const scope = resolveScope(this.#catalog, projectId, body);
    const hasFilter = (body.filters?.length ?? 0) > 0 || (body.filter_tree !== undefined && body.filter_tree !== null);
    if (scope.runId === undefined && !hasFilter) {
      throw invalidFields(
        ['body'],
        [...RUN_ID_FIELDS.map(([f]) => f), 'filters'],
        'refusing to delete every record of the project: give a run id (log_stream_id, experiment_id or metrics_testing_id) or a filter',
        'missing',
      );
    }
    const { deleted } = await this.#queries.delete(level, scope, body);
    return { message: `Deleted ${deleted} record${deleted === 1 ? '' : 's'}`, deleted };
  }

  /** Columns of a run at a level: the standard columns and the metric columns its records carry. */
  async availableColumns(level: Level, projectId: string, body: RunIds = {}): Promise<{ columns: ColumnInfo[] }> {
    this.#guard.assertOpen();
    checkLevel(level);
    assertValid(AvailableColumnsBody, body);
    const scope = resolveScope(this.#catalog, projectId, body);
    // Scorers enabled in the run have a column even before any record carries their metric (is_empty).
    const enabled = scope.runId === undefined ? [] : this.#catalog.enabledScorers(scope.runId).map((s) => s.metric_name || s.name);
    return { columns: (await this.#queries.availableColumns(level, scope, enabled)).map(columnInfo) };
  }

  /** Live records of a project or run, every kind (what deleting it removes). */
  async countAll(projectId: string, runId?: string): Promise<number> {
    this.#guard.assertOpen();
    return this.#store.countScope(projectId, runId);
  }

  // ------------------------------------------------------------------ storage

  /** Seals the in-memory batch into Parquet now (it also happens by itself). */
  async flush(): Promise<void> {
    this.#guard.assertWritable('sealing records into Parquet');
    await this.#store.seal();
  }

  /** Counters of the record store (rows, seals, merges, segments...). */
  get stats(): RecordStore['stats'] {
    return this.#store.stats;
  }
}
