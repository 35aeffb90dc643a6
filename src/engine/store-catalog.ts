// The catalog operations of TraceStore (projects, runs, roles, bookmarks, scorers, run scorer
// settings), kept out of trace-store.ts so the engine file stays about records. Each function takes
// the store; TraceStore's methods are one-line delegations. Lists answer in the wire shapes of the
// API, so the library and the server return the same thing. `user` is the caller (null: a library
// call by whoever opened the folder, allowed everything; see catalog/permissions.ts).
import type { Project, Run, User } from '../catalog/catalog.js';
import { membersOf, removeMember, roleOf, setMember, visibleProjectIds, type MemberView } from '../catalog/members.js';
import { ForbiddenError, NotFoundError } from '../errors.js';
import { can, projectPermissions, type Permission, type ProjectAction, type ProjectRole, type ScorerAction } from '../catalog/permissions.js';
import { listProjects as listV2, listProjectsV1 as listV1, type ProjectPageQuery, type ProjectPageQueryV1 } from '../catalog/project-list.js';
import { projectDbView, viewer, type ProjectDbView } from '../catalog/project-view.js';
import { removeProjectFromCatalog, removeRunFromCatalog, renameRun as renameRunInCatalog, setBookmark, updateProject as updateProjectInCatalog, type ProjectUpdate } from '../catalog/projects.js';
import { searchLogStreams as searchStreams } from '../catalog/run-list.js';
import { listScorers as listScorerRows, scorerVisible, type ScorerPageQuery } from '../catalog/scorer-list.js';
import type { ScorerRow, VersionRow } from '../catalog/scorer-row.js';
import { readRunScorerSettings, writeRunScorerSettings } from '../catalog/scorer-settings.js';
import type { LogStreamPage, LogStreamSearchBody } from '../schemas/log-streams.js';
import type { ProjectsBody, ProjectsBodyV1, ProjectsPage, ProjectsPageV1 } from '../schemas/projects.js';
import type { RunScorerSettings, RunScorerSettingsBody } from '../schemas/scorer-settings.js';
import type { CreateScorerBody, ListScorersBody, ListScorersResponse, Scorer, ScorerVersion, ScorerVersionInput, UpdateScorerBody } from '../schemas/scorers.js';
import type { StoreBase } from './users.js';

type U = User | null | undefined;
const who = (user: U): User | null => user ?? null;

// ------------------------------------------------------------------ projects

export function projectView(store: StoreBase, project: Project, user: U, actions: readonly ProjectAction[] = []): ProjectDbView {
  return projectDbView(store.catalog, project, viewer(store.catalog, who(user), actions));
}

export function updateProject(store: StoreBase, projectId: string, update: ProjectUpdate, user: U): Project {
  return updateProjectInCatalog(store.catalog, projectId, update, who(user));
}

export function bookmarkProject(store: StoreBase, projectId: string, on: boolean, user: U): void {
  setBookmark(store.catalog, projectId, who(user), on);
}

/** Drops every record of the project (durably), then the project and all it holds in the catalog. */
export async function deleteProject(store: StoreBase, projectId: string): Promise<{ records_deleted: number }> {
  const project = store.catalog.project(projectId);
  const removed = await store.countAllRecords(project.id);
  await store.finishingDrop(project.id, null, () => removeProjectFromCatalog(store.catalog, project.id));
  return { records_deleted: removed };
}

/** Catalog side of deleting a project or a run (for a deletion finished on open). */
export function removeProjectEntries(store: StoreBase, projectId: string): void {
  removeProjectFromCatalog(store.catalog, projectId);
}

export function removeRunEntries(store: StoreBase, projectId: string, runId: string): void {
  removeRunFromCatalog(store.catalog, projectId, runId);
}

export function listProjects(store: StoreBase, body: ProjectsBody, query: ProjectPageQuery, user: U): ProjectsPage {
  return listV2(store.catalog, body, query, who(user));
}

export function listProjectsV1(store: StoreBase, body: ProjectsBodyV1, query: ProjectPageQueryV1, user: U): ProjectsPageV1 {
  return listV1(store.catalog, body, query, who(user));
}

// ------------------------------------------------------------------ roles

export function addMember(store: StoreBase, projectId: string, userId: string, role: ProjectRole): MemberView {
  return setMember(store.catalog, projectId, userId, role);
}

export function dropMember(store: StoreBase, projectId: string, userId: string): void {
  removeMember(store.catalog, projectId, userId);
}

export function members(store: StoreBase, projectId: string): MemberView[] {
  return membersOf(store.catalog, projectId);
}

export function role(store: StoreBase, projectId: string, userId: string): ProjectRole | null {
  return roleOf(store.catalog, store.catalog.project(projectId).id, userId.toLowerCase());
}

export function permissions(store: StoreBase, projectId: string, user: U, actions: readonly ProjectAction[]): Permission[] {
  const project = store.catalog.project(projectId);
  return projectPermissions(who(user), actions, { project, role: roleOf(store.catalog, project.id, user?.id) });
}

