// Parents awaited: a child span logged (reliable: false) before its parent names a parent id that
// does not exist yet; when a row with that id is logged later, it gets has_children. The ids are
// logged with the child's entry (wal.ts `awaits`), replayed, and kept in the manifest from the seal of
// that log file until the parent arrives, so a restart between child and parent loses nothing.
import type { ManifestState } from '../manifest/manifest.js';
import type { MemTable } from './mem-tables.js';
import { memKey, type StoreState } from '../store-state.js';

/** Most awaited parents remembered (the oldest are forgotten first): a bound on memory and the manifest. */
export const MAX_AWAITED = 100_000;

/** Notes parents that rows of one run wait for (in the store's set and the table's changes). */
export function noteAwaits(s: StoreState, table: MemTable, projectId: string, runId: string, ids: readonly string[]): void {
  for (const id of ids) {
    const k = memKey(runId, id);
    const entry = [projectId, runId, id] as const;
    s.awaited.delete(k); // re-inserted last: the newest
    s.awaited.set(k, entry);
    table.awaits.delete(k);
    table.awaits.set(k, entry);
  }
  while (s.awaited.size > MAX_AWAITED) s.awaited.delete(s.awaited.keys().next().value as string);
}

/** Parents that arrived (keys of rows logged with an awaited id): no longer awaited. */
export function resolveAwaits(s: StoreState, table: MemTable, keys: readonly string[]): void {
  for (const k of keys) {
    s.awaited.delete(k);
    table.awaits.delete(k);
    table.awaits.set(k, null);
  }
}

/** The manifest's awaited parents after a sealed table's changes (bounded like the in-memory set). */
export function sealedAwaits(before: ManifestState['awaited'], table: MemTable): ManifestState['awaited'] {
  if (table.awaits.size === 0) return before;
  const out = new Map(before.map((e) => [memKey(e[1], e[2]), e] as const));
  for (const [k, e] of table.awaits) {
    out.delete(k);
    if (e) out.set(k, e);
  }
  return [...out.values()].slice(-MAX_AWAITED);
}
