// Projects and runs as the API shows them, for a given caller: their bookmark, and the
// permissions for the actions they asked about. Shared by the library and every route.
import type { Static } from '../vendor/typebox.js';
import type { LogStream, ProjectDb } from '../schemas/catalog.js';
import type { Catalog, Project, Run, User } from './catalog.js';
import { bookmarksOf } from './projects.js';
import { projectPermissions, type ProjectAction, type ProjectRole } from './permissions.js';
import { rolesOf } from './members.js';

export type ProjectDbView = Static<typeof ProjectDb>;
export type RunView = Static<typeof LogStream>;

/** What a list needs to know about its caller, computed once per request. */
export interface Viewer {
  user: User | null;
  actions: readonly ProjectAction[];
  roles: Map<string, ProjectRole>;
  bookmarks: Set<string>;
}

export function viewer(catalog: Catalog, user: User | null, actions: readonly ProjectAction[] = []): Viewer {
  return { user, actions, roles: rolesOf(catalog, user?.id), bookmarks: bookmarksOf(catalog, user) };
}

export function permissionsFor(p: Project, v: Viewer): ProjectDbView['permissions'] {
  return projectPermissions(v.user, v.actions, { project: p, role: v.roles.get(p.id) ?? null });
}

export function runView(catalog: Catalog, r: Run): RunView {
  return {
    id: r.id,
    name: r.name,
    project_id: r.project_id,
    created_at: r.created_at,
    updated_at: r.updated_at,
    created_by: r.created_by,
    created_by_user: catalog.userSummary(r.created_by),
    has_user_created_sessions: r.has_user_created_sessions,
  };
}

/** ProjectDB: GET/POST /projects and the v1 list. `runs` lists every run of the project. */
export function projectDbView(catalog: Catalog, p: Project, v: Viewer, runs: Run[] = catalog.runs(p.id)): ProjectDbView {
  return {
    id: p.id,
    name: p.name,
    type: p.type,
    created_by: p.created_by,
    created_by_user: catalog.userSummary(p.created_by),
    created_at: p.created_at,
    updated_at: p.updated_at,
    bookmark: v.bookmarks.has(p.id),
    description: p.description,
    labels: p.labels,
    permissions: permissionsFor(p, v),
    runs: runs.map((r) => ({
      id: r.id,
      name: r.name,
      project_id: r.project_id,
      kind: r.kind,
      created_at: r.created_at,
      updated_at: r.updated_at,
      created_by: r.created_by,
    })),
  };
}
