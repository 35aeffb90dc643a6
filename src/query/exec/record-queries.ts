// The questions a store answers about its records, for one level of the tree at a time: search and
// partial search (search.ts), count (count.ts), delete (record-delete.ts finds what goes), and the
// columns a level offers (available-columns.ts). Each takes a snapshot and runs on the store's
// database through a narrow runner; the strategies' caches live as long as this object.
import type { Row, SqlRunner } from '../../db/database.js';
import type { ColumnDef, Level, MetricInfo, RollUpMethod } from '../columns.js';
import { METRIC_PREFIX } from '../columns.js';
import { deleteQuery, matchRowsQuery } from '../plan.js';
import { parseRecordQuery } from '../record-request.js';
import type { Sql } from '../sql.js';
import type { FilterRequest, PartialSearchRequest } from '../../schemas/query.js';
import type { RecordStore } from '../../storage/record-store.js';
import type { Snapshot } from '../../storage/snapshot/snapshot.js';
import { defaultMetricInfo } from '../../catalog/metric-info.js';
import type { AggregateBody } from '../aggregate-request.js';
import { aggregate, type AggregateResult } from './aggregate.js';
import { availableColumns } from './available-columns.js';
import { count } from './count.js';
import { SegmentCounts } from './count-cache.js';
import { DataFactsCache } from './data-facts.js';
import { OwnValueFacts } from './own-values.js';
import type { ExecContext } from './exec-context.js';
import type { PlanEstimate } from './match-estimate.js';
import type { DerivedStatuses } from './derived-statuses.js';
import type { SearchResult } from './page-assembly.js';
import { factPlan, planInput, scopeOf, type RunScope } from './plan-input.js';
import { deleteSet } from './record-delete.js';
import { search, MAX_PAGE_SIZE } from './search.js';
import { TopKCache } from './topk-cache.js';

export { MAX_PAGE_SIZE, METRIC_PREFIX };
export type { AggregateResult, RunScope, SearchResult };

export interface RecordQueryOptions {
  windowRows?: number;
  metricTopK?: boolean;
  segmentCounts?: boolean;
  tokenCounts?: boolean;
  segmentCountMinRows?: number;
  topKRows?: number;
  topKRowsPerCandidate?: number;
  topKBuild?: 'await' | 'background';
  planEstimate?: PlanEstimate;
  estimateMinGroups?: number;
  sortKeyGroups?: number;
  narrowKeyGroups?: number;
  metricInfo?: (name: string) => MetricInfo | undefined;
  /** Whether a scorer of the catalog writes a metric (default: none does). */
  scorerMetric?: (name: string) => boolean;
  /** Statuses of metrics a record should carry and does not yet (the store's scorers). */
  derivedStatuses?: DerivedStatuses;
  onPlan?: (steps: readonly string[]) => void;
  onBackground?: (done: string) => void;
}

export class RecordQueries {
  readonly #records: RecordStore;
  readonly #cx: ExecContext;
  readonly #onBackground: ((done: string) => void) | undefined;
  /** Work handed to the background (top-k lists), one piece after another. */
  #background: Promise<void> = Promise.resolve();
  /** Work handed over by searches still running: it starts once they have answered. */
  readonly #handed: ((snap: Snapshot) => Promise<number>)[] = [];

