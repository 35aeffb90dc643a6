// TraceStore: the engine. Opens a data folder (lock, catalog, record store, DuckDB) and offers every
// operation the server has, as typed library methods taking the same request shapes.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { existsSync, readFileSync } from 'node:fs';
import { Catalog, type ApiKey, type Project, type Run, type RunKind, type User } from '../catalog/catalog.js';
import { visibleProjectIds } from '../catalog/members.js';
import { fingerprint, verifySecret } from '../catalog/secrets.js';
import { TokenSigner } from '../catalog/tokens.js';
import { writeFileAtomic } from '../storage/fs-util.js';
import { Database } from '../db/database.js';
import { ConflictError, InvalidRequestError, invalid, NotFoundError, UnauthorizedError } from '../errors.js';
import { flattenSpans, flattenTraces, type Draft, type FlatTraces } from '../ingest/flatten.js';
import { emptyRecord } from '../ingest/normalize-node.js';
import { implicitSessionId, newId, uuidFromHash } from '../ingest/ids.js';
import { nowUs } from '../ingest/time.js';
import { CreateSessionBody, LogSpansBody, LogTracesBody, UpdateRecordBody, type LogSpansRequest, type LogTracesRequest } from '../schemas/ingest.js';
import { assertValid } from '../schemas/check.js';
import { FolderLock } from '../storage/lock.js';

import { RecordStore, type RecordStoreOptions, type Scope, type WireRow } from '../storage/record-store.js';
import { columnInfo, type ColumnInfo, type Level } from '../query/columns.js';
import { AvailableColumnsBody, FilterBody, PartialSearchBody, SearchBody, type FilterRequest, type PartialSearchRequest, type SearchRequest } from '../schemas/query.js';
import * as catalogApi from './catalog-api.js';
import { metricInfoResolver } from './metric-info.js';
import { RecordQueries, type RunScope, type SearchResult } from './record-queries.js';
import { storedToWire } from './row-codec.js';

/** DuckDB's memory limit unless given: enough for compaction's 2M-row merges without spilling much. */
export const DEFAULT_MEMORY_LIMIT = '2GB';
const MEMORY_SIZE = /^\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i;

export interface TraceStoreOptions extends RecordStoreOptions {
  /** DuckDB worker threads (default: all cores). */
  threads?: number;
  /**
   * DuckDB's memory limit, e.g. '4GB' (default '2GB'; DuckDB's own default is 80% of RAM). Sorts and
   * merges beyond it spill to `<dir>/tmp`; compaction needs about 1 GB.
   */
  memoryLimit?: string;
  /** Lifetime of bearer tokens in seconds (default 30 days). */
  tokenTtlSeconds?: number;
  /** Rows the first created_at window of a newest-first page covers (default 50,000; tests shrink it). */
  pageWindowRows?: number;
  /** Most spans one logging request may carry (default 100,000; more answers 413). */
  maxSpansPerRequest?: number;
}

/** Which run a request addresses: exactly one of the three run ids. */
export interface RunIds {
  log_stream_id?: string | null;
  experiment_id?: string | null;
  metrics_testing_id?: string | null;
}

export interface LogSpansResult {
  project_id: string;
  project_name: string;
  records_count: number;
  trace_id: string;
  parent_id: string;
  session_id: string | null;
  log_stream_id: string | null;
  experiment_id: string | null;
  metrics_testing_id: string | null;
}

export interface LogTracesResult {
  project_id: string;
  project_name: string;
  records_count: number;
  traces_count: number;
  spans_count: number;
  session_id: string | null;
  log_stream_id: string | null;
  experiment_id: string | null;
  metrics_testing_id: string | null;
  trace_ids: string[];
}

const RUN_ID_FIELDS: readonly [keyof RunIds, RunKind][] = [
  ['log_stream_id', 'log_stream'],
  ['experiment_id', 'experiment'],
  ['metrics_testing_id', 'metrics_testing'],
];

export class TraceStore {
  readonly dir: string;
  readonly catalog: Catalog;
  readonly #lock: FolderLock;
  readonly #db: Database;
  readonly #records: RecordStore;
  /** trace id -> next step number, for spans logged into an existing trace. */
  readonly #nextStep = new Map<string, number>();
  /**
   * Traces that Log spans created because their spans came first (run/trace id -> the session they got
   * and the updates since). Streaming clients send a trace's first spans, and sometimes its conclusion,
   * before the trace itself: Log traces then merges into this stand-in instead of replacing it.
   */
  readonly #provisional = new Map<string, Provisional>();
  /** Spans logged (reliable: false) before their parent span arrived: run/parent id. */
  readonly #awaitedParents = new Set<string>();
  /** Serialises the requests that read and rewrite records of one trace (run/trace id). */
  readonly #traceLock = new KeyedLock();
  readonly #tokens: TokenSigner;
  readonly #queries: RecordQueries;
  readonly #maxSpans: number | undefined;
  readonly #verifiedPasswords = new Map<string, string>();
  #closed = false;

  private constructor(dir: string, lock: FolderLock, catalog: Catalog, db: Database, records: RecordStore, tokens: TokenSigner, options: TraceStoreOptions) {
    this.dir = dir;
    this.#tokens = tokens;
    this.#maxSpans = options.maxSpansPerRequest;
    this.#queries = new RecordQueries(records, db, { metricInfo: metricInfoResolver(catalog), ...(options.pageWindowRows ? { windowRows: options.pageWindowRows } : {}) });
    this.#lock = lock;
    this.catalog = catalog;
    this.#db = db;
    this.#records = records;
  }

