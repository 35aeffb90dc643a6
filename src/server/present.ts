// Catalog objects as the API shows them, for the calling user (bookmark, permissions). The shapes
// are built in src/catalog so the library returns the same objects.
import type { Static } from '../vendor/typebox.js';
import type { Project, Run, User } from '../catalog/catalog.js';
import type { ProjectAction } from '../catalog/permissions.js';
import type { TraceStore } from '../engine/trace-store.js';
import type { LogStream, ProjectDb } from '../schemas/catalog.js';

export function projectDb(
  store: TraceStore,
  p: Project,
  user: User | null,
  actions: readonly ProjectAction[] = [],
): Static<typeof ProjectDb> {
  return store.catalog.describeProject(p, user, actions);
}

export function runItem(store: TraceStore, r: Run): Static<typeof LogStream> {
  return store.catalog.describeRun(r);
}

/** preValidation hook of the list routes: a missing (or null) body means no filters and the default sort. */
export async function emptyBodyIsEmptyObject(req: { body: unknown }): Promise<void> {
  if (req.body === undefined || req.body === null) req.body = {};
}
