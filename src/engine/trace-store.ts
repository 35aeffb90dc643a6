// TraceStore: one data folder, opened (lock, catalog, DuckDB, record store) and offered as parts, each
// a small object with the operations of one concern:
//   store.records      logging and reading records (records/records.ts)
//   store.catalog      projects, runs, roles, bookmarks, scorers (store-catalog.ts)
//   store.users        users and API keys (users.ts)
//   store.data         SQL, export, import, retention (data/data.ts)
//   store.otlp         OpenTelemetry trace exports (otlp/otlp.ts)
//   store.maintenance  compaction and the memory report (maintenance.ts)
//   store.iceberg      the records as Iceberg tables for other engines (../iceberg/publish.ts)
//   store.scorers      scorers that run in the store, online and on demand (../scoring/scorers.ts)
// The parts share the objects built here and nothing else; none of them holds the store. A few
// methods of the library's quick start are kept on the store itself as aliases of the parts'.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Catalog, type Project, type Run, type RunKind, type User } from '../catalog/catalog.js';
import { metricInfoResolver, scorerMetricTest } from '../catalog/metric-info.js';
import { Database } from '../db/database.js';
import { Iceberg } from '../iceberg/publish.js';
import type { Level } from '../query/columns.js';
import { NOTED_COLUMNS } from '../query/exec/data-facts.js';
import { RecordQueries, type AggregateResult, type SearchResult } from '../query/exec/record-queries.js';
import type { AggregateRequest } from '../schemas/aggregate.js';
import type { LogTracesRequest } from '../schemas/ingest.js';
import type { FilterRequest, PartialSearchRequest, SearchRequest } from '../schemas/query.js';
import { removeLeftovers } from '../storage/leftovers.js';
import { FolderLock } from '../storage/lock.js';
import { RecordStore } from '../storage/record-store.js';
import { Scorers } from '../scoring/scorers.js';
import { sql } from '../query/sql.js';
import { StoreData } from './data/data.js';
import { Retention } from './data/retention.js';
import { Drops } from './drops.js';
import { setInternals } from './internals.js';
import { Maintenance } from './maintenance.js';
import { OpenGuard } from './open-guard.js';
import { Otlp } from './otlp/otlp.js';
import type { TargetCatalog } from './otlp/otlp-target.js';
import type { LogOptions } from './records/idempotency.js';
import { Ingest, type LogTracesResult } from './records/ingest.js';
import { ModelPriceBook } from './records/model-prices.js';
import { Records } from './records/records.js';
import { resolveRun } from './run-scope.js';
import { StoreCatalog } from './store-catalog.js';
import { checkedMemoryLimit, DEFAULT_MEMORY_LIMIT, type TraceStoreOptions } from './store-options.js';
import { Users } from './users.js';
import { NotFoundError } from '../errors.js';

export { DEFAULT_MEMORY_LIMIT, type TraceStoreOptions };

/** What open() has made before the store exists: released again if open fails later. */
interface Opened {
  dir: string;
  /** The folder's lock; none for a read-only store, which reads beside the holder. */
  lock: FolderLock | null;
  catalog: Catalog;
  db: Database;
  store: RecordStore;
  /** Where DuckDB spills and SQL and exports write their work files: <dir>/tmp, or a folder of a read-only store's own outside it. */
  scratch: string;
}

export class TraceStore {
  /** The data folder (absolute). */
  readonly dir: string;
  readonly records: Records;
  readonly catalog: StoreCatalog;
  readonly users: Users;
  readonly data: StoreData;
  readonly otlp: Otlp;
  readonly maintenance: Maintenance;
  readonly iceberg: Iceberg;
  readonly scorers: Scorers;
  readonly #guard: OpenGuard;
  readonly #opened: Opened;
  readonly #drops: Drops;

