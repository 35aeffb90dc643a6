// Loading the span set through the tracelake library, shared by the two peers that do it (tracelake
// itself and hand-written DuckDB over its files): one project, one log stream, one reliable
// logTraces per batch, then everything sealed and compacted, so both query the same files.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { internalsOf } from '../../src/engine/internals.js';
import { TraceStore } from '../../src/engine/trace-store.js';
import type { LogTracesRequest } from '../../src/schemas/ingest.js';
import type { SpanBatch } from '../workload.js';

/**
 * Peers keep no result caches, and each question is asked again after a warm-up: kept segment counts
 * (count-cache.ts) would time a lookup, not the count. Benchmarks time what a first ask costs.
 */
export const BENCH_STORE = {
  segmentCounts: false,
  // The other peers hold exactly what was logged: no computed cost, so every peer lists the same metrics.
  modelPrices: false,
  // bench/run.ts --text-index: the opt-in text index (a template without one builds it on open), and
  // --no-token-counts: with it, counts as before the token index (trigram sets only), for old-vs-new runs.
  ...(process.env['TRACELAKE_BENCH_TEXT_INDEX'] === '1' ? { textIndex: true } : {}),
  ...(process.env['TRACELAKE_BENCH_TOKEN_COUNTS'] === '0' ? { tokenCounts: false } : {}),
} as const;

export class LibraryLoad {
  private constructor(
    readonly dir: string,
    readonly store: TraceStore,
    readonly projectId: string,
    readonly logStreamId: string,
    /** False for a template built to be asked as it is (the 100M store: its merges would rewrite ~28 GB). */
    private readonly compactOnSettle = true,
  ) {}

  /** Opens a store in `<parent>/tracelake` with the project and log stream the load goes into. */
  static async open(parent: string): Promise<LibraryLoad> {
    const dir = join(parent, 'tracelake');
    mkdirSync(dir, { recursive: true });
    const store = await TraceStore.open(dir, BENCH_STORE);
    const project = store.createProject({ name: 'peers' });
    return new LibraryLoad(dir, store, project.id, store.createLogStream(project.id, 'bench').id);
  }

  /** A store already holding the set (a copy of a template, see store-template.ts). */
  static adopt(dir: string, store: TraceStore, projectId: string, logStreamId: string, compactOnSettle = true): LibraryLoad {
    return new LibraryLoad(dir, store, projectId, logStreamId, compactOnSettle);
  }

  async insert(batch: SpanBatch): Promise<void> {
    const body = { log_stream_id: this.logStreamId, reliable: true, traces: batch.traces } as unknown as LogTracesRequest;
    await this.store.logTraces(this.projectId, body);
  }

  /**
   * Seals and compacts, and lets the id filter save a checkpoint naming the merged segments: the state a
   * store settles in (a template closed before that made every copy's open hash 10M ids again).
   */
  async settle(): Promise<void> {
    await this.store.flush();
    if (this.compactOnSettle) await this.store.maintenance.compact();
    await internalsOf(this.store).records.idFilterSettled();
  }
}
