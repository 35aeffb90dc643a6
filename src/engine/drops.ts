// Deleting a project (runId null) or a run with its records, in steps that survive a crash at any
// point: an intent is recorded in the catalog, the catalog entries removed, the records dropped, the
// intent cleared. An intent found on open is finished there (the deletion was not acknowledged, so
// finishing it is allowed).
import type { Catalog } from '../catalog/catalog.js';
import { removeProjectFromCatalog, removeRunFromCatalog } from '../catalog/projects.js';
import type { RecordStore } from '../storage/record-store.js';

interface PendingDrop {
  id: string;
  project_id: string;
  run_id: string | null;
}

export class Drops {
  readonly #catalog: Catalog;
  readonly #records: RecordStore;

  constructor(catalog: Catalog, records: RecordStore) {
    this.#catalog = catalog;
    this.#records = records;
  }

  async drop(projectId: string, runId: string | null, removeFromCatalog: () => void): Promise<void> {
    const id = runId ?? projectId;
    this.#catalog.put('pending_drops', { id, project_id: projectId, run_id: runId });
    removeFromCatalog();
    await this.#records.dropScope(projectId, runId ?? undefined);
    this.#catalog.commit([{ op: 'del', table: 'pending_drops', id }]);
  }

  /** Finishes the deletions a crash interrupted (called by TraceStore.open). */
  async finishPending(): Promise<void> {
    for (const d of this.#catalog.table<PendingDrop>('pending_drops')) {
      const stillListed = d.run_id === null ? this.#catalog.get('projects', d.project_id) : this.#catalog.get('runs', d.run_id);
      await this.drop(d.project_id, d.run_id, () => {
        if (!stillListed) return;
        if (d.run_id === null) removeProjectFromCatalog(this.#catalog, d.project_id);
        else removeRunFromCatalog(this.#catalog, d.project_id, d.run_id);
      });
    }
  }
}