  private constructor(opened: Opened, options: TraceStoreOptions) {
    const { dir, catalog, db, store, scratch } = opened;
    const guard = new OpenGuard(store.readOnly);
    this.#guard = guard;
    this.dir = dir;
    this.#opened = opened;
    this.#drops = new Drops(catalog, store);
    const queries = new RecordQueries(store, db, {
      ...queryOptions(catalog, options),
      derivedStatuses: (row, known) => this.scorers.derivedStatuses(row, known),
    });
    const prices = new ModelPriceBook(catalog, options.modelPrices);
    const ingest = new Ingest(
      {
        catalog,
        resolveRun: (projectId, ids, loc) => resolveRun(catalog, projectId, ids, loc),
        prices: (projectId) => prices.lookup(projectId),
      },
      store,
      db,
      options.maxSpansPerRequest,
    );
    const retention = new Retention(catalog);
    store.retention = retention;
    this.records = new Records({ guard, catalog, store, queries, ingest });
    this.catalog = new StoreCatalog({
      guard,
      catalog,
      countRecords: (projectId, runId) => this.records.countAll(projectId, runId),
      count: (level, projectId, body) => this.records.count(level, projectId, body),
      drop: (projectId, runId, removeFromCatalog) => {
        guard.assertWritable('deleting a project or run');
        return this.#drops.drop(projectId, runId, removeFromCatalog);
      },
      lastSeq: () => store.lastSeq,
    });
    const targets: TargetCatalog = {
      findProjects: (query, user) => this.catalog.findProjects(query, user),
      projectNamed: (name) => catalog.projectByName(name),
      createProject: (input, user) => this.catalog.createProject(input, user),
      authorize: (projectId, action, user) => this.catalog.authorize(projectId, action, user),
      listRuns: (projectId, kind) => this.catalog.listRuns(projectId, kind),
      createLogStream: (projectId, name, user) => this.catalog.createLogStream(projectId, name, user),
    };
    this.users = new Users(guard, catalog);
    const limits = { ...(options.threads ? { threads: options.threads } : {}), memoryLimit: options.memoryLimit ?? DEFAULT_MEMORY_LIMIT };
    this.data = new StoreData({
      guard,
      dir,
      scratch,
      catalog,
      store,
      db,
      queries,
      ingest,
      log: ingest,
      targets,
      retention,
      limits,
      prices,
    });
    this.otlp = new Otlp(guard, targets, ingest.otlpHost(), options.maxSpansPerRequest);
    this.maintenance = new Maintenance(guard, catalog, store, db);
    this.iceberg = new Iceberg({
      dir,
      prepare: async () => {
        guard.assertWritable('publishing Iceberg tables');
        await store.seal();
        await store.foldOverrides();
      },
      pin: () => store.pinSealed(),
      cutoffs: (projectId) => retention.cutoffs(projectId),
      withConnection: (fn) => db.withConnection(fn),
    });
    this.scorers = new Scorers(
      {
        catalog,
        assertOpen: () => guard.assertOpen(),
        assertWritable: (what) => guard.assertWritable(what),
        lastSeq: () => store.lastSeq,
        lookup: (p, r, ids) => store.lookup(p, r, ids),
        liveMark: () => store.liveMark(),
        isLive: (seq, mark) => store.isLive(seq, mark),
        lockTraces: (keys, fn) => ingest.lock(keys, fn),
        write: (_p, _r, rows) => store.append(rows, true),
        matchRows: (level, scope, body, window, types, unscored, whole) =>
          queries.matchRows(level, scope, body, window, types, unscored, whole),
        count: (level, scope, body) => queries.count(level, scope, body),
        validateFilter: (level, body) => queries.validateFilter(level, body),
        resolveRun: (projectId, ids) => {
          const { project, run } = resolveRun(catalog, projectId, ids);
          return { projectId: project.id, runId: run.id };
        },
        regexMatches: async (texts, pattern, caseSensitive) => {
          const rows = await db.all(
            sql`SELECT list_transform(${[...texts]}::VARCHAR[], lambda t: regexp_matches(t, ${pattern}, ${caseSensitive ? '' : 'i'})) AS m`,
          );
          return (rows[0]!['m'] as boolean[]).map((b) => b === true);
        },
      },
      options.scoring,
    );
    ingest.onWritten = (projectId, runId, rows) => this.scorers.notice(projectId, runId, rows);
    setInternals(this, { catalog, records: store, guard });
  }

