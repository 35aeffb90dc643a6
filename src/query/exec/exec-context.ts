// What every question over the records shares: the runner its statements go to, what metrics are
// (their roll-up), the caches the strategies keep, and where the steps a question ran are reported.
// Built once per store (record-queries.ts); search.ts, count.ts and the strategies read it.
import type { SqlRunner } from '../../db/database.js';
import type { MetricInfo, RollUpMethod } from '../columns.js';
import type { SegmentCounts } from './count-cache.js';
import type { DataFactsCache } from './data-facts.js';
import type { OwnValueFacts } from './own-values.js';
import type { DerivedStatuses } from './derived-statuses.js';
import type { PageKeySettings } from './page-keys.js';

export interface ExecContext {
  /** Runs the statements (the store's database, seen as no more than a runner). */
  readonly db: SqlRunner;
  /** What a metric is (scorers' descriptions, else defaults by name). */
  readonly metricInfo: (name: string) => MetricInfo | undefined;
  readonly rollUp: (name: string) => RollUpMethod;
  /** Whether a scorer of the catalog writes this metric (its statuses are then worth reading). */
  readonly scorerMetric: (name: string) => boolean;
  /** Facts about the stored spans (data-facts.ts). */
  readonly facts: DataFactsCache;
  /** The metrics every record of a scope holds (own-values.ts). */
  readonly ownValues: OwnValueFacts;
  /** How a page's keys are found (page-keys.ts). */
  readonly keys: PageKeySettings;
  /** Each segment's count per filter (count-cache.ts), or null when counts keep none. */
  readonly counts: SegmentCounts | null;
  /** Whether counts of text filters may use segments' token indexes (token-count.ts). */
  readonly tokenCounts: boolean;
  /** Metric statuses a page derives from a record's place (scorers still to run on it), if any. */
  readonly derivedStatuses: DerivedStatuses | undefined;
  /** Told the steps each search or count ran (benchmarks and tests look at the plan). */
  readonly onPlan: ((steps: readonly string[]) => void) | undefined;
}
