// What scoring needs from the store (given by TraceStore): records by id, whether a version read is
// still live, the trace locks logging takes, the write path, record matching by filter in windows of
// seq, and RE2 matching in DuckDB.
import type { Catalog } from '../catalog/catalog.js';
import type { Row } from '../db/database.js';
import type { Level } from '../query/columns.js';
import type { RunScope } from '../query/exec/plan-input.js';
import type { LogRow, StoredRow } from '../record/record.js';
import type { FilterRequest } from '../schemas/query.js';

export interface ScoringHost {
  readonly catalog: Catalog;
  assertOpen(): void;
  /** Throws ReadOnlyError in a read-only store: scoring writes records and defining one writes the catalog. */
  assertWritable(what: string): void;
  /** The highest record seq given so far. */
  lastSeq(): number;
  /** Live records of a run by id (any kind). */
  lookup(projectId: string, runId: string, ids: readonly string[]): Promise<StoredRow[]>;
  /** A mark for `isLive`, taken before reading the rows it is asked about. */
  liveMark(): number;
  /** Whether a row version read after `mark` is still its record's live one; null when the store cannot tell. */
  isLive(seq: number, mark: number): boolean | null;
  /** Runs fn holding the locks of these traces (keys run/trace id), as logging does when it rewrites a record. */
  lockTraces<T>(keys: readonly string[], fn: () => Promise<T>): Promise<T>;
  /** Writes new versions of records of one run, durably (the write path logging uses). */
  write(projectId: string, runId: string, rows: LogRow[]): Promise<void>;
  /** Records of a level matching a filter in a window of seq (RecordQueries.matchRows; `whole`: every stored column). */
  matchRows(
    level: Level,
    scope: RunScope,
    body: FilterRequest,
    window: { from: number; to: number },
    types: readonly string[] | null,
    unscored?: readonly string[],
    whole?: boolean,
  ): Promise<Row[]>;
  /** Matching records of a level (as spans/count counts them). */
  count(level: Level, scope: RunScope, body: FilterRequest): Promise<number>;
  /** Throws InvalidRequestError for a filter the level cannot take. */
  validateFilter(level: Level, body: FilterRequest): void;
  /** The run a request's run ids name (422 without one, 404 when unknown). */
  resolveRun(
    projectId: string,
    ids: { log_stream_id?: string | null; experiment_id?: string | null; metrics_testing_id?: string | null },
  ): {
    projectId: string;
    runId: string;
  };
  /** Which texts match an RE2 pattern (DuckDB's regexp_matches). */
  regexMatches(texts: readonly string[], pattern: string, caseSensitive: boolean): Promise<boolean[]>;
}
