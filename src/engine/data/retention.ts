// Retention: `retention_days` on a project or on one log stream (the stream's own value wins). Kept in
// the catalog (table `retention`, keyed by the project or run id). Reads leave expired records out
// at once (the snapshot's cutoffs, see snapshot.ts); `compact()` logs them as deleted and rewrites
// segments that are mostly dead, which takes them off the disk.
import type { Catalog } from '../../catalog/catalog.js';
import type { Database } from '../../db/database.js';
import { invalid } from '../../errors.js';
import type { RecordStore } from '../../storage/record-store.js';
import type { RetentionView } from '../../storage/snapshot/snapshot.js';

const DAY_US = 86_400_000_000;
/** A century: longer is no retention, and keeps the cutoff a safe integer. */
export const MAX_RETENTION_DAYS = 36_500;

interface RetentionRow {
  id: string;
  project_id: string;
  run_id: string | null;
  days: number;
}

export interface RetentionSetting {
  /** The value set on this project or log stream (null: none). */
  retention_days: number | null;
  /** What applies: a log stream's own value, else its project's (null: records never expire). */
  effective_retention_days: number | null;
}

export class Retention implements RetentionView {
  readonly #catalog: Catalog;
  readonly #now: () => number;

  constructor(catalog: Catalog, now: () => number = () => Date.now() * 1000) {
    this.#catalog = catalog;
    this.#now = now;
  }

  static validate(days: unknown): number | null {
    if (days === null) return null;
    if (typeof days !== 'number' || !Number.isInteger(days) || days < 1 || days > MAX_RETENTION_DAYS) {
      throw invalid(['retention_days'], `Input should be a whole number of days from 1 to ${MAX_RETENTION_DAYS}, or null for none`, days);
    }
    return days;
  }

  /** Sets (or, with null, clears) the retention of a project (runId null) or of one of its runs. */
  set(projectId: string, runId: string | null, days: number | null): void {
    const id = runId ?? projectId;
    if (days === null) {
      if (this.#catalog.get('retention', id)) this.#catalog.commit([{ op: 'del', table: 'retention', id }]);
      return;
    }
    this.#catalog.put('retention', { id, project_id: projectId, run_id: runId, days } satisfies RetentionRow);
  }

  get(projectId: string, runId: string | null): RetentionSetting {
    const own = this.#catalog.get<RetentionRow>('retention', runId ?? projectId)?.days ?? null;
    const project = this.#catalog.get<RetentionRow>('retention', projectId)?.days ?? null;
    return { retention_days: own, effective_retention_days: runId === null ? project : (own ?? project) };
  }

  cutoffs(projectId: string): ReadonlyMap<string, number> {
    const rows = this.#catalog.table<RetentionRow>('retention').filter((r) => r.project_id === projectId);
    const out = new Map<string, number>();
    if (rows.length === 0) return out;
    const now = this.#now();
    const projectDays = rows.find((r) => r.run_id === null)?.days;
    const own = new Map(rows.filter((r) => r.run_id !== null).map((r) => [r.run_id!, r.days]));
    for (const run of this.#catalog.runs(projectId)) {
      const days = own.get(run.id) ?? projectDays;
      if (days !== undefined) out.set(run.id, now - days * DAY_US);
    }
    return out;
  }
}

/** Logs the expired rows still stored in these projects as deleted (durably); returns how many. */
export async function purgeExpired(records: RecordStore, db: Database, projectIds: readonly string[]): Promise<number> {
  let n = 0;
  for (const projectId of projectIds) {
    const seqs = await records.read(async (snap) => {
      const q = snap.expiredSeqs({ projectId, kinds: ['span', 'trace', 'session'] });
      return q ? (await db.all(q)).map((r) => Number(r['seq'])) : [];
    });
    if (seqs.length > 0) await records.deleteSeqs(seqs);
    n += seqs.length;
  }
  return n;
}
