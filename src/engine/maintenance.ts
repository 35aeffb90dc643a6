// store.maintenance: the upkeep a store also does by itself. compact() merges small segments and takes
// deleted and expired records off the disk now; memory() reports what the store holds in memory.
import type { Catalog } from '../catalog/catalog.js';
import type { Database } from '../db/database.js';
import type { RecordStore } from '../storage/record-store.js';
import { purgeExpired } from './data/retention.js';
import type { OpenGuard } from './open-guard.js';

export interface MemoryReport {
  /** DuckDB's memory by tag, as its buffer manager sees it. */
  duckdb: Record<string, number>;
  /** The same for the database merges write with (their own). */
  duckdbMerge: Record<string, number>;
  process: NodeJS.MemoryUsage;
  /** Sizes of the store's own structures in the JS heap. */
  js: Record<string, number>;
  tables: Record<string, number>;
}

export class Maintenance {
  readonly #guard: OpenGuard;
  readonly #catalog: Catalog;
  readonly #records: RecordStore;
  readonly #db: Database;

  constructor(guard: OpenGuard, catalog: Catalog, records: RecordStore, db: Database) {
    this.#guard = guard;
    this.#catalog = catalog;
    this.#records = records;
    this.#db = db;
  }

  /**
   * Merges small segments and purges deleted rows from disk now (it also runs by itself after seals).
   * Records past their retention are first logged as deleted, so the rewrite of their segments
   * (a segment at least 30% dead, see compaction.ts) takes them off the disk.
   */
  async compact(): Promise<{ merges: number; expired: number }> {
    this.#guard.assertWritable('compacting');
    const expired = await purgeExpired(
      this.#records,
      this.#db,
      this.#catalog.projects().map((p) => p.id),
    );
    // Merges purge only tombstones the manifest holds (one only in the log may precede a durable
    // replacement): sealing first brings the expiry's tombstones there.
    if (expired > 0) await this.#records.seal();
    return { merges: await this.#records.compact(), expired };
  }

  /**
   * Settles once the indexes of the segments found on open are checked and those missing, damaged or
   * stale (a folder of an older version) rebuilt, which a writable store does in the background after
   * opening (with the option indexRepair 'held', this starts it). Returns how many were rebuilt.
   */
  async indexesRepaired(): Promise<number> {
    this.#guard.assertOpen();
    return this.#records.indexesRepaired();
  }

  /** Memory in use, in bytes: DuckDB's by tag (merges have a database of their own) and this process's. */
  async memory(): Promise<MemoryReport> {
    this.#guard.assertOpen();
    const records = this.#records;
    return {
      duckdb: await records.duckdbMemory(),
      duckdbMerge: await records.mergeDbMemory(),
      process: process.memoryUsage(),
      js: records.jsSizes(),
      tables: await records.duckdbTables(),
    };
  }
}