  /** Opens (creating if needed) a data folder. Fails with STORE_LOCKED if another process has it open. */
  static async open(dir: string, options: TraceStoreOptions = {}): Promise<TraceStore> {
    const root = resolve(dir);
    const memoryLimit = options.memoryLimit ?? DEFAULT_MEMORY_LIMIT;
    if (!MEMORY_SIZE.test(memoryLimit)) throw invalid(['memoryLimit'], "Input should be a size such as '512MB' or '4GB'", memoryLimit);
    mkdirSync(root, { recursive: true });
    const lock = FolderLock.acquire(root);
    let catalog: Catalog | undefined;
    let db: Database | undefined;
    try {
      catalog = Catalog.open(root);
      mkdirSync(join(root, 'tmp'), { recursive: true });
      db = await Database.open({ threads: options.threads, memoryLimit, tempDirectory: join(root, 'tmp') });
      const records = await RecordStore.open(root, db, options);
      const store = new TraceStore(root, lock, catalog, db, records, TokenSigner.forFolder(root, options.tokenTtlSeconds), options);
      await store.#finishPendingDrops();
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
    if (this.#closed) return;
    this.#closed = true;
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

  #assertOpen(): void {
    if (this.#closed) throw new ConflictError('STORE_CLOSED', 'the trace store is closed');
  }

  // ------------------------------------------------------------------ users, keys and tokens

  createUser(input: { email: string; first_name?: string; last_name?: string; role?: 'admin' | 'user'; password?: string }): User {
    this.#assertOpen();
    return this.catalog.createUser(input);
  }

  /** A new API key for a user: the clear key is returned here once and stored only as a hash. */
  createApiKey(userId: string, description = ''): { key: string; id: string } {
    this.#assertOpen();
    const { key, record } = this.catalog.createApiKey(userId, description);
    return { key, id: record.id };
  }

  revokeApiKey(id: string): void {
    this.#assertOpen();
    this.catalog.revokeApiKey(id);
  }

  /** Users (never their password hashes). */
  listUsers(): { id: string; email: string; first_name: string; last_name: string; role: string; created_at: string }[] {
    return this.catalog.table<User>('users').map(publicUser);
  }

  /** A user's API keys: id, description, dates and the first characters; never the key or its hash. */
  listApiKeys(userId?: string): { id: string; user_id: string; prefix: string; description: string; created_at: string; revoked_at: string | null }[] {
    return this.catalog
      .table<ApiKey>('api_keys')
      .filter((k) => userId === undefined || k.user_id === userId)
      .map((k) => ({ id: k.id, user_id: k.user_id, prefix: k.prefix, description: k.description, created_at: k.created_at, revoked_at: k.revoked_at }));
  }

  userByEmail(email: string): User | undefined {
    return this.catalog.table<User>('users').find((u) => u.email === email.trim().toLowerCase());
  }

  authenticateApiKey(key: string): User {
    return this.catalog.authenticateKey(key);
  }

  /**
   * Makes sure the server has a key to admit its first user. `envKey` (TRACELAKE_API_KEY) is adopted if
   * given; otherwise the first start generates one and writes it to <data>/api-key (mode 0600).
   * Returns the key only when it was generated now, so the caller prints it exactly once.
   */
  bootstrapApiKey(envKey?: string): { generated: string | null; file: string } {
    this.#assertOpen();
    const file = join(this.dir, 'api-key');
    let admin = this.catalog.table<User>('users').find((u) => u.role === 'admin');
    admin ??= this.catalog.createUser({ email: 'admin@localhost', first_name: 'Admin', role: 'admin' });
    if (envKey) {
      if (!this.catalog.hasKey(envKey)) this.catalog.createApiKey(admin.id, 'TRACELAKE_API_KEY', envKey);
      return { generated: null, file };
    }
    const live = this.catalog.table<ApiKey>('api_keys').filter((k) => k.revoked_at === null);
    if (live.length > 0 && existsSync(file)) return { generated: null, file };
    if (live.length > 0 && !existsSync(file)) return { generated: null, file };
    const { key } = this.catalog.createApiKey(admin.id, 'generated on first start');
    writeFileAtomic(file, `${key}\n`, 0o600);
    return { generated: key, file };
  }

  /** Exchanges an API key for a bearer token (POST /login/api_key). */
  loginWithApiKey(key: string): { access_token: string; token_type: 'bearer'; expires_in: number } {
    const { user, keyId } = this.catalog.authenticateKeyWithId(key);
    return { access_token: this.#tokens.sign(user.id, keyId), token_type: 'bearer', expires_in: this.#tokens.ttlSeconds };
  }

  /** The OAuth2 password flow and HTTP Basic: a user's email and password. */
  loginWithPassword(email: string, password: string): { access_token: string; token_type: 'bearer'; expires_in: number } {
    const user = this.authenticatePassword(email, password);
    return { access_token: this.#tokens.sign(user.id), token_type: 'bearer', expires_in: this.#tokens.ttlSeconds };
  }

  authenticatePassword(email: string, password: string): User {
    // HTTP Basic sends the password on every request: a verified pair is remembered by its SHA-256.
    const fp = fingerprint(`${email.trim().toLowerCase()}\u0000${password}`);
    const known = this.#verifiedPasswords.get(fp);
    const cached = known ? this.catalog.get<User>('users', known) : undefined;
    if (cached) return cached;
    const user = this.catalog.table<User>('users').find((u) => u.email === email.trim().toLowerCase());
    if (!user?.password || !verifySecret(password, user.password)) throw new UnauthorizedError('Incorrect username or password');
    this.#verifiedPasswords.set(fp, user.id);
    return user;
  }

  authenticateToken(token: string): User {
    const claims = this.#tokens.verify(token);
    const user = this.catalog.get<User>('users', claims.sub);
    if (!user) throw new UnauthorizedError('Invalid token');
    if (claims.kid !== undefined && !this.catalog.keyIsLive(claims.kid)) throw new UnauthorizedError('Token revoked: its API key was revoked');
    return user;
  }

  // ------------------------------------------------------------------ projects and runs

  createProject(input: { name: string; type?: string; description?: string | null; labels?: string[] }, user?: User | null): Project {
    this.#assertOpen();
    return this.catalog.createProject(input, user?.id ?? null);
  }

  getProject(id: string): Project {
    return this.catalog.project(id);
  }

  /** Projects whose name equals `name` (an empty list when none does). */
  /** Projects (visible to `user`, when given) whose name equals `name`; an empty list when none does. */
  findProjects(query: { name?: string } = {}, user?: User | null): Project[] {
    const visible = visibleProjectIds(this.catalog, user);
    const all = visible === null ? this.catalog.projects() : this.catalog.projects().filter((p) => visible.has(p.id));
    return query.name === undefined ? all : all.filter((p) => p.name === query.name);
  }

  createRun(projectId: string, kind: RunKind, name: string, user?: User | null): Run {
    this.#assertOpen();
    return this.catalog.createRun(projectId, kind, name, user?.id ?? null);
  }

  createLogStream(projectId: string, name: string, user?: User | null): Run {
    return this.createRun(projectId, 'log_stream', name, user);
  }

  createExperiment(projectId: string, name: string, user?: User | null): Run {
    return this.createRun(projectId, 'experiment', name, user);
  }

  createMetricsTestingRun(projectId: string, name: string, user?: User | null): Run {
    return this.createRun(projectId, 'metrics_testing', name, user);
  }

  listRuns(projectId: string, kind?: RunKind): Run[] {
    this.catalog.project(projectId);
    return this.catalog.runs(projectId, kind);
  }

  /** The run a request addresses; 422 when none or several run ids are given, 404 when unknown. */
  resolveRun(projectId: string, ids: RunIds, loc: (string | number)[] = ['body']): { project: Project; run: Run; field: keyof RunIds } {
    const project = this.catalog.project(projectId);
    const given = RUN_ID_FIELDS.filter(([f]) => ids[f] != null);
    if (given.length === 0) {
      throw invalid(loc, 'one of log_stream_id, experiment_id or metrics_testing_id is required', undefined, 'missing');
    }
    if (given.length > 1) {
      throw invalid(loc, `give only one of log_stream_id, experiment_id, metrics_testing_id (got ${given.map(([f]) => f).join(', ')})`);
    }
    const [field, kind] = given[0]!;
    const run = this.catalog.run(project.id, String(ids[field]));
    if (run.kind !== kind) throw new NotFoundError(`${field} ${run.id} is not a ${kind.replace('_', ' ')}`);
    return { project, run, field };
  }

  // ================================================================== catalog (issue 4)
  // Projects, runs, roles, bookmarks, scorers and run scorer settings; implemented in catalog-api.ts.
  // `user` is the caller; omitted or null means a library call with every right.

  /** A project as GET /projects/{id} shows it, with the caller's bookmark and permissions. */
  describeProject(project: Project | string, user?: User | null, actions: readonly catalogApi.ProjectAction[] = []): catalogApi.ProjectView {
    return catalogApi.projectView(this, typeof project === 'string' ? this.catalog.project(project) : project, user, actions);
  }

  /** Renames and/or changes description, labels and (the caller's) bookmark. */
  updateProject(projectId: string, update: catalogApi.ProjectUpdate, user?: User | null): Project {
    this.#assertOpen();
    return catalogApi.updateProject(this, projectId, update, user);
  }

  renameProject(projectId: string, name: string, user?: User | null): Project {
    return this.updateProject(projectId, { name }, user);
  }

  bookmarkProject(projectId: string, bookmarked: boolean, user?: User | null): void {
    this.#assertOpen();
    catalogApi.bookmarkProject(this, projectId, bookmarked, user);
  }

  /** Deletes a project with every run, record, role, bookmark and scorer setting in it. */
  deleteProject(projectId: string): Promise<{ records_deleted: number }> {
    this.#assertOpen();
    return catalogApi.deleteProject(this, projectId);
  }

  /** POST /v2/projects/paginated. */
  listProjects(body: catalogApi.ProjectsBody = {}, query: catalogApi.ProjectPageQuery = {}, user?: User | null): catalogApi.ProjectsPage {
    return catalogApi.listProjects(this, body, query, user);
  }

  /** The older bare POST /projects/paginated (v1 shape). */
  listProjectsV1(body: catalogApi.ProjectsBodyV1 = {}, query: catalogApi.ProjectPageQueryV1 = {}, user?: User | null): catalogApi.ProjectsPageV1 {
    return catalogApi.listProjectsV1(this, body, query, user);
  }

  /** Gives a user a role in a project (or changes it). */
  addProjectMember(projectId: string, userId: string, role: catalogApi.ProjectRole): catalogApi.MemberView {
    this.#assertOpen();
    return catalogApi.addMember(this, projectId, userId, role);
  }

  removeProjectMember(projectId: string, userId: string): void {
    this.#assertOpen();
    catalogApi.dropMember(this, projectId, userId);
  }

  listProjectMembers(projectId: string): catalogApi.MemberView[] {
    return catalogApi.members(this, projectId);
  }

  projectRole(projectId: string, userId: string): catalogApi.ProjectRole | null {
    return catalogApi.role(this, projectId, userId);
  }

  projectPermissions(projectId: string, user: User | null, actions: readonly catalogApi.ProjectAction[]): catalogApi.Permission[] {
    return catalogApi.permissions(this, projectId, user, actions);
  }

  /** Throws ForbiddenError unless `user` may perform `action` in the project. */
  authorize(projectId: string, action: catalogApi.ProjectAction, user: User | null): void {
    catalogApi.authorize(this, projectId, action, user);
  }

  getRun(projectId: string, runId: string): Run {
    return this.catalog.run(this.catalog.project(projectId).id, runId);
  }

  renameRun(projectId: string, runId: string, name: string): Run {
    this.#assertOpen();
    return catalogApi.renameRun(this, projectId, runId, name);
  }

  /** Deletes a run (log stream, experiment or metrics-testing run) with its records. */
  deleteRun(projectId: string, runId: string): Promise<{ records_deleted: number }> {
    this.#assertOpen();
    return catalogApi.deleteRun(this, projectId, runId);
  }

  /** POST /projects/{id}/log_streams/search. */
  searchLogStreams(projectId: string, body: catalogApi.LogStreamSearchBody = {}): Promise<catalogApi.LogStreamPage> {
    this.#assertOpen();
    return catalogApi.searchLogStreams(this, projectId, body);
  }

  /** Sets has_user_created_sessions on a log stream (called when a session is created explicitly). */
  markUserCreatedSession(runId: string): void {
    this.#assertOpen();
    this.catalog.markUserCreatedSession(runId);
  }

  /** POST /v2/scorers/list. */
  listScorers(body: catalogApi.ListScorersBody = {}, query: catalogApi.ScorerPageQuery = {}, user?: User | null): catalogApi.ListScorersResponse {
    return catalogApi.listScorers(this, body, query, user);
  }

  getScorer(id: string, user?: User | null, actions: readonly catalogApi.ScorerAction[] = []): catalogApi.Scorer {
    return catalogApi.getScorer(this, id, user, actions);
  }

  /** Registers an llm or code scorer with its version 1. */
  createScorer(body: catalogApi.CreateScorerBody, user?: User | null): catalogApi.Scorer {
    this.#assertOpen();
    return catalogApi.createScorer(this, body, user);
  }

  /** Changes a registered scorer (rename, describe, scope, deprecate, pick the default version...). */
  updateScorer(id: string, body: catalogApi.UpdateScorerBody, user?: User | null): catalogApi.Scorer {
    this.#assertOpen();
    return catalogApi.updateScorer(this, id, body, user);
  }

  createScorerVersion(id: string, input: catalogApi.ScorerVersionInput = {}, user?: User | null): catalogApi.ScorerVersion {
    this.#assertOpen();
    return catalogApi.createScorerVersion(this, id, input, user);
  }

  listScorerVersions(id: string, user?: User | null): catalogApi.VersionRow[] {
    return catalogApi.scorerVersions(this, id, user);
  }

  deleteScorer(id: string, user?: User | null): void {
    this.#assertOpen();
    catalogApi.deleteScorer(this, id, user);
  }

  getRunScorerSettings(projectId: string, runId: string): catalogApi.RunScorerSettings {
    return catalogApi.getRunScorerSettings(this, projectId, runId);
  }

  /** Replaces the set of scorers enabled in a run. */
  setRunScorerSettings(projectId: string, runId: string, body: catalogApi.RunScorerSettingsBody): catalogApi.RunScorerSettings {
    this.#assertOpen();
    return catalogApi.setRunScorerSettings(this, projectId, runId, body);
  }

  /** The scorers enabled in a run, with their metric_name (for available columns). */
  enabledScorers(runId: string): catalogApi.Scorer[] {
    return this.catalog.enabledScorers(runId);
  }

  // ================================================================== end of catalog (issue 4)

  // ------------------------------------------------------------------ ingest

  /** Logs whole traces (the body the official client sends to POST /projects/{id}/traces). */
  async logTraces(projectId: string, body: LogTracesRequest): Promise<LogTracesResult> {
    this.#assertOpen();
    assertValid(LogTracesBody, body);
    const { project, run, field } = this.resolveRun(projectId, body);
    const ctx = { projectId: project.id, runId: run.id, receivedUs: nowUs(), ...(this.#maxSpans ? { maxSpans: this.#maxSpans } : {}) };
    const flat = flattenTraces(body, ctx);
    return this.#traceLock.run(
      flat.traces.map((t) => `${run.id}/${t.record.id}`),
      () => this.#logFlatTraces(project, run, field, body, flat),
    );
  }

  async #logFlatTraces(project: Project, run: Run, field: keyof RunIds, body: LogTracesRequest, flat: FlatTraces): Promise<LogTracesResult> {
    const sessionRows = await this.#sessionsFor(project.id, run.id, flat.traces, body.session_external_id ?? null);
    const settled = this.#provisional.size > 0 ? await this.#settleProvisional(project.id, run.id, flat.traces) : { rows: [], orphanSessions: [] };
    const rows: Draft[] = [...settled.rows, ...sessionRows];
    let firstSession: string | null = null;
    const sessionOfTrace = new Map<string, string>();
    for (const t of flat.traces) {
      const sid = t.record['session_id'] as string;
      firstSession ??= sid;
      sessionOfTrace.set(t.record.id, sid);
      rows.push(t.record);
    }
    for (const s of flat.spans) {
      s['session_id'] = sessionOfTrace.get(s['trace_id'] as string);
      if (this.#awaitedParents.size > 0 && this.#awaitedParents.delete(`${run.id}/${s.id}`)) s.has_children = true;
      rows.push(s);
      const next = (s['step_number'] as number) + 1;
      const tid = s['trace_id'] as string;
      if ((this.#nextStep.get(tid) ?? 0) < next) this.#rememberStep(tid, next);
    }
    await this.#write(project.id, run.id, rows, body.reliable !== false);
    for (const sid of settled.orphanSessions) await this.#dropUnusedSession(project.id, run.id, sid);
    return {
      project_id: project.id,
      project_name: project.name,
      records_count: flat.traces.length + flat.spans.length,
      traces_count: flat.traces.length,
      spans_count: flat.spans.length,
      session_id: body.session_id ?? (flat.traces.length === 1 ? firstSession : null),
      ...runEcho(field, run.id),
      trace_ids: flat.traces.map((t) => t.record.id),
    };
  }

  /** Logs spans under `parent_id` in trace `trace_id` (SPEC.md Log spans). Creates the trace if new. */
  async logSpans(projectId: string, body: LogSpansRequest): Promise<LogSpansResult> {
    this.#assertOpen();
    assertValid(LogSpansBody, body);
    const { project, run, field } = this.resolveRun(projectId, body);
    const traceId = body.trace_id.toLowerCase();
    return this.#traceLock.run([`${run.id}/${traceId}`], () => this.#logSpansLocked(project, run, field, body, traceId));
  }

  async #logSpansLocked(project: Project, run: Run, field: keyof RunIds, body: LogSpansRequest, traceId: string): Promise<LogSpansResult> {
    const parentId = body.parent_id.toLowerCase();
    const [trace, parent] = await this.#linkRows(project.id, run.id, traceId, parentId);
    if (trace && trace['type'] !== 'trace') {
      throw invalid(['body', 'trace_id'], `record ${traceId} is a ${String(trace['type'])} span, not a trace`, body.trace_id);
    }
    if (parentId !== traceId && !parent) {
      // Fire-and-forget clients (reliable: false) send spans concurrently: a child may overtake its
      // parent. It is kept, and the parent gets has_children when it arrives.
      if (body.reliable !== false) throw invalid(['body', 'parent_id'], `parent span ${parentId} was not found in trace ${traceId}`, body.parent_id);
    } else if (parentId !== traceId && parent) {
      if (parent['trace_id'] !== traceId) {
        throw invalid(['body', 'parent_id'], `parent span ${parentId} belongs to trace ${String(parent['trace_id'])}, not ${traceId}`, body.parent_id);
      }
      if (parent['type'] === 'llm' || parent['type'] === 'control') {
        throw invalid(['body', 'parent_id'], `a ${String(parent['type'])} span cannot have child spans`, body.parent_id);
      }
    }
    const receivedUs = nowUs();
    const firstStep = await this.#stepAfter(project.id, run.id, traceId, trace !== undefined);
    const spans = flattenSpans(body, { projectId: project.id, runId: run.id, receivedUs, ...(this.#maxSpans ? { maxSpans: this.#maxSpans } : {}) }, firstStep);
    const rows: Draft[] = [];
    let sessionId: string;
    if (trace) {
      sessionId = String(trace['session_id']);
      if (!trace['has_children']) rows.push(await this.#withChildren(project.id, run.id, traceId, receivedUs));
    } else {
      const created = Math.min(...spans.map((s) => s.created_at));
      const record = emptyRecord(traceId, 'trace', created);
      record.trace_id = traceId;
      record.has_children = true;
      const sessions = await this.#sessionsFor(project.id, run.id, [{ record, sessionId: body.session_id?.toLowerCase() ?? null }], null);
      rows.push(...sessions, record);
      sessionId = record['session_id'] as string;
      this.#provisional.set(`${run.id}/${traceId}`, { sessionId, updates: [] });
      if (this.#provisional.size > MAX_PENDING) this.#provisional.delete(this.#provisional.keys().next().value as string);
    }
    if (parent && parentId !== traceId && !parent['has_children']) rows.push(await this.#withChildren(project.id, run.id, parentId, receivedUs));
    for (const s of spans) {
      s['session_id'] = sessionId;
      if (this.#awaitedParents.size > 0 && this.#awaitedParents.delete(`${run.id}/${s.id}`)) s.has_children = true;
      rows.push(s);
    }
    this.#rememberStep(traceId, Math.max(firstStep, ...spans.map((s) => (s['step_number'] as number) + 1)));
    if (parentId !== traceId && !parent) {
      this.#awaitedParents.add(`${run.id}/${parentId}`);
      if (this.#awaitedParents.size > MAX_PENDING) this.#awaitedParents.delete(this.#awaitedParents.values().next().value as string);
    }
    await this.#write(project.id, run.id, rows, body.reliable !== false);
    return {
      project_id: project.id,
      project_name: project.name,
      records_count: spans.length,
      trace_id: traceId,
      parent_id: parentId,
      session_id: sessionId,
      ...runEcho(field, run.id),
    };
  }

  /**
   * Log traces for traces that Log spans had to create first (see #provisional): the logged trace
   * keeps its children (has_children) and the updates it got meanwhile (a conclusion that overtook
   * the trace), and when it names another session than the stand-in got, its spans already stored
   * move to that session and the stand-in's own implicit session is dropped (returned, to delete
   * after the write).
   */
  async #settleProvisional(projectId: string, runId: string, traces: readonly { record: Draft }[]): Promise<{ rows: Draft[]; orphanSessions: string[] }> {
    const rows: Draft[] = [];
    const orphanSessions: string[] = [];
    for (const { record } of traces) {
      const k = `${runId}/${record.id}`;
      const prov = this.#provisional.get(k);
      if (!prov) continue;
      this.#provisional.delete(k);
      record.has_children = true;
      for (const u of prov.updates) applyUpdate(record, u);
      const sid = record['session_id'] as string;
      if (sid === prov.sessionId) continue;
      const ids = (await this.#scan({ projectId, runId, kinds: ['span'] }, (src, p) => `SELECT id FROM ${src} WHERE trace_id = ${p}`, record.id)).map((r) => String(r['id']));
      const now = nowUs();
      for (const row of await this.#records.lookup(projectId, runId, ids)) rows.push({ ...(storedToWire(row) as unknown as Draft), session_id: sid, updated_at: now });
      if (prov.sessionId === implicitSessionId(projectId, runId, record.id)) orphanSessions.push(prov.sessionId);
    }
    return { rows, orphanSessions };
  }

  /** Deletes a session record that no trace or span refers to any more (a stand-in's implicit session). */
  async #dropUnusedSession(projectId: string, runId: string, sessionId: string): Promise<void> {
    const used = await this.#scan({ projectId, runId, kinds: ['trace', 'span'] }, (src, p) => `SELECT 1 FROM ${src} WHERE session_id = ${p} LIMIT 1`, sessionId);
    if (used.length > 0) return;
    const [row] = await this.#records.lookup(projectId, runId, [sessionId]);
    if (row && row['type'] === 'session') await this.#records.deleteSeqs([Number(row['seq'])]);
  }

  /** Trace and parent of a Log spans request, from the recent-records map when possible. */
  async #linkRows(projectId: string, runId: string, traceId: string, parentId: string): Promise<[Record<string, unknown> | undefined, Record<string, unknown> | undefined]> {
    const ids = parentId === traceId ? [traceId] : [traceId, parentId];
    const known = new Map<string, Record<string, unknown>>();
    const ask: string[] = [];
    for (const id of ids) {
      const e = this.#records.recent(runId, id);
      if (e) known.set(id, { id, ...e });
      else if (this.#records.mayExist(projectId, runId, id)) ask.push(id);
    }
    for (const r of await this.#records.lookup(projectId, runId, ask)) known.set(String(r['id']), r);
    return [known.get(traceId), known.get(parentId)];
  }

  /** A new version of a record with has_children set (its first child just arrived). */
  async #withChildren(projectId: string, runId: string, id: string, nowUs: number): Promise<Draft> {
    const [row] = await this.#records.lookup(projectId, runId, [id]);
    if (!row) throw new NotFoundError(`record ${id} vanished while logging its children`);
    return { ...(storedToWire(row) as unknown as Draft), has_children: true, updated_at: nowUs };
  }

  /** Creates a session explicitly (POST /projects/{id}/sessions); its run then reports user-created sessions. */
  async createSession(
    projectId: string,
    body: RunIds & { name?: string | null; previous_session_id?: string | null; external_id?: string | null; user_metadata?: Record<string, unknown> | null; id?: string | null },
  ): Promise<{ id: string; name: string | null; project_id: string; project_name: string; previous_session_id: string | null; external_id: string | null }> {
    this.#assertOpen();
    assertValid(CreateSessionBody, body);
    const { project, run } = this.resolveRun(projectId, body);
    const id = body.id?.toLowerCase() ?? newId();
    const now = nowUs();
    const session = emptyRecord(id, 'session', now);
    session.name = body.name ?? '';
    if (body.previous_session_id) session.previous_session_id = body.previous_session_id.toLowerCase();
    if (body.external_id) session.external_id = body.external_id;
    if (body.user_metadata) session.user_metadata = Object.fromEntries(Object.entries(body.user_metadata).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
    session.has_children = false;
    await this.#write(project.id, run.id, [session], true);
    this.catalog.markUserCreatedSession(run.id);
    return { id, name: body.name ?? null, project_id: project.id, project_name: project.name, previous_session_id: session.previous_session_id ?? null, external_id: session.external_id ?? null };
  }

  /**
   * Updates a logged trace or span (the PATCH routes of streaming clients): the fields given replace the
   * stored ones (`duration_ns` goes to metrics.duration_ns); a new version of the record is written.
   */
  async updateRecord(
    level: 'trace' | 'span',
    projectId: string,
    id: string,
    patch: RunIds & { input?: unknown; output?: unknown; tags?: string[] | null; status_code?: number | null; is_complete?: boolean | null; duration_ns?: number | null; reliable?: boolean | null },
  ): Promise<{ project_id: string; project_name: string; session_id: string; records_count: number; log_stream_id: string | null; experiment_id: string | null; metrics_testing_id: string | null }> {
    this.#assertOpen();
    assertValid(UpdateRecordBody, patch);
    const { project, run, field } = this.resolveRun(projectId, patch);
    const key = id.toLowerCase();
    const find = async () => {
      const [row] = await this.#records.lookup(project.id, run.id, [key]);
      if (!row || (level === 'trace' ? row['type'] !== 'trace' : row['type'] === 'trace' || row['type'] === 'session')) {
        throw new NotFoundError(`${level === 'trace' ? 'Trace' : 'Span'} ${id} not found`);
      }
      return row;
    };
    // Read, change and write under the lock of the record's trace (other requests may change it too).
    const traceId = level === 'trace' ? key : String((await find())['trace_id']);
    return this.#traceLock.run([`${run.id}/${traceId}`], async () => {
      const row = await find();
      const next = storedToWire(row) as unknown as Draft;
      applyUpdate(next, patch);
      next.updated_at = nowUs();
      if (level === 'trace') this.#provisional.get(`${run.id}/${key}`)?.updates.push(patch);
      await this.#write(project.id, run.id, [next], patch.reliable !== false);
      return { project_id: project.id, project_name: project.name, session_id: String(row['session_id']), records_count: 1, ...runEcho(field, run.id) };
    });
  }

  /** One record with its descendants nested (a trace's spans, a span's subtree, a session's traces). */
  async getRecord(level: Level, projectId: string, id: string): Promise<Record<string, unknown>> {
    this.#assertOpen();
    const project = this.catalog.project(projectId);
    const key = id.toLowerCase();
    const filter = (column: string, value = key) => ({ filters: [{ type: 'id', column_id: column, operator: 'eq', value }] });
    const found = await this.search(level, project.id, { ...filter('id'), limit: 1 });
    const record = found.records[0];
    if (!record) throw new NotFoundError(`${level} ${id} not found`);
    const runIds = { log_stream_id: String(record['run_id']) } as RunIds;
    const linkValue = level === 'span' ? String(record['trace_id']) : key;
    const all = async (lvl: Level, column: string) => {
      const out: Record<string, unknown>[] = [];
      for (let token: number | null = 0; token !== null; ) {
        const page = await this.search(lvl, project.id, { ...runScopeOf(this.catalog, project.id, runIds), ...filter(column, linkValue), starting_token: token, limit: 1000, sort: { column_id: 'created_at', ascending: true } });
        out.push(...page.records);
        token = page.next_starting_token;
      }
      return out;
    };
    if (level === 'session') {
      const traces = await all('trace', 'session_id');
      const spans = await all('span', 'session_id');
      return { ...record, traces: traces.map((t) => ({ ...t, spans: nest(spans.filter((s) => s['trace_id'] === t['id']), String(t['id'])) })) };
    }
    return { ...record, spans: nest(await all('span', 'trace_id'), key) };
  }

  /**
   * Session records for traces: a trace without a session gets its own implicit one (id derived from
   * the trace id, so retries match); a named session that does not exist yet is created.
   */
  async #sessionsFor(projectId: string, runId: string, traces: { record: Draft; sessionId: string | null }[], externalId: string | null): Promise<Draft[]> {
    let byExternal: string | null = null;
    if (externalId !== null) {
      byExternal = await this.#sessionByExternalId(projectId, runId, externalId);
    }
    const explicit = [...new Set(traces.map((t) => t.sessionId).filter((s): s is string => s !== null))];
    const existing = new Set<string>();
    const unsure: string[] = [];
    for (const id of explicit) {
      const recent = this.#records.recent(runId, id);
      if (recent?.type === 'session') existing.add(id);
      else if (!recent && this.#records.mayExist(projectId, runId, id)) unsure.push(id);
    }
    for (const r of await this.#records.lookup(projectId, runId, unsure)) if (r['type'] === 'session') existing.add(String(r['id']));
    const out = new Map<string, Draft>();
    for (const t of traces) {
      const explicitId = t.sessionId ?? byExternal;
      const sid = explicitId ?? implicitSessionId(projectId, runId, t.record.id);
      t.record['session_id'] = sid;
      if (existing.has(sid) || out.has(sid)) continue;
      const session = emptyRecord(sid, 'session', t.record.created_at);
      session.input = t.record.input ?? '';
      session.output = t.record.output ?? null;
      session.has_children = true;
      if (externalId !== null && explicitId === byExternal) session.external_id = externalId;
      out.set(sid, session);
    }
    return [...out.values()];
  }

  async #sessionByExternalId(projectId: string, runId: string, externalId: string): Promise<string> {
    const rows = await this.#scan({ projectId, runId, kinds: ['session'] }, (src, p) => `SELECT id FROM ${src} WHERE external_id = ${p} ORDER BY created_at LIMIT 1`, externalId);
    return rows.length > 0 ? String(rows[0]!['id']) : uuidFromHash('session-external', projectId, runId, externalId);
  }

  /** Rows of a query over a scope's live records (`src`), with one more parameter (`p`). */
  #scan(scope: Scope, sql: (src: string, p: string) => string, value: string): Promise<Record<string, unknown>[]> {
    return this.#records.read((snap) => {
      const src = snap.source(scope);
      return this.#db.all(sql(src.sql, `$${src.params.length + 1}`), [...src.params, value]);
    });
  }

  async #stepAfter(projectId: string, runId: string, traceId: string, exists: boolean): Promise<number> {
    if (!exists) return 1;
    const cached = this.#nextStep.get(traceId);
    if (cached !== undefined) return cached;
    const rows = await this.#scan({ projectId, runId, kinds: ['span'] }, (src, p) => `SELECT max(step_number) AS m FROM ${src} WHERE trace_id = ${p}`, traceId);
    const m = rows[0]?.['m'];
    return m === null || m === undefined ? 1 : Number(m) + 1;
  }

  #rememberStep(traceId: string, next: number): void {
    this.#nextStep.delete(traceId);
    this.#nextStep.set(traceId, next);
    if (this.#nextStep.size > 100_000) this.#nextStep.delete(this.#nextStep.keys().next().value as string);
  }

  async #write(projectId: string, runId: string, drafts: Draft[], reliable: boolean): Promise<void> {
    for (const d of drafts) {
      d.seq = 0; // assigned by RecordStore.append, in the order rows reach the log
      d.project_id = projectId;
      d.run_id = runId;
    }
    const rows = drafts as unknown as WireRow[];
    try {
      // Not reliable: no fsync to wait for, and a failure is only logged (SPEC.md, Log spans).
      await this.#records.append(rows, reliable);
    } catch (err) {
      if (reliable) throw err;
      process.emitWarning(`tracelake: unreliable ingest failed: ${(err as Error).message}`);
    }
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
    this.#assertOpen();
    assertValid(SearchBody, body);
    return this.#queries.search(level, this.resolveScope(projectId, body), body, false);
  }

  /** Records with only the selected columns (plus id, type and the links). */
  async partialSearch(level: Level, projectId: string, body: PartialSearchRequest = {}): Promise<SearchResult> {
    this.#assertOpen();
    assertValid(PartialSearchBody, body);
    return this.#queries.search(level, this.resolveScope(projectId, body), body, true);
  }

  async count(level: Level, projectId: string, body: FilterRequest = {}): Promise<{ total_count: number }> {
    this.#assertOpen();
    assertValid(FilterBody, body);
    return { total_count: await this.#queries.count(level, this.resolveScope(projectId, body), body) };
  }

  /**
   * Deletes matching records with all their descendants, durably. Refuses (422) a request with neither
   * a run id nor a filter, rather than wiping a project. A parent left without children keeps existing
   * with has_children false (a trace whose spans all went stays, as an empty trace).
   */
  async delete(level: Level, projectId: string, body: FilterRequest = {}): Promise<{ message: string; deleted: number }> {
    this.#assertOpen();
    assertValid(FilterBody, body);
    const scope = this.resolveScope(projectId, body);
    const hasFilter = (body.filters?.length ?? 0) > 0 || (body.filter_tree !== undefined && body.filter_tree !== null);
    if (scope.runId === undefined && !hasFilter) {
      throw invalid(['body'], 'refusing to delete every record of the project: give a run id (log_stream_id, experiment_id or metrics_testing_id) or a filter', undefined, 'missing');
    }
    const { deleted, childless } = await this.#queries.delete(level, scope, body);
    if (childless.length > 0 && scope.runId !== undefined) {
      const now = nowUs();
      const rows: Draft[] = [];
      for (const row of await this.#records.lookup(scope.projectId, scope.runId, childless)) {
        rows.push({ ...(storedToWire(row) as unknown as Draft), has_children: false, updated_at: now });
      }
      await this.#write(scope.projectId, scope.runId, rows, true);
    } else if (childless.length > 0) {
      for (const runId of new Set(this.catalog.runs(scope.projectId).map((r) => r.id))) {
        const found = await this.#records.lookup(scope.projectId, runId, childless);
        if (found.length === 0) continue;
        const now = nowUs();
        await this.#write(scope.projectId, runId, found.map((row) => ({ ...(storedToWire(row) as unknown as Draft), has_children: false, updated_at: now })), true);
      }
    }
    return { message: `Deleted ${deleted} record${deleted === 1 ? '' : 's'}`, deleted };
  }

  /** Columns of a run at a level: the standard columns and the metric columns its records carry. */
  async availableColumns(level: Level, projectId: string, body: RunIds = {}): Promise<{ columns: ColumnInfo[] }> {
    this.#assertOpen();
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
    this.#assertOpen();
    return this.#records.countScope(projectId, runId);
  }

  /**
   * Deletes a project (runId null) or run in steps that survive a crash at any point: an intent is
   * recorded, the catalog entry removed, the records dropped, the intent cleared. An intent found on
   * open is finished there (the deletion was not acknowledged, so finishing it is allowed).
   */
  async finishingDrop(projectId: string, runId: string | null, removeFromCatalog: () => void): Promise<void> {
    this.#assertOpen();
    const id = runId ?? projectId;
    this.catalog.put('pending_drops', { id, project_id: projectId, run_id: runId });
    removeFromCatalog();
    await this.#records.dropScope(projectId, runId ?? undefined);
    this.catalog.commit([{ op: 'del', table: 'pending_drops', id }]);
  }

  async #finishPendingDrops(): Promise<void> {
    for (const d of this.catalog.table<{ id: string; project_id: string; run_id: string | null }>('pending_drops')) {
      const stillListed = d.run_id === null ? this.catalog.get('projects', d.project_id) : this.catalog.get('runs', d.run_id);
      await this.finishingDrop(d.project_id, d.run_id, () => {
        if (stillListed) (d.run_id === null ? catalogApi.removeProjectEntries : catalogApi.removeRunEntries)(this, d.project_id, d.run_id ?? '');
      });
    }
  }

  /** Removes every record of a project, or of one run, durably (used when a project or run is deleted). */
  async dropRecords(projectId: string, runId?: string): Promise<number> {
    this.#assertOpen();
    return this.#records.dropScope(projectId, runId);
  }

  // ------------------------------------------------------------------ maintenance

  /** Merges small segments and purges deleted rows from disk now (it also runs by itself after seals). */
  async compact(): Promise<{ merges: number }> {
    this.#assertOpen();
    return { merges: await this.#records.compact() };
  }

  /** Seals the in-memory batch into Parquet now (it also happens by itself). */
  async flush(): Promise<void> {
    this.#assertOpen();
    await this.#records.seal();
  }

  get stats(): RecordStore['stats'] {
    return this.#records.stats;
  }
}

export function publicUser(u: User): { id: string; email: string; first_name: string; last_name: string; role: string; created_at: string } {
  return { id: u.id, email: u.email, first_name: u.first_name, last_name: u.last_name, role: u.role, created_at: u.created_at };
}

/**
 * Mutual exclusion per key: run(keys, fn) waits until none of its keys is held, then holds them all
 * while fn runs (taken at once, so two callers never wait on each other). Uncontended, it costs a few
 * map operations.
 */
class KeyedLock {
  readonly #held = new Map<string, Promise<void>>();

  async run<T>(keys: readonly string[], fn: () => Promise<T>): Promise<T> {
    for (;;) {
      const busy: Promise<void>[] = [];
      for (const k of keys) {
        const p = this.#held.get(k);
        if (p) busy.push(p);
      }
      if (busy.length === 0) break;
      await Promise.all(busy);
    }
    let release!: () => void;
    const done = new Promise<void>((r) => (release = r));
    for (const k of keys) this.#held.set(k, done);
    try {
      return await fn();
    } finally {
      for (const k of keys) if (this.#held.get(k) === done) this.#held.delete(k);
      release();
    }
  }
}

/** Most stand-in traces and awaited parents remembered at once (the oldest are forgotten first). */
const MAX_PENDING = 100_000;

interface RecordUpdate {
  input?: unknown;
  output?: unknown;
  tags?: string[] | null;
  status_code?: number | null;
  is_complete?: boolean | null;
  duration_ns?: number | null;
}

interface Provisional {
  /** The session the stand-in trace (and the spans logged under it) got. */
  sessionId: string;
  /** PATCHes the stand-in received, applied again when the trace itself arrives. */
  updates: RecordUpdate[];
}

/** The fields an update (PATCH) gives replace the record's; `duration_ns` goes to metrics.duration_ns. */
function applyUpdate(next: Draft, patch: RecordUpdate): void {
  if (patch.input !== undefined && patch.input !== null) next.input = patch.input;
  if (patch.output !== undefined && patch.output !== null) next.output = patch.output;
  if (patch.tags != null) next.tags = patch.tags;
  if (patch.status_code != null) next.status_code = patch.status_code;
  if (patch.is_complete != null) next.is_complete = patch.is_complete;
  if (patch.duration_ns != null) next.metrics = { ...(next.metrics ?? {}), duration_ns: patch.duration_ns };
}

/** Children of `parentId` among `spans`, each with its own children nested, in step order. */
function nest(spans: Record<string, unknown>[], parentId: string): Record<string, unknown>[] {
  const byParent = new Map<string, Record<string, unknown>[]>();
  for (const sp of spans) {
    const p = String(sp['parent_id']);
    const list = byParent.get(p) ?? [];
    list.push(sp);
    byParent.set(p, list);
  }
  const build = (pid: string, depth: number): Record<string, unknown>[] =>
    (byParent.get(pid) ?? [])
      .sort((a, b) => Number(a['step_number'] ?? 0) - Number(b['step_number'] ?? 0))
      .map((sp) => ({ ...sp, spans: depth > 256 ? [] : build(String(sp['id']), depth + 1) }));
  return build(parentId, 0);
}

/** The run ids of a record's run, as a request body would give them. */
function runScopeOf(catalog: Catalog, projectId: string, ids: RunIds): RunIds {
  const run = catalog.run(projectId, String(ids.log_stream_id));
  return run.kind === 'log_stream' ? { log_stream_id: run.id } : run.kind === 'experiment' ? { experiment_id: run.id } : { metrics_testing_id: run.id };
}

function runEcho(field: keyof RunIds, runId: string): { log_stream_id: string | null; experiment_id: string | null; metrics_testing_id: string | null } {
  return {
    log_stream_id: field === 'log_stream_id' ? runId : null,
    experiment_id: field === 'experiment_id' ? runId : null,
    metrics_testing_id: field === 'metrics_testing_id' ? runId : null,
  };
}

export { InvalidRequestError };
