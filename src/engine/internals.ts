// What code of this package (the server, the CLI, tests) may reach behind an open TraceStore's surface:
// its raw catalog and record store, and whether it is still open. Kept out of the store's own properties, and not exported by
// src/index.ts, so the library's users see only the parts.
import type { Catalog } from '../catalog/catalog.js';
import type { RecordStore } from '../storage/record-store.js';
import type { OpenGuard } from './open-guard.js';

export interface StoreInternals {
  readonly catalog: Catalog;
  readonly records: RecordStore;
  readonly guard: OpenGuard;
}

const byStore = new WeakMap<object, StoreInternals>();

/** Called once, by TraceStore.open. */
export function setInternals(store: object, internals: StoreInternals): void {
  byStore.set(store, internals);
}

export function internalsOf(store: object): StoreInternals {
  const found = byStore.get(store);
  if (!found) throw new TypeError('not a TraceStore opened by TraceStore.open');
  return found;
}