  constructor(records: RecordStore, db: SqlRunner, options: RecordQueryOptions = {}) {
    const given = options.metricInfo ?? defaultMetricInfo;
    const metricInfo = (name: string): MetricInfo | undefined => given(name) ?? defaultMetricInfo(name);
    const rollUp = (name: string): RollUpMethod => metricInfo(name)?.roll_up_method ?? 'average';
    this.#records = records;
    this.#onBackground = options.onBackground;
    this.#cx = {
      db,
      metricInfo,
      rollUp,
      scorerMetric: options.scorerMetric ?? (() => false),
      facts: new DataFactsCache(db, records.notedColumns),
      ownValues: new OwnValueFacts(db),
      keys: {
        db,
        topK:
          options.metricTopK === false ? null : new TopKCache(db, options.topKRows, records.topListMinRows, options.topKRowsPerCandidate),
        windowRows: options.windowRows ?? 8_192,
        estimateMode: options.planEstimate ?? 'measured',
        estimateMinGroups: options.estimateMinGroups,
        sortKeyGroups: options.sortKeyGroups ?? 2,
        narrowKeyGroups: options.narrowKeyGroups ?? 2,
        topKBuild: options.topKBuild ?? 'background',
        background: (work) => {
          this.#handed.push(work);
        },
      },
      counts: options.segmentCounts === false ? null : new SegmentCounts(options.segmentCountMinRows),
      tokenCounts: options.tokenCounts !== false,
      derivedStatuses: options.derivedStatuses,
      onPlan: options.onPlan,
    };
  }

  async search(level: Level, scope: RunScope, body: PartialSearchRequest, partial: boolean): Promise<SearchResult> {
    try {
      return await this.#records.read((snap) => search(this.#cx, snap, level, scope, body, partial));
    } finally {
      this.#startHanded();
    }
  }

  /**
   * Starts the work searches handed over, once questions pause (not beside them: at 10M a page asked
   * again at once took 643-701 ms beside the list reads, 344-409 alone). Each piece on a snapshot of its
   * own (its files stay while it reads them). A failure (the store closing meanwhile) only leaves the
   * work undone: a later page hands it over again.
   */
  #startHanded(): void {
    for (const work of this.#handed.splice(0)) {
      this.#background = this.#background
        .then(() => this.#records.questionsPause())
        .then(() => this.#records.read(work))
        .then((n) => this.#onBackground?.(`top-k lists read: ${n}`))
        .catch(() => undefined);
    }
  }

  count(level: Level, scope: RunScope, body: FilterRequest): Promise<number> {
    return this.#records.read((snap) => count(this.#cx, snap, level, scope, body));
  }

  /** Counts and measures of matching records, grouped by columns or time buckets (aggregate.ts). */
  aggregate(level: Level, scope: RunScope, body: AggregateBody): Promise<AggregateResult> {
    return this.#records.read((snap) => aggregate(this.#cx, snap, level, scope, body));
  }

  /** Throws InvalidRequestError for a filter the level cannot take (what a query would throw later). */
  validateFilter(level: Level, body: FilterRequest): void {
    parseRecordQuery('delete', level, body, this.#cx.metricInfo);
  }

  /** SQL of the sequence numbers of matching records and their descendants (what a delete would remove). */
  selection(snap: Snapshot, level: Level, scope: RunScope, body: FilterRequest): Sql {
    return deleteQuery(planInput(this.#cx, snap, 'delete', level, scope, body));
  }

  /**
   * Deletes matching records and their descendants. Parents left without a child (a trace whose spans
   * all went stays, as an empty trace) are not rewritten: their row versions are marked childless in
   * the delete's own log entry, so has_children reads false from then on.
   */
  async delete(level: Level, scope: RunScope, body: FilterRequest): Promise<{ deleted: number; matched: number; childless: number }> {
    // Right after an older folder's open its child indexes are being rebuilt: sooner done than the
    // delete that does without them.
    await this.#records.childIndexesChecked();
    return this.#records.read(async (snap) => {
      const plan = await factPlan(this.#cx, snap, 'delete', level, scope, body);
      const steps: string[] = [];
      const { seqs, childless } = await deleteSet(this.#cx.db, snap, plan, scopeOf(scope, ['span']), steps);
      this.#cx.onPlan?.(steps);
      if (seqs.length === 0) return { deleted: 0, matched: 0, childless: 0 };
      await this.#records.deleteSeqs(seqs, childless);
      return { deleted: seqs.length, matched: seqs.length, childless: childless.length };
    });
  }

  /**
   * Records of a level matching a filter whose seq lies in [from, to], in seq order (see
   * plan.ts matchRowsQuery): the same filter a count applies, one window of the store at a time.
   */
  matchRows(
    level: Level,
    scope: RunScope,
    body: FilterRequest,
    window: { from: number; to: number },
    types: readonly string[] | null,
    unscored: readonly string[] = [],
    whole = false,
  ): Promise<Row[]> {
    return this.#records.read(async (snap) => {
      const plan = await factPlan(this.#cx, snap, 'count', level, scope, body);
      return this.#cx.db.all(matchRowsQuery(plan, window.from, window.to, types, unscored, whole));
    });
  }

  /** The highest seq given so far (windows of matchRows end there). */
  get lastSeq(): number {
    return this.#records.lastSeq;
  }

  availableColumns(level: Level, scope: RunScope, extraMetrics: Iterable<string> = []): Promise<ColumnDef[]> {
    return this.#records.read(async (snap) => availableColumns(snap, level, scope, extraMetrics, this.#cx.metricInfo));
  }
}
