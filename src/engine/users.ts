// The catalog side of TraceStore: users, API keys and tokens, projects and runs, roles, bookmarks,
// scorers and run scorer settings. TraceStore extends it with records (logging, queries, storage);
// the catalog operations themselves live in src/catalog and catalog-api.ts, these are the library's
// typed entry points.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Catalog, ApiKey, Project, Run, RunKind, User } from '../catalog/catalog.js';
import { visibleProjectIds } from '../catalog/members.js';
import { fingerprint, newApiKey, verifySecret } from '../catalog/secrets.js';
import type { TokenSigner } from '../server/auth/tokens.js';
import { ConflictError, invalidFields, NotFoundError, UnauthorizedError } from '../errors.js';
import type { FilterRequest } from '../schemas/query.js';
import type { Level } from '../query/columns.js';
import { writeFileAtomic } from '../storage/fs-util.js';
import * as catalogApi from './store-catalog.js';
import type { RunIds } from './records/ingest.js';

export const RUN_ID_FIELDS: readonly [keyof RunIds, RunKind][] = [
  ['log_stream_id', 'log_stream'],
  ['experiment_id', 'experiment'],
  ['metrics_testing_id', 'metrics_testing'],
];

export abstract class StoreBase {
  readonly dir: string;
  readonly catalog: Catalog;
  readonly #tokens: TokenSigner;
  readonly #verifiedPasswords = new Map<string, string>();
  protected closed = false;

  protected constructor(dir: string, catalog: Catalog, tokens: TokenSigner) {
    this.dir = dir;
    this.catalog = catalog;
    this.#tokens = tokens;
  }

  protected assertOpen(): void {
    if (this.closed) throw new ConflictError('STORE_CLOSED', 'the trace store is closed');
  }

  /** Matching records at a level (catalog operations show counts). */
  abstract count(level: Level, projectId: string, body?: FilterRequest): Promise<{ total_count: number }>;
  /** Live records of a project or run, every kind. */
  abstract countAllRecords(projectId: string, runId?: string): Promise<number>;
  /** Deletes a project or run so that a crash at any point is finished on the next open. */
  abstract finishingDrop(projectId: string, runId: string | null, removeFromCatalog: () => void): Promise<void>;

  // ------------------------------------------------------------------ users, keys and tokens

  createUser(input: { email: string; first_name?: string; last_name?: string; role?: 'admin' | 'user'; password?: string }): User {
    this.assertOpen();
    return this.catalog.createUser(input);
  }

  /** A new API key for a user: the clear key is returned here once and stored only as a hash. */
  createApiKey(userId: string, description = ''): { key: string; id: string } {
    this.assertOpen();
    const { key, record } = this.catalog.createApiKey(userId, description);
    return { key, id: record.id };
  }

