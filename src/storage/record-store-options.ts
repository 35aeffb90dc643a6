// The options of a record store (RecordStore.open); record-store-open.ts gives their defaults.
import type { CompactionPolicy } from './segments/compaction.js';

export interface RecordStoreOptions {
  /**
   * Bytes of logged rows that freeze the active memory table for sealing (default 32 MiB). Up to three
   * tables are in DuckDB at once (the active one and two frozen ones waiting for the sealer), and a
   * seal's transient grows with its table, so larger tables raise the process's peak memory for no
   * faster ingest. TraceStore.open refuses more than half its memoryLimit (a seal copies the table
   * inside that limit).
   */
  memTableBytes?: number;
  /** Rows that freeze the active memory table (default 1,000,000). */
  sealRows?: number;
  /** Former name of `memTableBytes` (the log file and the memory table are one unit now). */
  walRollBytes?: number;
  /** Rows per Parquet row group (default 32,768): smaller skips more and buffers less, larger compresses better. */
  rowGroupSize?: number;
  /**
   * Rows per row group of sealed segments (default 8,192, at most rowGroupSize). A seal's COPY buffers a
   * row group before writing it: with whole-table row groups (a 32 MiB table is ~25k wide rows) each seal
   * added the table's size again to the peak, at the moment a merge also holds its own row group. Sealed
   * segments are few and short-lived (merges rewrite them in rowGroupSize groups).
   */
  sealRowGroupSize?: number;
  /**
   * Write a text index beside each segment, so `contains` on name, input and output skips row groups
   * (default false). A rare string is then found by reading the few row groups that may hold it instead
   * of all of them, but every seal, merge and import pays for building the index, and memory holds the
   * indexes: the server's peak memory rises.
   */
  textIndex?: boolean;
  /**
   * Write each segment's top lists beside it (indexes/top-lists.ts: its best rows by each metric, both
   * directions), so a fresh metric-sorted page reads a few thousand rows per segment instead of sorting
   * it (default true; tests of segments without them, as older builds wrote, set false).
   */
  topLists?: boolean;
  /**
   * Segments of at least this many rows get top lists (default 65,536); a metric-sorted page reads
   * smaller ones whole, as it reads memory tables (their lists would hold most of their rows: at seals
   * they cost a quarter more ingest CPU). Tests set 0.
   */
  topListMinRows?: number;
  /**
   * Segments of at least this many rows get a value index (default 100,000): counts filtered by type,
   * name, model or tags read only the rows it names (value-index.ts). Smaller segments are read whole
   * by a count anyway (count-cache.ts). Tests set 0.
   */
  valueIndexMinRows?: number;
  /** Merge small segments in the background after seals (default true). */
  autoCompact?: boolean;
  /** When segments merge (see compaction.ts). */
  compaction?: CompactionPolicy;
  /**
   * Background merges start only once no rows were appended for this long (default 500 ms), so
   * during heavy logging they do not take CPU from writes and reads (ingest, read latency and peak
   * memory were all better with the pause).
   */
  mergePauseMs?: number;
  /** ... but a merge waits no longer than this for that pause (default 30,000 ms), so segments never pile up unmerged. */
  mergeMaxDelayMs?: number;
  /**
   * Appends acknowledged once logged whose DuckDB insert may still run (default 3): a caller that logs
   * one request at a time builds the next while DuckDB inserts the last, and reads wait for those
   * inserts. 0: each append waits for its own insert, so reads wait for none (what a server with
   * concurrent writers and readers wants: its writers overlap one another anyway).
   */
  pipelineDepth?: number;
  /**
   * DuckDB threads of the separate database that merges write their files with (default 1; 0: merges
   * write on the store's own database). A merge is one long statement: on the
   * store's database it held back the cleanup of every memory table dropped while it ran (MVCC keeps
   * what an older transaction may read), and its parallel scan buffered row groups for the output's
   * order. On its own database, with one thread, neither happens (see
   * bench/results/history/2026-11-25-library-memory.md).
   */
  mergeThreads?: number;
  /**
   * After a delete of `afterDelete` rows or more (default 10,000), the dead-row lists of the segments of
   * `fromRows` rows or more (default 100,000) with dead rows are made in the background
   * (snapshot/segment-dead-rows.ts), so counts without a filter need not read those segments.
   */
  deadRowLists?: { afterDelete?: number; fromRows?: number };
  /**
   * Most ms a segment that a merge or drop replaced stays on disk for read-only stores in other
   * processes whose lease names an older manifest (default 10 minutes; readers/leases.ts). 0: removed
   * at once; such readers then move to a newer snapshot when they meet a vanished file.
   */
  readerGraceMs?: number;
  /**
   * ZSTD level of merged segments (default 3; seals write level 1, since merges rewrite them anyway;
   * higher levels cost much more CPU for little less disk).
   */
  compactionLevel?: number;
  /**
   * Columns whose presence memory tables note per span type as rows arrive (the engine passes the
   * kind-specific ones), so the planner's facts about unsealed spans cost no scan (default none).
   */
  notedColumns?: readonly string[];
  /**
   * Ids of covered segments the checkpoint file does not name (new ones, and a merge's output) the
   * store's id filter may hold before the checkpoint is saved again (default 1M, and at least a quarter
   * of those it names). An open reads the `.ids` of segments it misses, in the background.
   */
  idCheckpointAfter?: number;
  /**
   * When a writable store checks the child and text indexes of the segments it found on open, and
   * rebuilds those missing, damaged or stale (a folder of an older version): 'background' (default)
   * after the open, one segment at a time (segments/index-repair.ts; readers do without an index until
   * it is checked); 'held' only once `indexesRepaired()` is called (tests that need the moment fixed).
   */
  indexRepair?: 'background' | 'held';
  /**
   * Read every live segment's Parquet footer (and its top lists file's) once in the background after
   * an open (default true), so a new process's first questions do not wait on parsing them
   * (segments/footer-warm.ts).
   */
  warmFooters?: boolean;
}
