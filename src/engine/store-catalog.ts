// store.catalog: projects, runs (log streams, experiments, metrics-testing runs), roles, bookmarks,
// scorers and the scorers enabled in a run. The rules and tables live in src/catalog; this part is the
// library's typed door to them, answering in the API's wire shapes so the library and the server
// return the same objects. `user` is the caller: omitted or null means a library call by whoever
// opened the folder, allowed everything (see catalog/permissions.ts).
import type { Catalog, Project, Run, RunKind, User } from '../catalog/catalog.js';
import { membersOf, removeMember, roleOf, setMember, visibleProjectIds, type MemberView } from '../catalog/members.js';
import {
  can,
  projectPermissions,
  type Permission,
  type ProjectAction,
  type ProjectRole,
  type ScorerAction,
} from '../catalog/permissions.js';
import { listProjects, listProjectsV1, type ProjectPageQuery, type ProjectPageQueryV1 } from '../catalog/project-list.js';
import { projectDbView, runView, viewer, type ProjectDbView } from '../catalog/project-view.js';
import {
  removeProjectFromCatalog,
  removeRunFromCatalog,
  renameRun,
  setBookmark,
  updateProject,
  type ProjectUpdate,
} from '../catalog/projects.js';
import { searchLogStreams } from '../catalog/run-list.js';
import { listScorers, scorerVisible, type ScorerPageQuery } from '../catalog/scorer-list.js';
import type { ScorerRow, VersionRow } from '../catalog/scorer-row.js';
import { readRunScorerSettings, writeRunScorerSettings } from '../catalog/scorer-settings.js';
import { ForbiddenError, NotFoundError } from '../errors.js';
import type { Level } from '../query/columns.js';
import type { LogStream } from '../schemas/catalog.js';
import type { LogStreamPage, LogStreamSearchBody } from '../schemas/log-streams.js';
import type { ProjectsBody, ProjectsBodyV1, ProjectsPage, ProjectsPageV1 } from '../schemas/projects.js';
import type { FilterRequest } from '../schemas/query.js';
import type { RunScorerSettings, RunScorerSettingsBody } from '../schemas/scorer-settings.js';
import type {
  CreateScorerBody,
  ListScorersBody,
  ListScorersResponse,
  Scorer,
  ScorerVersion,
  ScorerVersionInput,
  UpdateScorerBody,
} from '../schemas/scorers.js';
import type { Static } from '../vendor/typebox.js';
import type { OpenGuard } from './open-guard.js';

/** What the catalog part needs beyond the catalog: the records a deletion removes, and counts. */
export interface CatalogHost {
  readonly guard: OpenGuard;
  readonly catalog: Catalog;
  /** Live records of a project or run, every kind (what deleting it removes). */
  countRecords(projectId: string, runId?: string): Promise<number>;
  /** Deletes a project (runId null) or run with its records, so that a crash at any point is finished on the next open. */
  drop(projectId: string, runId: string | null, removeFromCatalog: () => void): Promise<void>;
  /** Matching records at a level (a log stream search shows counts). */
  count(level: Level, projectId: string, body: FilterRequest): Promise<{ total_count: number }>;
  /** The highest record seq so far (a scorer enabled now scores the records written after it). */
  lastSeq?(): number;
}

type Caller = User | null | undefined;
const who = (user: Caller): User | null => user ?? null;

export class StoreCatalog {
  readonly #host: CatalogHost;
  readonly #catalog: Catalog;

  constructor(host: CatalogHost) {
    this.#host = host;
    this.#catalog = host.catalog;
  }