  /**
   * Opens (creating if needed) a data folder. Fails with STORE_LOCKED if another process has it open.
   * With `readOnly: true`, reads the folder beside the process that has it open (the server, say),
   * without its lock and without changing the folder (see TraceStoreOptions.readOnly).
   */
  static async open(dir: string, options: TraceStoreOptions = {}): Promise<TraceStore> {
    const root = resolve(dir);
    const memoryLimit = checkedMemoryLimit(options);
    if (options.readOnly === true) return TraceStore.#openReadOnly(root, options, memoryLimit);
    mkdirSync(root, { recursive: true });
    const lock = await FolderLock.acquire(root);
    let catalog: Catalog | undefined;
    let db: Database | undefined;
    try {
      removeLeftovers(root); // after the lock: nothing it removes can belong to a live store
      catalog = Catalog.open(root);
      mkdirSync(join(root, 'tmp'), { recursive: true });
      db = await Database.open({ threads: options.threads, memoryLimit, tempDirectory: join(root, 'tmp') });
      const store = await RecordStore.open(root, db, { ...options, notedColumns: NOTED_COLUMNS });
      const opened = new TraceStore({ dir: root, lock, catalog, db, store, scratch: join(root, 'tmp') }, options);
      await opened.#drops.finishPending();
      opened.scorers.start();
      return opened;
    } catch (err) {
      await db?.close();
      catalog?.close();
      lock.release();
      throw err;
    }
  }

