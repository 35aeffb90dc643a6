// The engine's options (TraceStore.open), beside the record store's own (storage/record-store-options.ts).
import { invalid } from '../errors.js';
import type { RecordStoreOptions } from '../storage/record-store.js';
import type { PlanEstimate } from '../query/exec/match-estimate.js';
import type { ScoringOptions } from '../scoring/scorers.js';

/**
 * DuckDB's memory limit unless given. Memory tables, a seal's sort and a merge's buffers fit in it
 * (merges stream); larger sorts spill to <data>/tmp. Merges fill whatever limit there is, so it sets
 * the process's peak: a larger limit raises the server's peak memory with it, for no faster ingest.
 */
export const DEFAULT_MEMORY_LIMIT = '384MB';
export const MEMORY_SIZE = /^\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i;

export interface TraceStoreOptions extends RecordStoreOptions {
  /**
   * Read the folder beside the process that writes it (`tracelake serve`, say) instead of opening it
   * for writing: the lock is not taken and nothing in the folder is written, deleted or renamed, except
   * this store's lease in `<dir>/readers/` when that folder can be written (`lease: false`: none).
   * Reads answer over the state as of open (the manifest and the acknowledged write-ahead log);
   * `store.refresh()` moves on, `refreshBeforeRead` does so before every read. Writes fail with
   * ReadOnlyError (STORE_READ_ONLY). DuckDB's spill files and work files go to a folder under the
   * system's temporary folder.
   */
  readOnly?: boolean;
  /** Read-only stores: refresh before every read, so each sees everything acknowledged before it began (default false). */
  refreshBeforeRead?: boolean;
  /**
   * Read-only stores: announce this reader with a lease in `<dir>/readers/`, so the writer keeps the
   * segments its snapshot reads for a while after a merge replaces them (default true; skipped when the
   * folder cannot be written there). Without one, a read that meets a removed file runs again on a newer state.
   */
  lease?: boolean;
  /** Read-only stores: the lease's term in ms (default 30,000); it is renewed every third of it. */
  leaseMs?: number;
  /** DuckDB worker threads (default: all cores). */
  threads?: number;
  /**
   * DuckDB's memory limit, e.g. '4GB' (default '384MB'; DuckDB's own default is 80% of RAM). Sorts beyond
   * it spill to `<dir>/tmp`; merges stream.
   */
  memoryLimit?: string;
  /** Rows the first created_at window of a newest-first page covers (default 8,192; tests shrink it). */
  pageWindowRows?: number;
  /**
   * How the planner estimates how many records a filter admits, to choose between one statement and
   * its narrowing plans (default 'measured': a sample of a few row groups). Tests force 'few' or
   * 'many' to check that a wrong estimate never changes an answer.
   */
  planEstimate?: PlanEstimate;
  /** Row groups a store needs before the planner samples them for its estimate (default 64; tests lower it). */
  estimateMinGroups?: number;
  /**
   * Row groups per page row (offset + limit + 1) from which a metric-sorted page first reads only its
   * sort key, created_at and the filter's columns, then the page's columns of the row groups holding
   * its rows (default 2; tests set 0 to always, without the tie sample, and Infinity to never).
   */
  sortKeyGroups?: number;
  /**
   * Row groups per page row (offset + limit + 1) from which a metric-sorted page whose keys query reads
   * every matching row, showing only the small id columns, carries only its keys and fetches the
   * columns for the page's rows (default 2; tests set 0 to always and Infinity to never).
   */
  narrowKeyGroups?: number;
  /** Metric-sorted pages from per-segment lists of the best rows (default true; tests compare with false). */
  metricTopK?: boolean;
  /**
   * Rows each segment's list of best rows keeps per metric and direction when it is read from the
   * segment (default 2,048; tests shrink it, and pages then read no top lists file in place).
   */
  metricTopKRows?: number;
  /**
   * Rows of the scope per candidate from which a metric-sorted page is answered from lists read off
   * the segments, not asked of top lists files in place (default 500: passing n candidates costs about
   * what the keys query over 500 n rows does; tests set 0).
   */
  metricTopKRowsPerCandidate?: number;
  /**
   * A metric-sorted page whose segments' lists are not all read yet: 'background' (default) answers
   * with one keys query and reads the lists afterwards, one segment at a time; 'await' reads them
   * first and answers from them (tests of the lists use it).
   */
  metricTopKBuild?: 'await' | 'background';
  /** Counts keep each segment's share per filter and reuse it (count-cache.ts; default true; tests compare with false). */
  segmentCounts?: boolean;
  /**
   * Counts of text filters from the token index where segments have one (token-count.ts; default true
   * with textIndex; tests and benchmarks compare with false).
   */
  tokenCounts?: boolean;
  /** Segments of fewer rows are counted each time (default 100,000; tests shrink it). */
  segmentCountMinRows?: number;
  /** Most spans one logging request may carry (default 100,000; more answers 413). */
  maxSpansPerRequest?: number;
  /**
   * A JSON file of model prices (data/model-prices.json's format) whose entries win over the shipped
   * table's, for costs computed where clients log none (src/ingest/cost.ts). Read when the store opens.
   * `false`: no cost is computed; records keep exactly the metrics they were logged with.
   */
  modelPrices?: string | false;
  /** Scorers that run in the store: online scoring, the LLM judge endpoint, the Python runner (docs/scorers.md). */
  scoring?: ScoringOptions;
  /** Told the steps each search or count ran (keys, roll-ups, fetch), for benchmarks and tests. */
  onPlan?: (steps: readonly string[]) => void;
  /** Told what queries did in the background after answering (the top-k lists read), for tests. */
  onBackground?: (done: string) => void;
}

