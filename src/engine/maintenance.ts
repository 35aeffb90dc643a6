// The upkeep operations of TraceStore (crash-safe drops of a project or run, compaction, retention settings, memory report), kept out of trace-store.ts so it stays about logging and queries; TraceStore's methods delegate here.
import type { Database } from '../db/database.js';
import type { RecordStore } from '../storage/record-store.js';
import * as catalogApi from './store-catalog.js';
import type { RunIds } from './records/ingest.js';
import { purgeExpired, Retention, type RetentionSetting } from './data/retention.js';
import type { StoreBase } from './users.js';
import type { TraceStore } from './trace-store.js';

// ------------------------------------------------------------------ drops

export async function finishingDrop(store: StoreBase, records: RecordStore, projectId: string, runId: string | null, removeFromCatalog: () => void): Promise<void> {
  const id = runId ?? projectId;
  store.catalog.put('pending_drops', { id, project_id: projectId, run_id: runId });
  removeFromCatalog();
  await records.dropScope(projectId, runId ?? undefined);
  store.catalog.commit([{ op: 'del', table: 'pending_drops', id }]);
}

export async function finishPendingDrops(store: StoreBase): Promise<void> {
  for (const d of store.catalog.table<{ id: string; project_id: string; run_id: string | null }>('pending_drops')) {
    const stillListed = d.run_id === null ? store.catalog.get('projects', d.project_id) : store.catalog.get('runs', d.run_id);
    await store.finishingDrop(d.project_id, d.run_id, () => {
      if (stillListed) (d.run_id === null ? catalogApi.removeProjectEntries : catalogApi.removeRunEntries)(store, d.project_id, d.run_id ?? '');
    });
  }
}

// ------------------------------------------------------------------ compaction

export async function compact(store: StoreBase, records: RecordStore, db: Database): Promise<{ merges: number; expired: number }> {
  const expired = await purgeExpired(records, db, store.catalog.projects().map((p) => p.id));
  // Merges purge only tombstones the manifest holds (one only in the log may precede a durable
  // replacement): sealing first brings the expiry's tombstones there.
  if (expired > 0) await records.seal();
  return { merges: await records.compact(), expired };
}

// ------------------------------------------------------------------ retention (retention.ts)

export function setRetention(store: TraceStore, retention: Retention, projectId: string, body: { retention_days: number | null } & RunIds): RetentionSetting {
  const days = Retention.validate(body?.retention_days);
  const scope = retentionScope(store, projectId, body);
  retention.set(scope.projectId, scope.runId, days);
  return retention.get(scope.projectId, scope.runId);
}

export function getRetention(store: TraceStore, retention: Retention, projectId: string, body: RunIds): RetentionSetting {
  const scope = retentionScope(store, projectId, body);
  return retention.get(scope.projectId, scope.runId);
}

function retentionScope(store: TraceStore, projectId: string, ids: RunIds): { projectId: string; runId: string | null } {
  const scope = store.resolveScope(projectId, ids);
  return { projectId: scope.projectId, runId: scope.runId ?? null };
}

// ------------------------------------------------------------------ memory

export async function memory(records: RecordStore): Promise<{ duckdb: Record<string, number>; duckdbMerge: Record<string, number>; process: NodeJS.MemoryUsage; js: Record<string, number>; tables: Record<string, number> }> {
  return { duckdb: await records.duckdbMemory(), duckdbMerge: await records.mergeDbMemory(), process: process.memoryUsage(), js: records.jsSizes(), tables: await records.duckdbTables() };
}