  /** A store over a folder another process may be writing: no lock, no write, its scratch space outside. */
  static async #openReadOnly(root: string, options: TraceStoreOptions, memoryLimit: string): Promise<TraceStore> {
    if (!existsSync(join(root, 'manifest.json')) && !existsSync(join(root, 'catalog.log')) && !existsSync(join(root, 'catalog.json')))
      throw new NotFoundError(`${root} holds no tracelake data folder (nothing to read)`);
    const scratch = mkdtempSync(join(tmpdir(), 'tracelake-reader-'));
    let db: Database | undefined;
    try {
      const catalog = Catalog.openReadOnly(root, { follow: options.refreshBeforeRead === true });
      db = await Database.open({ threads: options.threads, memoryLimit, tempDirectory: scratch });
      const store = await RecordStore.openReadOnly(root, db, { ...options, notedColumns: NOTED_COLUMNS });
      return new TraceStore({ dir: root, lock: null, catalog, db, store, scratch }, options);
    } catch (err) {
      await db?.close();
      rmSync(scratch, { recursive: true, force: true });
      throw err;
    }
  }

  /** Whether the store was opened read-only (TraceStoreOptions.readOnly). */
  get readOnly(): boolean {
    return this.#guard.readOnly;
  }

  /**
   * A read-only store moves to the folder's newest state: what the writer has acknowledged by now
   * (the catalog too). Reads started before keep their view. The writer's own store always has it.
   */
  async refresh(): Promise<void> {
    this.#guard.assertOpen();
    const { catalog, store } = this.#opened;
    catalog.refresh();
    await store.refresh();
  }

  /**
   * Seals pending rows into Parquet and releases the folder. `seal: false` waits for nothing large:
   * seals and merges under way are stopped, the log is fsynced, and rows not yet in Parquet stay in
   * the log for the next open to replay (what `tracelake serve` does on SIGTERM).
   */
  async close(options: { seal?: boolean } = {}): Promise<void> {
    if (this.#guard.closed) return;
    this.#guard.close();
    const { store, db, catalog, lock, scratch } = this.#opened;
    try {
      await this.scorers.close();
      await store.close(options);
    } finally {
      await db.close();
      catalog.close();
      lock?.release();
      if (!lock) rmSync(scratch, { recursive: true, force: true });
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  // ------------------------------------------------------------------ aliases
  // The library's quick start on the store itself; each is exactly the part's method of the same name.

  /** store.catalog.findProjects. */
  findProjects(query: { name?: string } = {}, user?: User | null): Project[] {
    return this.catalog.findProjects(query, user);
  }

  /** store.catalog.createProject. */
  createProject(input: { name: string; type?: string; description?: string | null; labels?: string[] }, user?: User | null): Project {
    return this.catalog.createProject(input, user);
  }

  /** store.catalog.listRuns. */
  listRuns(projectId: string, kind?: RunKind): Run[] {
    return this.catalog.listRuns(projectId, kind);
  }

  /** store.catalog.createLogStream. */
  createLogStream(projectId: string, name: string, user?: User | null): Run {
    return this.catalog.createLogStream(projectId, name, user);
  }

  /** store.records.logTraces. */
  logTraces(projectId: string, body: LogTracesRequest, options: LogOptions = {}): Promise<LogTracesResult> {
    return this.records.logTraces(projectId, body, options);
  }

  /** store.records.search. */
  search(level: Level, projectId: string, body: SearchRequest = {}): Promise<SearchResult> {
    return this.records.search(level, projectId, body);
  }

  /** store.records.partialSearch. */
  partialSearch(level: Level, projectId: string, body: PartialSearchRequest = {}): Promise<SearchResult> {
    return this.records.partialSearch(level, projectId, body);
  }

  /** store.records.count. */
  count(level: Level, projectId: string, body: FilterRequest = {}): Promise<{ total_count: number }> {
    return this.records.count(level, projectId, body);
  }

  /** store.records.aggregate. */
  aggregate(level: Level, projectId: string, body: AggregateRequest): Promise<AggregateResult> {
    return this.records.aggregate(level, projectId, body);
  }

  /** store.records.flush. */
  flush(): Promise<void> {
    return this.records.flush();
  }
}

/** The query engine's options, from the store's. */
function queryOptions(catalog: Catalog, options: TraceStoreOptions): ConstructorParameters<typeof RecordQueries>[2] {
  return {
    metricInfo: metricInfoResolver(catalog),
    scorerMetric: scorerMetricTest(catalog),
    ...(options.pageWindowRows ? { windowRows: options.pageWindowRows } : {}),
    ...(options.metricTopK === false ? { metricTopK: false } : {}),
    ...(options.segmentCounts === false ? { segmentCounts: false } : {}),
    ...(options.tokenCounts === false ? { tokenCounts: false } : {}),
    ...(options.segmentCountMinRows !== undefined ? { segmentCountMinRows: options.segmentCountMinRows } : {}),
    ...(options.metricTopKRows ? { topKRows: options.metricTopKRows } : {}),
    ...(options.metricTopKRowsPerCandidate !== undefined ? { topKRowsPerCandidate: options.metricTopKRowsPerCandidate } : {}),
    ...(options.metricTopKBuild ? { topKBuild: options.metricTopKBuild } : {}),
    ...(options.planEstimate ? { planEstimate: options.planEstimate } : {}),
    ...(options.estimateMinGroups !== undefined ? { estimateMinGroups: options.estimateMinGroups } : {}),
    ...(options.sortKeyGroups !== undefined ? { sortKeyGroups: options.sortKeyGroups } : {}),
    ...(options.narrowKeyGroups !== undefined ? { narrowKeyGroups: options.narrowKeyGroups } : {}),
    ...(options.onPlan ? { onPlan: options.onPlan } : {}),
    ...(options.onBackground ? { onBackground: options.onBackground } : {}),
  };
}