/** Bytes of a size MEMORY_SIZE accepts, read as DuckDB reads it (KB, MB, ... are powers of 1,000; KiB, MiB, ... of 1,024). */
export function sizeBytes(size: string): number {
  const m = MEMORY_SIZE.exec(size);
  if (!m) return Number.NaN;
  const unit = m[2]!.toUpperCase(); // B, KB ... TB, KIB ... TIB
  return Number.parseFloat(size) * (unit.includes('I') ? 1024 : 1000) ** ' KMGT'.indexOf(unit.length === 1 ? ' ' : unit[0]!);
}

/** Checks the options TraceStore.open validates itself, before it touches the folder; returns DuckDB's memory limit. */
export function checkedMemoryLimit(options: TraceStoreOptions): string {
  const memoryLimit = options.memoryLimit ?? DEFAULT_MEMORY_LIMIT;
  if (!MEMORY_SIZE.test(memoryLimit)) throw invalid(['memoryLimit'], "Input should be a size such as '512MB' or '4GB'", memoryLimit);
  // A seal copies a whole memory table inside DuckDB's memory limit, and a failed seal is retried, not
  // given up: a table much past half the limit fails with Out of Memory on every try, so it is refused
  // here instead.
  const key = options.memTableBytes !== undefined ? 'memTableBytes' : 'walRollBytes';
  const table = options.memTableBytes ?? options.walRollBytes;
  if (table !== undefined) {
    if (typeof table !== 'number' || !(table > 0)) throw invalid([key], 'Input should be a positive number of bytes', table);
    if (table > sizeBytes(memoryLimit) / 2)
      throw invalid(
        [key],
        `Input should be at most half of memoryLimit (${memoryLimit}): a seal holds its memory table in DuckDB's memory. Raise memoryLimit with it`,
        table,
      );
  }
  const mt = options.mergeThreads;
  if (mt !== undefined && !(Number.isInteger(mt) && mt >= 0 && mt <= 256))
    throw invalid(['mergeThreads'], 'Input should be a whole number from 0 to 256', mt);
  for (const key of ['topListMinRows', 'valueIndexMinRows'] as const) {
    const rows = options[key];
    if (rows !== undefined && !(typeof rows === 'number' && rows >= 0))
      throw invalid([key], 'Input should be a number of rows, 0 or more', rows);
  }
  return memoryLimit;
}
