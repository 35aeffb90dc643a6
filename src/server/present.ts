// Catalog objects as the API shows them.
import type { Project, Run } from '../catalog/catalog.js';
import type { Static } from 'typebox';
import type { TraceStore } from '../engine/trace-store.js';
import type { LogStream, ProjectDb } from '../schemas/catalog.js';

export function projectDb(store: TraceStore, p: Project): Static<typeof ProjectDb> {
  return {
    id: p.id,
    name: p.name,
    type: p.type,
    created_by: p.created_by,
    created_by_user: store.catalog.userSummary(p.created_by),
    created_at: p.created_at,
    updated_at: p.updated_at,
    bookmark: p.bookmark,
    description: p.description,
    labels: p.labels,
    permissions: [],
    runs: [],
  };
}

export function runItem(store: TraceStore, r: Run): Static<typeof LogStream> {
  return {
    id: r.id,
    name: r.name,
    project_id: r.project_id,
    created_at: r.created_at,
    updated_at: r.updated_at,
    created_by: r.created_by,
    created_by_user: store.catalog.userSummary(r.created_by),
    has_user_created_sessions: r.has_user_created_sessions,
  };
}