  #assertOpen(): void {
    this.#host.guard.assertOpen();
  }

  // ------------------------------------------------------------------ projects

  createProject(input: { name: string; type?: string; description?: string | null; labels?: string[] }, user?: Caller): Project {
    this.#assertOpen();
    return this.#catalog.createProject(input, user?.id ?? null);
  }

  getProject(id: string): Project {
    return this.#catalog.project(id);
  }

  /** Projects (visible to `user`, when given) whose name equals `name`; an empty list when none does. */
  findProjects(query: { name?: string } = {}, user?: Caller): Project[] {
    const visible = visibleProjectIds(this.#catalog, user);
    const all = visible === null ? this.#catalog.projects() : this.#catalog.projects().filter((p) => visible.has(p.id));
    return query.name === undefined ? all : all.filter((p) => p.name === query.name);
  }

  /** A project as GET /projects/{id} shows it, with the caller's bookmark and permissions. */
  describeProject(project: Project | string, user?: Caller, actions: readonly ProjectAction[] = []): ProjectDbView {
    const p = typeof project === 'string' ? this.#catalog.project(project) : project;
    return projectDbView(this.#catalog, p, viewer(this.#catalog, who(user), actions));
  }

  /** Renames and/or changes description, labels and (the caller's) bookmark. */
  updateProject(projectId: string, update: ProjectUpdate, user?: Caller): Project {
    this.#assertOpen();
    return updateProject(this.#catalog, projectId, update, who(user));
  }

  renameProject(projectId: string, name: string, user?: Caller): Project {
    return this.updateProject(projectId, { name }, user);
  }

  bookmarkProject(projectId: string, bookmarked: boolean, user?: Caller): void {
    this.#assertOpen();
    setBookmark(this.#catalog, projectId, who(user), bookmarked);
  }

  /** Deletes a project with every run, record, role, bookmark and scorer setting in it. */
  async deleteProject(projectId: string): Promise<{ records_deleted: number }> {
    this.#assertOpen();
    const project = this.#catalog.project(projectId);
    const removed = await this.#host.countRecords(project.id);
    await this.#host.drop(project.id, null, () => removeProjectFromCatalog(this.#catalog, project.id));
    return { records_deleted: removed };
  }

  /** POST /v2/projects/paginated. */
  listProjects(body: ProjectsBody = {}, query: ProjectPageQuery = {}, user?: Caller): ProjectsPage {
    return listProjects(this.#catalog, body, query, who(user));
  }

  /** The older bare POST /projects/paginated (v1 shape). */
  listProjectsV1(body: ProjectsBodyV1 = {}, query: ProjectPageQueryV1 = {}, user?: Caller): ProjectsPageV1 {
    return listProjectsV1(this.#catalog, body, query, who(user));
  }

  // ------------------------------------------------------------------ roles

  /** Gives a user a role in a project (or changes it). */
  addProjectMember(projectId: string, userId: string, role: ProjectRole): MemberView {
    this.#assertOpen();
    return setMember(this.#catalog, projectId, userId, role);
  }

  removeProjectMember(projectId: string, userId: string): void {
    this.#assertOpen();
    removeMember(this.#catalog, projectId, userId);
  }

  listProjectMembers(projectId: string): MemberView[] {
    return membersOf(this.#catalog, projectId);
  }

  projectRole(projectId: string, userId: string): ProjectRole | null {
    return roleOf(this.#catalog, this.#catalog.project(projectId).id, userId.toLowerCase());
  }

  projectPermissions(projectId: string, user: User | null, actions: readonly ProjectAction[]): Permission[] {
    const project = this.#catalog.project(projectId);
    return projectPermissions(who(user), actions, { project, role: roleOf(this.#catalog, project.id, user?.id) });
  }

  /** Throws ForbiddenError (403, with the reason) unless `user` may perform `action` in the project. */
  authorize(projectId: string, action: ProjectAction, user: User | null): void {
    const project = this.#catalog.project(projectId);
    const p = can(who(user), action, { kind: 'project', project, role: roleOf(this.#catalog, project.id, user?.id) });
    if (!p.allowed) throw new ForbiddenError(p.message ?? `${action} is not allowed`);
  }

  // ------------------------------------------------------------------ runs

  createRun(projectId: string, kind: RunKind, name: string, user?: Caller): Run {
    this.#assertOpen();
    return this.#catalog.createRun(projectId, kind, name, user?.id ?? null);
  }

  createLogStream(projectId: string, name: string, user?: Caller): Run {
    return this.createRun(projectId, 'log_stream', name, user);
  }

  createExperiment(projectId: string, name: string, user?: Caller): Run {
    return this.createRun(projectId, 'experiment', name, user);
  }

  createMetricsTestingRun(projectId: string, name: string, user?: Caller): Run {
    return this.createRun(projectId, 'metrics_testing', name, user);
  }

  listRuns(projectId: string, kind?: RunKind): Run[] {
    this.#catalog.project(projectId);
    return this.#catalog.runs(projectId, kind);
  }

  getRun(projectId: string, runId: string): Run {
    return this.#catalog.run(this.#catalog.project(projectId).id, runId);
  }

  /** A run as the API shows it (GET .../log_streams/{id} and the lists). */
  describeRun(run: Run): Static<typeof LogStream> {
    return runView(this.#catalog, run);
  }

  renameRun(projectId: string, runId: string, name: string): Run {
    this.#assertOpen();
    return renameRun(this.#catalog, projectId, runId, name);
  }

  /** Deletes a run (log stream, experiment or metrics-testing run) with its records. */
  async deleteRun(projectId: string, runId: string): Promise<{ records_deleted: number }> {
    this.#assertOpen();
    const run = this.#catalog.run(this.#catalog.project(projectId).id, runId);
    const removed = await this.#host.countRecords(run.project_id, run.id);
    await this.#host.drop(run.project_id, run.id, () => removeRunFromCatalog(this.#catalog, run.project_id, run.id));
    return { records_deleted: removed };
  }

  /** POST /projects/{id}/log_streams/search. */
  async searchLogStreams(projectId: string, body: LogStreamSearchBody = {}): Promise<LogStreamPage> {
    this.#assertOpen();
    const page = searchLogStreams(this.#catalog, projectId, body);
    const withCounts = body.include_counts === true;
    for (const s of page.log_streams) {
      if (withCounts) {
        s.num_spans = (await this.#host.count('span', s.project_id, { log_stream_id: s.id })).total_count;
        s.num_traces = (await this.#host.count('trace', s.project_id, { log_stream_id: s.id })).total_count;
      } else {
        s.num_spans = null;
        s.num_traces = null;
      }
    }
    return page;
  }

  // ------------------------------------------------------------------ scorers

  /** POST /v2/scorers/list. */
  listScorers(body: ListScorersBody = {}, query: ScorerPageQuery = {}, user?: Caller): ListScorersResponse {
    return listScorers(this.#catalog, body, query, who(user));
  }

  getScorer(id: string, user?: Caller, actions: readonly ScorerAction[] = []): Scorer {
    return this.#catalog.scorers.present(this.#visibleScorer(id, user), who(user), actions);
  }

  /** Registers an llm or code scorer with its version 1. */
  createScorer(body: CreateScorerBody, user?: Caller): Scorer {
    this.#assertOpen();
    // Scoping a scorer to a project needs a role there (the project must be visible to the caller).
    const visible = visibleProjectIds(this.#catalog, who(user));
    for (const pid of (body as { scope_projects?: { id: string }[] | null }).scope_projects?.map((p) => p.id) ?? []) {
      if (visible !== null && !visible.has(pid.toLowerCase())) throw new NotFoundError(`Project ${pid} not found`);
    }
    const row = this.#catalog.scorers.create(body, user?.id ?? null);
    return this.#catalog.scorers.present(row, who(user));
  }

  /** Changes a registered scorer (rename, describe, scope, deprecate, pick the default version...). */
  updateScorer(id: string, body: UpdateScorerBody, user?: Caller): Scorer {
    this.#assertOpen();
    authorizeScorer(this.#visibleScorer(id, user), 'update', user);
    return this.#catalog.scorers.present(this.#catalog.scorers.update(id, body), who(user));
  }

  createScorerVersion(id: string, input: ScorerVersionInput = {}, user?: Caller): ScorerVersion {
    this.#assertOpen();
    authorizeScorer(this.#visibleScorer(id, user), 'update', user);
    const { code: _code, ...version } = this.#catalog.scorers.addVersion(id, input, user?.id ?? null);
    return version;
  }

  listScorerVersions(id: string, user?: Caller): VersionRow[] {
    this.#visibleScorer(id, user);
    return this.#catalog.scorers.versions(id);
  }

  deleteScorer(id: string, user?: Caller): void {
    this.#assertOpen();
    authorizeScorer(this.#visibleScorer(id, user), 'delete', user);
    this.#catalog.scorers.delete(id);
  }

  getRunScorerSettings(projectId: string, runId: string): RunScorerSettings {
    return readRunScorerSettings(this.#catalog, projectId, runId);
  }

  /** Replaces the set of scorers enabled in a run. */
  setRunScorerSettings(projectId: string, runId: string, body: RunScorerSettingsBody): RunScorerSettings {
    this.#assertOpen();
    return writeRunScorerSettings(this.#catalog, projectId, runId, body, this.#host.lastSeq?.() ?? 0);
  }

  /** The scorers enabled in a run, with their metric_name (for available columns). */
  enabledScorers(runId: string): Scorer[] {
    return this.#catalog.enabledScorers(runId);
  }

  /** A scorer the caller can see; one scoped only to projects they cannot see is "not found". */
  #visibleScorer(id: string, user: Caller): ScorerRow {
    const row = this.#catalog.scorers.get(id);
    if (!scorerVisible(row, visibleProjectIds(this.#catalog, who(user)), who(user))) throw new NotFoundError(`Scorer ${id} not found`);
    return row;
  }
}

/** 403 (with the reason) unless the caller may do this to the scorer. */
function authorizeScorer(row: ScorerRow, action: ScorerAction, user: Caller): void {
  const p = can(who(user), action, { kind: 'scorer', scorer: row });
  if (!p.allowed) throw new ForbiddenError(p.message ?? `${action} is not allowed`);
}

// The types the catalog part takes and return, from one place.
export type {
  MemberView,
  Permission,
  ProjectDbView as ProjectView,
  ProjectsPage,
  ProjectsPageV1,
  LogStreamPage,
  ListScorersResponse,
  Scorer,
  ScorerVersion,
  VersionRow,
  RunScorerSettings,
};
export type { ProjectAction, ProjectRole, ScorerAction, ProjectPageQuery, ProjectPageQueryV1, ProjectUpdate, ScorerPageQuery };
export type {
  LogStreamSearchBody,
  ProjectsBody,
  ProjectsBodyV1,
  RunScorerSettingsBody,
  CreateScorerBody,
  ListScorersBody,
  ScorerVersionInput,
  UpdateScorerBody,
};