  revokeApiKey(id: string): void {
    this.assertOpen();
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
    this.assertOpen();
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
    // The file first, then the commit: a crash between them leaves a file with a key that is not live
    // (replaced on the next start), never a live key whose clear text exists nowhere.
    const key = newApiKey();
    writeFileAtomic(file, `${key}\n`, 0o600);
    this.catalog.createApiKey(admin.id, 'generated on first start', key);
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
    this.assertOpen();
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
    this.assertOpen();
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
      throw invalidFields(loc, RUN_ID_FIELDS.map(([f]) => f), 'one of log_stream_id, experiment_id or metrics_testing_id is required', 'missing');
    }
    if (given.length > 1) {
      throw invalidFields(loc, given.map(([f]) => f), `give only one of log_stream_id, experiment_id, metrics_testing_id (got ${given.map(([f]) => f).join(', ')})`);
    }
    const [field, kind] = given[0]!;
    const run = this.catalog.run(project.id, String(ids[field]));
    if (run.kind !== kind) throw new NotFoundError(`${field} ${run.id} is not a ${kind.replace('_', ' ')}`);
    return { project, run, field };
  }

  // ------------------------------------------------------------------ catalog
  // Projects, runs, roles, bookmarks, scorers and run scorer settings; implemented in catalog-api.ts.
  // `user` is the caller; omitted or null means a library call with every right.

  /** A project as GET /projects/{id} shows it, with the caller's bookmark and permissions. */
  describeProject(project: Project | string, user?: User | null, actions: readonly catalogApi.ProjectAction[] = []): catalogApi.ProjectView {
    return catalogApi.projectView(this, typeof project === 'string' ? this.catalog.project(project) : project, user, actions);
  }

  /** Renames and/or changes description, labels and (the caller's) bookmark. */
  updateProject(projectId: string, update: catalogApi.ProjectUpdate, user?: User | null): Project {
    this.assertOpen();
    return catalogApi.updateProject(this, projectId, update, user);
  }

  renameProject(projectId: string, name: string, user?: User | null): Project {
    return this.updateProject(projectId, { name }, user);
  }

  bookmarkProject(projectId: string, bookmarked: boolean, user?: User | null): void {
    this.assertOpen();
    catalogApi.bookmarkProject(this, projectId, bookmarked, user);
  }

  /** Deletes a project with every run, record, role, bookmark and scorer setting in it. */
  deleteProject(projectId: string): Promise<{ records_deleted: number }> {
    this.assertOpen();
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
    this.assertOpen();
    return catalogApi.addMember(this, projectId, userId, role);
  }

  removeProjectMember(projectId: string, userId: string): void {
    this.assertOpen();
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
    this.assertOpen();
    return catalogApi.renameRun(this, projectId, runId, name);
  }

  /** Deletes a run (log stream, experiment or metrics-testing run) with its records. */
  deleteRun(projectId: string, runId: string): Promise<{ records_deleted: number }> {
    this.assertOpen();
    return catalogApi.deleteRun(this, projectId, runId);
  }

  /** POST /projects/{id}/log_streams/search. */
  searchLogStreams(projectId: string, body: catalogApi.LogStreamSearchBody = {}): Promise<catalogApi.LogStreamPage> {
    this.assertOpen();
    return catalogApi.searchLogStreams(this, projectId, body);
  }

  /** Sets has_user_created_sessions on a log stream (called when a session is created explicitly). */
  markUserCreatedSession(runId: string): void {
    this.assertOpen();
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
    this.assertOpen();
    return catalogApi.createScorer(this, body, user);
  }

  /** Changes a registered scorer (rename, describe, scope, deprecate, pick the default version...). */
  updateScorer(id: string, body: catalogApi.UpdateScorerBody, user?: User | null): catalogApi.Scorer {
    this.assertOpen();
    return catalogApi.updateScorer(this, id, body, user);
  }

  createScorerVersion(id: string, input: catalogApi.ScorerVersionInput = {}, user?: User | null): catalogApi.ScorerVersion {
    this.assertOpen();
    return catalogApi.createScorerVersion(this, id, input, user);
  }

  listScorerVersions(id: string, user?: User | null): catalogApi.VersionRow[] {
    return catalogApi.scorerVersions(this, id, user);
  }

  deleteScorer(id: string, user?: User | null): void {
    this.assertOpen();
    catalogApi.deleteScorer(this, id, user);
  }

  getRunScorerSettings(projectId: string, runId: string): catalogApi.RunScorerSettings {
    return catalogApi.getRunScorerSettings(this, projectId, runId);
  }

  /** Replaces the set of scorers enabled in a run. */
  setRunScorerSettings(projectId: string, runId: string, body: catalogApi.RunScorerSettingsBody): catalogApi.RunScorerSettings {
    this.assertOpen();
    return catalogApi.setRunScorerSettings(this, projectId, runId, body);
  }

  /** The scorers enabled in a run, with their metric_name (for available columns). */
  enabledScorers(runId: string): catalogApi.Scorer[] {
    return this.catalog.enabledScorers(runId);
  }
}

export function publicUser(u: User): { id: string; email: string; first_name: string; last_name: string; role: string; created_at: string } {
  return { id: u.id, email: u.email, first_name: u.first_name, last_name: u.last_name, role: u.role, created_at: u.created_at };
}
