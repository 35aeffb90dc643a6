// Project roles: the catalog table `project_members`, one row per (project, user) with id
// "<project id>:<user id>". The creator of a project becomes its owner (Catalog.createProject).
// A project may be left without an owner; admins can always manage it.
import { invalid, NotFoundError } from '../errors.js';
import { putChange, type CatalogChange } from './catalog-log.js';
import type { User } from './rows.js';
import type { CatalogTables } from './tables.js';
import { PROJECT_ROLES, type ProjectRole } from './permissions.js';

export interface Member {
  id: string;
  project_id: string;
  user_id: string;
  role: ProjectRole;
  created_at: string;
}

export interface MemberView {
  user_id: string;
  email: string;
  first_name: string;
  last_name: string;
  role: ProjectRole;
  created_at: string;
}

const memberId = (projectId: string, userId: string): string => `${projectId}:${userId}`;

export function memberChange(projectId: string, userId: string, role: ProjectRole, createdAt: string): CatalogChange {
  const value: Member = { id: memberId(projectId, userId), project_id: projectId, user_id: userId, role, created_at: createdAt };
  return putChange('project_members', value);
}

export function roleOf(catalog: CatalogTables, projectId: string, userId: string | null | undefined): ProjectRole | null {
  if (!userId) return null;
  return catalog.get<Member>('project_members', memberId(projectId, userId))?.role ?? null;
}

/** project id -> role, for one user: one pass over the table, for lists. */
export function rolesOf(catalog: CatalogTables, userId: string | null | undefined): Map<string, ProjectRole> {
  const out = new Map<string, ProjectRole>();
  if (!userId) return out;
  for (const m of catalog.table<Member>('project_members')) if (m.user_id === userId) out.set(m.project_id, m.role);
  return out;
}

/** Gives a user a role in a project, or changes it. */
export function setMember(catalog: CatalogTables, projectId: string, userId: string, role: ProjectRole): MemberView {
  const project = catalog.project(projectId);
  const user = catalog.get<User>('users', userId.toLowerCase());
  if (!user) throw new NotFoundError(`user ${userId} not found`);
  if (!(PROJECT_ROLES as readonly string[]).includes(role)) {
    throw invalid(['body', 'role'], `Input should be one of ${PROJECT_ROLES.map((r) => `'${r}'`).join(', ')}`, role, 'enum');
  }
  const existing = catalog.get<Member>('project_members', memberId(project.id, user.id));
  catalog.commit([memberChange(project.id, user.id, role, existing?.created_at ?? new Date().toISOString())]);
  return view(catalog, {
    id: memberId(project.id, user.id),
    project_id: project.id,
    user_id: user.id,
    role,
    created_at: existing?.created_at ?? new Date().toISOString(),
  })!;
}

export function removeMember(catalog: CatalogTables, projectId: string, userId: string): void {
  const project = catalog.project(projectId);
  const id = memberId(project.id, userId.toLowerCase());
  if (!catalog.get<Member>('project_members', id)) throw new NotFoundError(`user ${userId} has no role in project ${project.id}`);
  catalog.commit([{ op: 'del', table: 'project_members', id }]);
}

export function membersOf(catalog: CatalogTables, projectId: string): MemberView[] {
  const project = catalog.project(projectId);
  return catalog
    .table<Member>('project_members')
    .filter((m) => m.project_id === project.id)
    .flatMap((m) => view(catalog, m) ?? [])
    .sort((a, b) => a.email.localeCompare(b.email));
}

/** Changes that remove every role in a project (when it is deleted). */
export function memberChangesForDeletedProject(catalog: CatalogTables, projectId: string): CatalogChange[] {
  return catalog
    .table<Member>('project_members')
    .filter((m) => m.project_id === projectId)
    .map((m) => ({ op: 'del', table: 'project_members', id: m.id }));
}

function view(catalog: CatalogTables, m: Member): MemberView | undefined {
  const u = catalog.userSummary(m.user_id);
  return u
    ? { user_id: u.id, email: u.email, first_name: u.first_name, last_name: u.last_name, role: m.role, created_at: m.created_at }
    : undefined;
}

/**
 * Project ids a caller may see at all: null means every project (admins and library calls without a
 * user); anyone else sees only projects where they hold a role. Lists filter by this; routes on one
 * project answer 404 outside it, exactly as for a project that does not exist.
 */
export function visibleProjectIds(catalog: CatalogTables, user: User | null | undefined): Set<string> | null {
  if (!user || user.role === 'admin') return null;
  return new Set(rolesOf(catalog, user.id).keys());
}
