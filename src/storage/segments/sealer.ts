// The sealer: freezes the active memory table when it is full (the log rolls to a new file in the
// same step, so table n and log file n hold the same rows), and turns frozen tables into segments in
// the background, oldest first. Writers wait only when two frozen tables are already waiting.
import { StorageError } from '../../errors.js';
import { sealedAwaits } from '../memtable/awaited.js';
import type { ManifestState } from '../manifest/manifest.js';
import { MemTable } from '../memtable/mem-tables.js';
import { sortedUnion } from '../memtable/seq-lists.js';
import { writeSealSegments } from './seal.js';
import { indexedSegment } from './segments.js';
import { listsFrom, type StoreState } from '../store-state.js';
import { ident, sql } from '../../query/sql.js';

/** Frozen tables waiting for the sealer before writers wait (bounds memory at about three tables). */
const MAX_FROZEN = 2;

export class Sealer {
  readonly #s: StoreState;
  #running: Promise<void> | null = null;
  #failure: unknown = null;
  #waiters: (() => void)[] = [];
  /**
   * Called after each seal (the store starts compaction there). Not only once no frozen table is
   * left: when tables freeze as fast as they are sealed that moment never comes while logging lasts,
   * and segments piled up unmerged until ingest stopped (the compactor's own pause rules decide when
   * a merge actually runs).
   */
  onSealed: () => void = () => undefined;

  constructor(state: StoreState) {
    this.#s = state;
  }

  /**
   * Freezes the active table (if it holds anything) and starts a fresh one with a new log file; the
   * sealer takes it from there. After a failed fsync this is also how the log gets a trusted file
   * again: what the failed file held is made durable by the seal, which writes (and fsyncs) new files.
   */
  freeze(): void {
    const failed = this.#freeze();
    // The log stays on its file and the table keeps taking rows; the next append tries again.
    if (failed !== null) process.emitWarning(`tracelake: starting a new log file failed: ${(failed as Error).message}`);
  }

