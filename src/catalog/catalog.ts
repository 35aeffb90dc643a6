// Users, API keys, projects and runs (log streams, experiments, metrics-testing runs). In memory,
// persisted change by change through CatalogLog. Names are unique per project (runs) and per store
// (projects), compared exactly as given. Roles, bookmarks, scorers and run scorer settings live in
// their own tables, handled by members.ts, projects.ts, scorers.ts and scorer-settings.ts.
import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError, UnauthorizedError, invalid } from '../errors.js';
import { CatalogLog, apply, putChange, type CatalogChange, type CatalogRow, type Tables } from './catalog-log.js';
import { fingerprint, hashSecret, keyPrefix, newApiKey, verifySecret, verifySecretOffThread } from './secrets.js';
import type { ApiKey, Project, Run, RunKind, User } from './rows.js';
import type { Scorer } from '../schemas/scorers.js';
import { memberChange } from './members.js';
import { enabledScorerItems } from './scorer-settings.js';
import { ScorerCatalog } from './scorers.js';
import type { CatalogTables } from './tables.js';

export { PROJECT_TYPES, RUN_KINDS, type ApiKey, type Project, type Run, type RunKind, type User } from './rows.js';

export class Catalog implements CatalogTables {
  readonly #tables: Tables = new Map();
  readonly #log: CatalogLog;
  /** fingerprint(key) -> key id, for keys verified in this process. */
  readonly #verified = new Map<string, string>();
  /** Built-in presets and registered scorers. */
  readonly scorers: ScorerCatalog;

  /** A read-only catalog that takes the writer's changes before every read of a table. */
  readonly #follow: boolean;

  private constructor(dir: string, readOnly: boolean, follow: boolean) {
    this.#log = readOnly ? CatalogLog.openReadOnly(dir, this.#tables) : CatalogLog.open(dir, this.#tables);
    this.#follow = follow;
    this.scorers = new ScorerCatalog(this);
  }

  static open(dir: string): Catalog {
    return new Catalog(dir, false, false);
  }

  /**
   * The catalog as the folder's writer (another process) has it on disk; commits are refused.
   * `refresh` reads it again, and with `follow` every read of a table does (two stat calls when
   * nothing changed).
   */
  static openReadOnly(dir: string, options: { follow?: boolean } = {}): Catalog {
    return new Catalog(dir, true, options.follow === true);
  }

  /** A read-only catalog: takes the writer's changes since the last load, if any (nothing for the writer's own). */
  refresh(): void {
    if (this.#log.reload(this.#tables)) {
      this.#verified.clear();
      this.#version++;
    }
  }

  close(): void {
    this.#log.close();
  }

  // ------------------------------------------------------------ generic table access