/** Throws ForbiddenError (403, with the reason) unless the caller may perform the action. */
export function authorize(store: StoreBase, projectId: string, action: ProjectAction, user: U): void {
  const project = store.catalog.project(projectId);
  const p = can(who(user), action, { kind: 'project', project, role: roleOf(store.catalog, project.id, user?.id) });
  if (!p.allowed) throw new ForbiddenError(p.message ?? `${action} is not allowed`);
}

// ------------------------------------------------------------------ runs

export function renameRun(store: StoreBase, projectId: string, runId: string, name: string): Run {
  return renameRunInCatalog(store.catalog, projectId, runId, name);
}

export async function deleteRun(store: StoreBase, projectId: string, runId: string): Promise<{ records_deleted: number }> {
  const run = store.catalog.run(store.catalog.project(projectId).id, runId);
  const removed = await store.countAllRecords(run.project_id, run.id);
  await store.finishingDrop(run.project_id, run.id, () => removeRunFromCatalog(store.catalog, run.project_id, run.id));
  return { records_deleted: removed };
}

export async function searchLogStreams(store: StoreBase, projectId: string, body: LogStreamSearchBody): Promise<LogStreamPage> {
  const page = searchStreams(store.catalog, projectId, body);
  const withCounts = body.include_counts === true;
  for (const s of page.log_streams) {
    if (withCounts) {
      s.num_spans = (await store.count('span', s.project_id, { log_stream_id: s.id })).total_count;
      s.num_traces = (await store.count('trace', s.project_id, { log_stream_id: s.id })).total_count;
    } else {
      s.num_spans = null;
      s.num_traces = null;
    }
  }
  return page;
}

// ------------------------------------------------------------------ scorers

export function listScorers(store: StoreBase, body: ListScorersBody, query: ScorerPageQuery, user: U): ListScorersResponse {
  return listScorerRows(store.catalog, body, query, who(user));
}

/** A scorer the caller can see; one scoped only to projects they cannot see is "not found". */
function visibleScorer(store: StoreBase, id: string, user: U): ScorerRow {
  const row = store.catalog.scorers.get(id);
  if (!scorerVisible(row, visibleProjectIds(store.catalog, who(user)), who(user))) throw new NotFoundError(`Scorer ${id} not found`);
  return row;
}

/** 403 (with the reason) unless the caller may do this to the scorer. */
function authorizeScorer(row: ScorerRow, action: ScorerAction, user: U): void {
  const p = can(who(user), action, { kind: 'scorer', scorer: row });
  if (!p.allowed) throw new ForbiddenError(p.message ?? `${action} is not allowed`);
}

export function getScorer(store: StoreBase, id: string, user: U, actions: readonly ScorerAction[] = []): Scorer {
  return store.catalog.scorers.present(visibleScorer(store, id, user), who(user), actions);
}

export function createScorer(store: StoreBase, body: CreateScorerBody, user: U): Scorer {
  // Scoping a scorer to a project needs a role there (the project must be visible to the caller).
  const visible = visibleProjectIds(store.catalog, who(user));
  for (const pid of (body as { scope_projects?: { id: string }[] | null }).scope_projects?.map((p) => p.id) ?? []) {
    if (visible !== null && !visible.has(pid.toLowerCase())) throw new NotFoundError(`Project ${pid} not found`);
  }
  const row = store.catalog.scorers.create(body, user?.id ?? null);
  return store.catalog.scorers.present(row, who(user));
}

export function updateScorer(store: StoreBase, id: string, body: UpdateScorerBody, user: U): Scorer {
  authorizeScorer(visibleScorer(store, id, user), 'update', user);
  return store.catalog.scorers.present(store.catalog.scorers.update(id, body), who(user));
}

export function createScorerVersion(store: StoreBase, id: string, input: ScorerVersionInput, user: U): ScorerVersion {
  authorizeScorer(visibleScorer(store, id, user), 'update', user);
  const { code: _code, ...version } = store.catalog.scorers.addVersion(id, input, user?.id ?? null);
  return version;
}

export function scorerVersions(store: StoreBase, id: string, user: U = null): VersionRow[] {
  visibleScorer(store, id, user);
  return store.catalog.scorers.versions(id);
}

export function deleteScorer(store: StoreBase, id: string, user: U = null): void {
  authorizeScorer(visibleScorer(store, id, user), 'delete', user);
  store.catalog.scorers.delete(id);
}

export function getRunScorerSettings(store: StoreBase, projectId: string, runId: string): RunScorerSettings {
  return readRunScorerSettings(store.catalog, projectId, runId);
}

export function setRunScorerSettings(store: StoreBase, projectId: string, runId: string, body: RunScorerSettingsBody): RunScorerSettings {
  return writeRunScorerSettings(store.catalog, projectId, runId, body);
}

// The types TraceStore's catalog methods take and return, from one place.
export type { MemberView, Permission, ProjectDbView as ProjectView, ProjectsPage, ProjectsPageV1, LogStreamPage, ListScorersResponse, Scorer, ScorerVersion, VersionRow, RunScorerSettings };
export type { ProjectAction, ProjectRole, ScorerAction, ProjectPageQuery, ProjectPageQueryV1, ProjectUpdate, ScorerPageQuery };
export type { LogStreamSearchBody, ProjectsBody, ProjectsBodyV1, RunScorerSettingsBody, CreateScorerBody, ListScorersBody, ScorerVersionInput, UpdateScorerBody };