  /** freeze(), returning why the table could not be frozen (a new log file could not be started), or null. */
  #freeze(): unknown {
    const s = this.#s;
    const active = s.active;
    if (active.rows === 0 && active.dead.length === 0 && !s.wal.failed) return null;
    try {
      s.wal.roll(s.nextSeq);
    } catch (err) {
      return err;
    }
    const number = s.wal.number;
    active.frozen = true;
    s.mem.push(new MemTable(number, s.nextSeq, s.inserter.create(`mem_${number}`)));
    this.kick();
    return null;
  }

  /** Freezes the active table when it is full. */
  maybeFreeze(): void {
    const t = this.#s.active;
    if (t.bytes >= this.#s.options.memTableBytes || t.rows >= this.#s.options.sealRows) this.freeze();
  }

  /** Writers wait while the sealer is behind (memory stays bounded); never forever (a failing seal lets them pass). */
  async backpressure(): Promise<void> {
    while (this.#frozen() >= MAX_FROZEN && !this.#s.closed && this.#failure === null) {
      this.kick();
      await new Promise<void>((r) => this.#waiters.push(r));
    }
  }

  #frozen(): number {
    let n = 0;
    for (const t of this.#s.mem) if (t.frozen) n++;
    return n;
  }

  kick(): void {
    if (this.#running) return;
    this.#running = this.#sealAll().finally(() => {
      this.#running = null;
      this.#wake();
    });
  }

  #wake(): void {
    for (const r of this.#waiters.splice(0)) r();
  }

  async #sealAll(): Promise<void> {
    this.#failure = null;
    for (;;) {
      const table = this.#s.mem.find((t) => t.frozen);
      // A closing store leaves frozen tables to the next open's replay of their log files.
      if (!table || this.#s.closed) break;
      try {
        await this.#s.maint.run(() => this.#seal(table));
      } catch (err) {
        this.#failure = err;
        // A seal stopped by a close that does not seal: its log file stays, the next open replays it.
        if (this.#s.closed) return;
        process.emitWarning(`tracelake: sealing failed (will retry at the next seal): ${(err as Error).message}`);
        return;
      }
      this.#wake();
      this.onSealed();
    }
  }

  /** Seals everything in memory now; throws if a seal fails, or if the active table could not be frozen. */
  async sealAll(): Promise<void> {
    const failed = this.#freeze();
    // Resolving would tell the caller the rows are sealed while they are still only in the log.
    if (failed !== null) throw new StorageError('starting a new log file failed, so the in-memory table was not sealed', { cause: failed });
    while (this.#s.mem.some((t) => t.frozen)) {
      this.kick();
      await this.#running;
      if (this.#failure) throw new StorageError('sealing the in-memory tables failed', { cause: this.#failure });
    }
  }

  /** Resolves once no seal is running. */
  async idle(): Promise<void> {
    if (this.#running) await this.#running;
  }

  async #seal(table: MemTable): Promise<void> {
    const s = this.#s;
    await table.created;
    s.inserter.flush();
    await table.settled();
    // Tombstones of rows in this table are not needed once it is sealed (those rows are left out);
    // tombstones of other rows go to the manifest with the rows that replaced them, never before. Which
    // rows the table holds is asked, not inferred from firstSeq: a bulk load's rows (bulk-load.ts) take
    // numbers inside a table's range while living in segments.
    const own = await this.#held(table, table.dead);
    // The same for has_children overrides: those of the table's own rows are written into the segment;
    // the others (rows sealed earlier, or a bulk load's) go to the manifest for a merge to fold.
    const ownOff = await this.#held(table, table.childless);
    const out = await writeSealSegments(
      {
        dir: s.dir,
        conn: s.conns.seal,
        manifest: s.manifest,
        nextSegment: () => s.nextSegment++,
        rowGroupSize: s.options.rowGroupSize,
        sealRowGroupSize: s.options.sealRowGroupSize,
        textIndex: s.options.textIndex,
        topListMinRows: listsFrom(s.options),
        valueIndexMinRows: s.options.valueIndexMinRows,
        factColumns: s.options.notedColumns,
      },
      table,
      [...own],
      [...ownOff],
    );
    const purged = [...own];
    // Kept ascending (a merge, and a manifest that packs to about a byte per seq): a Set of a large
    // delete's seqs cost most of a second at every seal.
    const kept = sortedUnion(s.manifest.dead, own.size === 0 ? table.dead : table.dead.filter((q) => !own.has(q)));
    const keptOff = new Set(s.manifest.childless);
    for (const q of table.childless) if (!ownOff.has(q)) keptOff.add(q);
    const state: ManifestState = {
      ...s.manifest,
      generation: s.manifest.generation + 1,
      sealed_wal: table.number,
      sealed_seq: Math.max(s.manifest.sealed_seq, ...out.added.map((a) => a.entry.max_seq)),
      next_segment: s.nextSegment,
      segments: [...s.manifest.segments, ...out.added.map((a) => a.entry)],
      dead: kept,
      childless: [...keptOff],
      awaited: sealedAwaits(s.manifest.awaited, table),
      metric_ids: out.metricIds,
    };
    s.commit(
      state,
      out.added.map((a) => a.entry.file),
    );
    for (const a of out.added) {
      s.index.add(indexedSegment(s.dir, a));
      s.tally('seal', a);
    }
    s.mem = s.mem.filter((t) => t !== table);
    for (const [k, e] of s.memIds) if (e.table === table.number) s.memIds.delete(k);
    s.sealGeneration += 1;
    await s.wal.dropThrough(table.number);
    s.afterReaders(async () => {
      await s.inserter.run(sql`DROP TABLE IF EXISTS ${ident(table.name)}`);
      await s.forget(purged);
      await s.forgetChildless([...ownOff]);
    });
  }

  /** Which of `seqs` are rows of the table itself. */
  async #held(table: MemTable, seqs: readonly number[]): Promise<Set<number>> {
    // The table's rows have seqs from its first on: a delete of sealed rows (a million of them at 1% of
    // 100M spans) asks nothing of it.
    const mine = seqs.filter((q) => q >= table.firstSeq);
    if (mine.length === 0) return new Set();
    const rows = await this.#s.conns.seal.all(sql`SELECT seq FROM ${ident(table.name)} WHERE seq IN (SELECT unnest(${mine}::BIGINT[]))`);
    return new Set(rows.map((r) => Number(r['seq'])));
  }
}
