// Who may do what: project roles, the global admin role, and the one `can()` that turns a caller,
// an action and a resource into {allowed, message}. Every `permissions` array the API shows comes
// from here, and the server's enforcement (server/access.ts) calls the same function, so what is
// reported and what is enforced cannot drift apart.
//
// Roles nest: owner > editor > annotator > viewer. Each project action needs a minimum role:
// deleting and sharing (managing members) need owner, recording human feedback needs annotator,
// every other action changes the project or its data and needs editor. A viewer only reads.
// Admins (users.role === 'admin') and library calls without a user (whoever opened the folder) may
// do everything. Scorers: built-in presets are read-only for everybody; a registered scorer may be
// changed, shared or deleted by its creator or an admin; anyone may export a scorer's definition;
// autotune applies only to llm scorers.
import type { User } from './rows.js';
import { PROJECT_ACTION_VALUES } from '../schemas/projects.js';

export const PROJECT_ROLES = ['owner', 'editor', 'annotator', 'viewer'] as const;
export type ProjectRole = (typeof PROJECT_ROLES)[number];

// One list of project actions: the request schemas' (what a role may be granted is what a request may name).
export const PROJECT_ACTIONS = PROJECT_ACTION_VALUES;
export type ProjectAction = (typeof PROJECT_ACTIONS)[number];

export const SCORER_ACTIONS = ['update', 'delete', 'share', 'export', 'autotune_apply'] as const;
export type ScorerAction = (typeof SCORER_ACTIONS)[number];

const RANK: Record<ProjectRole, number> = { owner: 3, editor: 2, annotator: 1, viewer: 0 };

/** The least role that may perform each project action (see the header for the reasoning). */
export const MIN_ROLE: Record<ProjectAction, ProjectRole> = Object.fromEntries(
  PROJECT_ACTIONS.map((a) => [a, a === 'delete' || a === 'share' ? 'owner' : a === 'record_human_feedback' ? 'annotator' : 'editor']),
) as Record<ProjectAction, ProjectRole>;

export interface Permission {
  action: string;
  allowed: boolean;
  message: string | null;
}

export interface ProjectTarget {
  kind: 'project';
  project: { id: string; name: string };
  /** The caller's role in the project, or null when they have none. */
  role: ProjectRole | null;
}

export interface ScorerTarget {
  kind: 'scorer';
  scorer: { name: string; scorer_type: string; created_by: string | null };
}

/** True for callers allowed everything: admins, and library calls made without a user. */
export function isSuperuser(user: User | null): boolean {
  return user === null || user.role === 'admin';
}

export function can(user: User | null, action: ProjectAction, target: ProjectTarget): Permission;
export function can(user: User | null, action: ScorerAction, target: ScorerTarget): Permission;
export function can(user: User | null, action: ProjectAction | ScorerAction, target: ProjectTarget | ScorerTarget): Permission {
  return target.kind === 'project'
    ? canOnProject(user, action as ProjectAction, target)
    : canOnScorer(user, action as ScorerAction, target);
}

function canOnProject(user: User | null, action: ProjectAction, { project, role }: ProjectTarget): Permission {
  if (isSuperuser(user)) return allow(action);
  const needed = MIN_ROLE[action];
  if (role === null) return deny(action, `you have no role in project "${project.name}"; ${action} needs the ${needed} role`);
  if (RANK[role] >= RANK[needed]) return allow(action);
  return deny(action, `${action} needs the ${needed} role in project "${project.name}"; you are ${article(role)} ${role}`);
}

function canOnScorer(user: User | null, action: ScorerAction, { scorer }: ScorerTarget): Permission {
  if (action === 'export') return allow(action);
  if (scorer.scorer_type === 'preset') return deny(action, `"${scorer.name}" is a built-in preset scorer and is read-only`);
  if (action === 'autotune_apply' && scorer.scorer_type !== 'llm')
    return deny(action, `autotune applies only to llm scorers; "${scorer.name}" is a ${scorer.scorer_type} scorer`);
  if (isSuperuser(user) || (scorer.created_by !== null && scorer.created_by === user?.id)) return allow(action);
  return deny(
    action,
    `only the creator of "${scorer.name}" or an admin may ${action === 'autotune_apply' ? 'apply autotune to' : action} it`,
  );
}

/** The `permissions` array for the actions a client asked for, in the order asked, without repeats. */
export function projectPermissions(
  user: User | null,
  actions: readonly ProjectAction[],
  target: Omit<ProjectTarget, 'kind'>,
): Permission[] {
  return unique(actions).map((a) => can(user, a, { kind: 'project', ...target }));
}

export function scorerPermissions(user: User | null, actions: readonly ScorerAction[], scorer: ScorerTarget['scorer']): Permission[] {
  return unique(actions).map((a) => can(user, a, { kind: 'scorer', scorer }));
}

function unique<T>(xs: readonly T[]): T[] {
  return [...new Set(xs)];
}

function allow(action: string): Permission {
  return { action, allowed: true, message: null };
}

function deny(action: string, message: string): Permission {
  return { action, allowed: false, message };
}

function article(word: string): string {
  return /^[aeiou]/.test(word) ? 'an' : 'a';
}