  table<T>(name: string): T[] {
    if (this.#follow) this.refresh();
    return [...(this.#tables.get(name)?.values() ?? [])] as T[];
  }

  get<T>(name: string, id: string): T | undefined {
    if (this.#follow) this.refresh();
    return this.#tables.get(name)?.get(id) as T | undefined;
  }

  /** Applies and durably records changes, all or nothing (one write, one fsync). */
  commit(changes: readonly CatalogChange[]): void {
    this.#log.write(this.#tables, changes);
    for (const c of changes) apply(this.#tables, c);
    this.#version++;
  }

  #version = 0;
  /** Bumped by every change: lets derived indexes (e.g. metric descriptions) know they are stale. */
  get version(): number {
    return this.#version;
  }

  put<T extends CatalogRow>(table: string, value: T): void {
    this.commit([putChange(table, value)]);
  }

  // ------------------------------------------------------------ users and keys

  createUser(input: { email: string; first_name?: string; last_name?: string; role?: 'admin' | 'user'; password?: string }): User {
    const email = input.email.trim().toLowerCase();
    if (this.table<User>('users').some((u) => u.email === email))
      throw new ConflictError('ALREADY_EXISTS', `a user with email ${email} exists`);
    const user: User = {
      id: randomUUID(),
      email,
      first_name: input.first_name ?? '',
      last_name: input.last_name ?? '',
      role: input.role ?? 'user',
      created_at: new Date().toISOString(),
    };
    if (input.password) user.password = hashSecret(input.password);
    this.put('users', user);
    return user;
  }

  /** Creates a key for a user; the clear key is returned once and never stored. */
  createApiKey(userId: string, description = '', key: string = newApiKey()): { key: string; record: ApiKey } {
    if (!this.get<User>('users', userId)) throw new NotFoundError(`user ${userId} not found`);
    const record: ApiKey = {
      id: randomUUID(),
      user_id: userId,
      prefix: keyPrefix(key),
      secret: hashSecret(key),
      description,
      created_at: new Date().toISOString(),
      revoked_at: null,
    };
    this.put('api_keys', record);
    // This process just hashed it: its first request need not pay the slow hash again.
    this.#verified.set(fingerprint(key), record.id);
    return { key, record };
  }

  revokeApiKey(id: string): void {
    const k = this.get<ApiKey>('api_keys', id);
    if (!k) throw new NotFoundError(`API key ${id} not found`);
    this.put('api_keys', { ...k, revoked_at: new Date().toISOString() });
    for (const [fp, keyId] of this.#verified) if (keyId === id) this.#verified.delete(fp);
  }

  /** The user an API key belongs to; throws UnauthorizedError for unknown or revoked keys. */
  authenticateKey(key: string): User {
    return this.authenticateKeyWithId(key).user;
  }

  /** As authenticateKey, with the key's record id (bearer tokens remember it, so revoking a key ends them too). */
  authenticateKeyWithId(key: string): { user: User; keyId: string } {
    const fp = fingerprint(key);
    let keyId = this.#verified.get(fp);
    if (keyId === undefined) {
      const match = this.#keysLike(key).find((k) => verifySecret(key, k.secret));
      if (!match) throw new UnauthorizedError('Invalid API key');
      keyId = match.id;
      this.#verified.set(fp, keyId);
    }
    return this.#keyUser(keyId);
  }

  /** authenticateKeyWithId with the slow hash off the event loop (the server's requests). */
  async authenticateKeyWithIdOffThread(key: string): Promise<{ user: User; keyId: string }> {
    const fp = fingerprint(key);
    let keyId = this.#verified.get(fp);
    if (keyId === undefined) {
      for (const k of this.#keysLike(key))
        if (await verifySecretOffThread(key, k.secret)) {
          keyId = k.id;
          break;
        }
      if (keyId === undefined) throw new UnauthorizedError('Invalid API key');
      this.#verified.set(fp, keyId);
    }
    // Read after the wait: a key revoked meanwhile is refused.
    return this.#keyUser(keyId);
  }

  /** Live keys with the key's stored prefix (the only ones it can be). */
  #keysLike(key: string): ApiKey[] {
    const prefix = keyPrefix(key);
    return this.table<ApiKey>('api_keys').filter((k) => k.prefix === prefix && k.revoked_at === null);
  }

  #keyUser(keyId: string): { user: User; keyId: string } {
    const record = this.get<ApiKey>('api_keys', keyId);
    const user = record && record.revoked_at === null ? this.get<User>('users', record.user_id) : undefined;
    if (!user) throw new UnauthorizedError('Invalid API key');
    return { user, keyId };
  }

  /** Is this key record still valid (exists, not revoked)? */
  keyIsLive(keyId: string): boolean {
    const k = this.get<ApiKey>('api_keys', keyId);
    return k !== undefined && k.revoked_at === null;
  }

  /** Does any stored (unrevoked) key match? Used at start-up to adopt TRACELAKE_API_KEY (a match is then known verified). */
  async hasKey(key: string): Promise<boolean> {
    try {
      await this.authenticateKeyWithIdOffThread(key);
      return true;
    } catch (err) {
      if (err instanceof UnauthorizedError) return false;
      throw err;
    }
  }

  // ------------------------------------------------------------ projects

  projects(): Project[] {
    return this.table<Project>('projects');
  }

  project(id: string): Project {
    const p = this.get<Project>('projects', id.toLowerCase());
    if (!p) throw new NotFoundError(`Project ${id} not found`);
    return p;
  }

  projectByName(name: string): Project | undefined {
    return this.projects().find((p) => p.name === name);
  }

  createProject(input: { name: string; type?: string; description?: string | null; labels?: string[] }, userId: string | null): Project {
    const name = input.name.trim();
    if (name === '') throw invalid(['body', 'name'], 'String should have at least 1 character', input.name, 'string_too_short');
    if (this.projectByName(name)) throw new ConflictError('ALREADY_EXISTS', `A project named "${name}" already exists`);
    const now = new Date().toISOString();
    const project: Project = {
      id: randomUUID(),
      name,
      type: input.type ?? 'gen_ai',
      created_at: now,
      updated_at: now,
      created_by: userId,
      description: input.description ?? null,
      labels: input.labels ?? [],
    };
    // The creator becomes the project's owner, in the same durable write.
    const changes: CatalogChange[] = [{ op: 'put', table: 'projects', value: project }];
    if (userId !== null) changes.push(memberChange(project.id, userId, 'owner', now));
    this.commit(changes);
    return project;
  }

  // ------------------------------------------------------------ runs

  runs(projectId: string, kind?: RunKind): Run[] {
    return this.table<Run>('runs').filter((r) => r.project_id === projectId && (kind === undefined || r.kind === kind));
  }

  run(projectId: string, runId: string): Run {
    const r = this.get<Run>('runs', runId.toLowerCase());
    if (!r || r.project_id !== projectId) throw new NotFoundError(`Run ${runId} not found in project ${projectId}`);
    return r;
  }

  createRun(projectId: string, kind: RunKind, name: string, userId: string | null): Run {
    this.project(projectId);
    const trimmed = name.trim();
    if (trimmed === '') throw invalid(['body', 'name'], 'String should have at least 1 character', name, 'string_too_short');
    if (this.runs(projectId, kind).some((r) => r.name === trimmed)) {
      throw new ConflictError('ALREADY_EXISTS', `A ${kind.replace('_', ' ')} named "${trimmed}" already exists in this project`);
    }
    const now = new Date().toISOString();
    const run: Run = {
      id: randomUUID(),
      project_id: projectId,
      kind,
      name: trimmed,
      created_at: now,
      updated_at: now,
      created_by: userId,
      has_user_created_sessions: false,
    };
    this.put('runs', run);
    return run;
  }

  /**
   * Marks a log stream as holding a session created explicitly (POST .../sessions); its
   * `has_user_created_sessions` stays true from then on. Called by the sessions endpoint.
   */
  markUserCreatedSession(runId: string): void {
    const r = this.get<Run>('runs', runId.toLowerCase());
    if (!r) throw new NotFoundError(`Run ${runId} not found`);
    if (!r.has_user_created_sessions) this.put('runs', { ...r, has_user_created_sessions: true });
  }

  /**
   * The scorers enabled in a run (its scorer settings), as Scorer items with their metric_name,
   * output_type and roll_up_method: the query engine lists their metric columns for the run.
   */
  enabledScorers(runId: string): Scorer[] {
    return enabledScorerItems(this, runId);
  }

  userSummary(id: string | null): { id: string; email: string; first_name: string; last_name: string } | null {
    const u = id ? this.get<User>('users', id) : undefined;
    return u ? { id: u.id, email: u.email, first_name: u.first_name, last_name: u.last_name } : null;
  }
}

export { newApiKey };
