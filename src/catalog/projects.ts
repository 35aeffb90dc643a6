// Changing and removing projects, and bookmarks. A bookmark belongs to a user, as in the hosted
// service: each user stars the projects they care about, and `bookmark` in a project item says
// whether the caller did. Library calls without a user bookmark as the local user "local".
// Deleting a project removes, in one durable catalog write, the project, its runs, their scorer
// settings, its roles and bookmarks, and its place in scorer scopes (records are dropped first by
// the engine).
import { ConflictError, invalid } from '../errors.js';
import type { Catalog, Project, Run, User } from './catalog.js';
import type { CatalogChange } from './catalog-log.js';
import { memberChangesForDeletedProject } from './members.js';

export interface ProjectUpdate {
  name?: string;
  description?: string | null;
  labels?: string[] | null;
  bookmark?: boolean;
}

interface Bookmark {
  id: string;
  project_id: string;
  user_id: string;
}

export const bookmarkOwner = (user: User | null | undefined): string => user?.id ?? 'local';

export function updateProject(catalog: Catalog, projectId: string, update: ProjectUpdate, user: User | null): Project {
  const old = catalog.project(projectId);
  const next: Project = { ...old };
  if (update.name !== undefined) {
    const name = update.name.trim();
    if (name === '') throw invalid(['body', 'name'], 'String should have at least 1 character', update.name, 'string_too_short');
    const holder = catalog.projectByName(name);
    if (holder && holder.id !== old.id) throw new ConflictError('ALREADY_EXISTS', `A project named "${name}" already exists`);
    next.name = name;
  }
  if (update.description !== undefined) next.description = update.description;
  if (update.labels !== undefined) next.labels = update.labels ?? [];
  const changed =
    next.name !== old.name || next.description !== old.description || JSON.stringify(next.labels) !== JSON.stringify(old.labels);
  if (changed) {
    next.updated_at = new Date().toISOString();
    catalog.put('projects', next);
  }
  if (update.bookmark !== undefined) setBookmark(catalog, old.id, user, update.bookmark);
  return next;
}

export function setBookmark(catalog: Catalog, projectId: string, user: User | null, on: boolean): void {
  const project = catalog.project(projectId);
  const owner = bookmarkOwner(user);
  const id = `${project.id}:${owner}`;
  const has = catalog.get<Bookmark>('bookmarks', id) !== undefined;
  if (on && !has) catalog.put('bookmarks', { id, project_id: project.id, user_id: owner });
  if (!on && has) catalog.commit([{ op: 'del', table: 'bookmarks', id }]);
}

/** Ids of the projects a user bookmarked. */
export function bookmarksOf(catalog: Catalog, user: User | null): Set<string> {
  const owner = bookmarkOwner(user);
  const out = new Set<string>();
  for (const b of catalog.table<Bookmark>('bookmarks')) if (b.user_id === owner) out.add(b.project_id);
  return out;
}

export function isBookmarked(catalog: Catalog, projectId: string, user: User | null): boolean {
  return catalog.get<Bookmark>('bookmarks', `${projectId}:${bookmarkOwner(user)}`) !== undefined;
}

/** Removes a project and everything the catalog holds for it, in one write. */
export function removeProjectFromCatalog(catalog: Catalog, projectId: string): void {
  const project = catalog.project(projectId);
  const changes: CatalogChange[] = [{ op: 'del', table: 'projects', id: project.id }];
  for (const r of catalog.runs(project.id)) changes.push(...runRemoval(catalog, r));
  changes.push(...memberChangesForDeletedProject(catalog, project.id));
  for (const b of catalog.table<Bookmark>('bookmarks'))
    if (b.project_id === project.id) changes.push({ op: 'del', table: 'bookmarks', id: b.id });
  changes.push(...catalog.scorers.changesForDeletedProject(project.id));
  catalog.commit(changes);
}

export function renameRun(catalog: Catalog, projectId: string, runId: string, name: string): Run {
  const run = catalog.run(catalog.project(projectId).id, runId);
  const trimmed = name.trim();
  if (trimmed === '') throw invalid(['body', 'name'], 'String should have at least 1 character', name, 'string_too_short');
  if (trimmed === run.name) return run;
  if (catalog.runs(run.project_id, run.kind).some((r) => r.name === trimmed && r.id !== run.id)) {
    throw new ConflictError('ALREADY_EXISTS', `A ${run.kind.replace('_', ' ')} named "${trimmed}" already exists in this project`);
  }
  const next: Run = { ...run, name: trimmed, updated_at: new Date().toISOString() };
  catalog.put('runs', next);
  return next;
}

export function removeRunFromCatalog(catalog: Catalog, projectId: string, runId: string): void {
  const run = catalog.run(catalog.project(projectId).id, runId);
  catalog.commit(runRemoval(catalog, run));
}

function runRemoval(catalog: Catalog, run: Run): CatalogChange[] {
  const changes: CatalogChange[] = [{ op: 'del', table: 'runs', id: run.id }];
  if (catalog.get('run_scorer_settings', run.id)) changes.push({ op: 'del', table: 'run_scorer_settings', id: run.id });
  return changes;
}
