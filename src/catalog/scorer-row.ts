// How a scorer is held in memory (one row per scorer, versions in their own table) and how a row
// becomes the API's Scorer item. Scope projects are kept as ids and named at presentation,
// so renaming a project shows up everywhere at once; versions are looked up by id.
import type { Scorer, ScorerVersion } from '../schemas/scorers.js';

/** A scorer as stored: the Scorer item without the parts computed per request. */
export type ScorerRow = Omit<Scorer, 'permissions' | 'latest_version' | 'default_version' | 'scope_projects' | 'created_by_user'> & {
  scope_project_ids: string[];
  latest_version_id: string | null;
};

/** A version as stored; `code` (code scorers) is shown only by the versions route. */
export type VersionRow = ScorerVersion & { code?: string | null };

export interface ScorerViewContext {
  version(id: string | null): ScorerVersion | null;
  projectName(id: string): string | null;
  userSummary(id: string | null): { id: string; email: string; first_name: string; last_name: string } | null;
}

export function versionView(v: VersionRow | ScorerVersion | null | undefined): ScorerVersion | null {
  if (!v) return null;
  const { code: _code, ...rest } = v as VersionRow;
  return rest;
}

export function scorerView(row: ScorerRow, ctx: ScorerViewContext, permissions: Scorer['permissions'] = []): Scorer {
  const { scope_project_ids, latest_version_id, ...fields } = row;
  const scope: Scorer['scope_projects'] = [];
  for (const id of scope_project_ids) {
    const name = ctx.projectName(id);
    if (name !== null) scope.push({ id, name });
  }
  return {
    ...fields,
    permissions,
    scope_projects: scope,
    created_by_user: ctx.userSummary(row.created_by),
    latest_version: versionView(ctx.version(latest_version_id)),
    default_version: versionView(ctx.version(row.default_version_id)),
  };
}
