// Search, partial search, count, delete and available columns for one level of the tree, as the
// engine runs them: validate -> plan (src/query) -> run in DuckDB -> shape records. Roll-ups and child
// counts for a page are computed for that page's records only; page-keys.ts finds a page's keys.
import type { Row, SqlRunner } from '../../db/database.js';
import { ident, sql, type Sql } from '../sql.js';
import { invalid } from '../../errors.js';
import { appliesAt, METRIC_PREFIX, metricColumn, resolveColumn, STANDARD_COLUMNS, type ColumnDef, type Level, type MetricInfo, type RollUpMethod } from '../columns.js';
import { countQuery, deleteQuery, fetchQuery, type PlanInput } from '../plan.js';
import { metricsOf } from '../filter-ast.js';
import { columnsOf } from '../match-facts.js';
import { parseRecordQuery, type QueryKind } from '../record-request.js';
import type { FilterRequest, PartialSearchRequest, SearchRequest } from '../../schemas/query.js';
import type { RecordKind } from '../../record/record-columns.js';
import type { RecordStore, Scope } from '../../storage/record-store.js';
import type { Snapshot } from '../../storage/snapshot/snapshot.js';
import { DataFactsCache } from './data-facts.js';
import { countBySegment, SegmentCounts } from './count-cache.js';
import { countByTokens } from './token-count.js';
import { pageRollUpsQuery } from './page-rollups.js';
import { deleteSet } from './record-delete.js';
import { FREE_TEXT, type PlanEstimate } from './match-estimate.js';
import { defaultMetricInfo } from '../../catalog/metric-info.js';
import { TopKCache } from './topk-cache.js';
import { storedToRecord } from '../../record/row-codec.js';
import { addRolled, lightRow, pick, roundRollUp } from './page-rows.js';
import { findPageKeys, type PageKeySettings } from './page-keys.js';

export const MAX_PAGE_SIZE = 1000;

const KINDS: Record<Level, readonly RecordKind[]> = { span: ['span'], trace: ['trace'], session: ['session'] };
const DESCENDANTS: Record<Level, readonly RecordKind[]> = { span: ['span'], trace: ['span'], session: ['span', 'trace'] };
/** Columns every partial record carries, whatever was selected. */
const BASE_COLUMNS = ['id', 'type', 'project_id', 'run_id', 'session_id', 'trace_id', 'parent_id'];

export interface RunScope {
  projectId: string;
  runId?: string;
}

export interface SearchResult {
  records: Record<string, unknown>[];
  num_rows: number;
  num_records: number;
  starting_token: number;
  limit: number;
  paginated: boolean;
  next_starting_token: number | null;
  last_row_id: string | null;
}


export class RecordQueries {
  readonly #records: RecordStore;
  readonly #db: SqlRunner;
  readonly #metricInfo: (name: string) => MetricInfo | undefined;
  readonly #facts: DataFactsCache;
  /** How a page's keys are found (page-keys.ts). */
  readonly #keys: PageKeySettings;
  /** Told the steps each search or count ran (benchmarks and tests look at the plan). */
  readonly #onPlan: ((steps: readonly string[]) => void) | undefined;
  /** Each segment's count per filter (count-cache.ts). */
  readonly #counts: SegmentCounts | null;
  /** Whether counts of text filters may use segments' token indexes (token-count.ts). */
  readonly #tokenCounts: boolean;

  constructor(records: RecordStore, db: SqlRunner, options: { windowRows?: number; metricTopK?: boolean; segmentCounts?: boolean; tokenCounts?: boolean; segmentCountMinRows?: number; topKRows?: number; planEstimate?: PlanEstimate; estimateMinGroups?: number; metricInfo?: (name: string) => MetricInfo | undefined; onPlan?: (steps: readonly string[]) => void } = {}) {
    this.#onPlan = options.onPlan;
    const metricInfo = options.metricInfo ?? defaultMetricInfo;
    this.#records = records;
    this.#db = db;
    this.#facts = new DataFactsCache(db, records.notedColumns);
    this.#keys = {
      db,
      topK: options.metricTopK === false ? null : new TopKCache(db, options.topKRows),
      windowRows: options.windowRows ?? 8_192,
      estimateMode: options.planEstimate ?? 'measured',
      estimateMinGroups: options.estimateMinGroups,
    };
    this.#counts = options.segmentCounts === false ? null : new SegmentCounts(options.segmentCountMinRows);
    this.#tokenCounts = options.tokenCounts !== false;
    this.#metricInfo = (name) => metricInfo(name) ?? defaultMetricInfo(name);
  }

  #rollUp = (name: string): RollUpMethod => this.#metricInfo(name)?.roll_up_method ?? 'average';

  #plan(snap: Snapshot, kind: QueryKind, level: Level, scope: RunScope, body: FilterRequest & { sort?: SearchRequest['sort'] }): PlanInput {
    const { filter, sort } = parseRecordQuery(kind, level, body, this.#metricInfo);
    const s = (kinds: readonly RecordKind[]): Scope => ({ projectId: scope.projectId, ...(scope.runId !== undefined ? { runId: scope.runId } : {}), kinds });
    return {
      level,
      base: (metrics, text, created) => snap.source(s(KINDS[level]), metrics, text, created),
      descendants: (metrics) => snap.source(s(DESCENDANTS[level]), metrics),
      filter,
      sort,
      rollUp: this.#rollUp,
      descendantMetrics: snap.metricNames(s(DESCENDANTS[level])),
    };
  }

  /** The plan with facts about the stored spans, when they could spare a roll-up (span metrics). */
  async #factPlan(snap: Snapshot, kind: QueryKind, level: Level, scope: RunScope, body: FilterRequest & { sort?: SearchRequest['sort'] }): Promise<PlanInput> {
    const plan = this.#plan(snap, kind, level, scope, body);
    if (level !== 'span' || (metricsOf(plan.filter).size === 0 && plan.sort?.column.metric === undefined)) return plan;
    return { ...plan, facts: await this.#facts.facts(snap, this.#scope(scope, ['span']), columnsOf(plan.filter)) };
  }

  search(level: Level, scope: RunScope, body: PartialSearchRequest, partial: boolean): Promise<SearchResult> {
    return this.#records.read((snap) => this.#search(snap, level, scope, body, partial));
  }

  async #search(snap: Snapshot, level: Level, scope: RunScope, body: PartialSearchRequest, partial: boolean): Promise<SearchResult> {
    const start = body.pagination?.starting_token ?? body.starting_token ?? 0;
    const limit = body.pagination?.limit ?? body.limit ?? 100;
    if (limit > MAX_PAGE_SIZE) throw invalid(['body', body.pagination?.limit != null ? 'pagination' : 'limit'], `Input should be less than or equal to ${MAX_PAGE_SIZE}`, limit, 'less_than_equal');
    const plan = await this.#factPlan(snap, partial ? 'partial_search' : 'search', level, scope, body);
    const selection = partial ? this.#selection(level, body.select_columns ?? null) : null;
    const steps: string[] = [];
    // The keys query also returns the small base columns, has_children and the own values of the
    // metrics it reads; a selection within those needs no fetch.
    const shown = selection !== null && !selection.allMetrics ? [...selection.metrics] : [];
    // The scope's project (and its run, when given) is one value for every row it holds: filled in,
    // not decoded for every row the keys query looks at.
    const constant: Row = { project_id: scope.projectId, ...(scope.runId !== undefined ? { run_id: scope.runId } : {}) };
    // A page shown from the keys alone (its columns among the keys', its metrics read there) needs no
    // row locators; has_children only tells which rows can have roll-ups.
    const fromKeys = selection !== null && !selection.allMetrics && selection.physical.every((c) => BASE_COLUMNS.includes(c) || c === 'has_children' || c === 'metrics');
    const children = selection === null || selection.allMetrics || selection.metrics.size > 0 || selection.physical.includes('has_children');
    // Selected columns the keys query reads anyway (its filter's, short of free text) come along, and
    // created_at is its sort key: a page of only those needs no fetch, one statement less (while
    // logging goes on, each statement also waits its turn on a busy main thread).
    const tested = columnsOf(plan.filter);
    const withKeys = selection === null ? [] : selection.physical.filter((c) => !BASE_COLUMNS.includes(c) && tested.has(c) && !FREE_TEXT.has(c));
    const keyColumns = [...BASE_COLUMNS, ...(children ? ['has_children'] : []), ...withKeys].filter((c) => !(c in constant));
    const keys = await findPageKeys(this.#keys, snap, this.#scope(scope, KINDS[level]), plan, limit, start, keyColumns, shown, steps, !fromKeys);
    for (const k of keys) for (const c in constant) if (!(c in k.row)) k.row[c] = constant[c];
    const more = keys.length > limit;
    const pageKeys = more ? keys.slice(0, limit) : keys;
    const inKeys = selection !== null && !selection.allMetrics && [...selection.metrics].every((m) => keys.ownMetrics.has(m));
    const light = selection !== null && selection.physical.every((c) => BASE_COLUMNS.includes(c) || c === 'has_children' || withKeys.includes(c) || (c === 'created_at' && !fromKeys) || (c === 'metrics' && inKeys));
    let page: Row[];
    if (light) page = pageKeys.map((k) => lightRow(selection.physical.includes('created_at') ? { ...k.row, created_at: k.c } : k.row, selection.physical, keys.ownMetrics));
    else if (pageKeys.some((k) => k.row['seq'] === null)) throw new Error('internal: a page to fetch was planned without row locators');
    else {
      steps.push('fetch');
      page = await this.#fetch(snap, level, scope, selection ? selection.physical : '*', pageKeys);
    }
    // Only records with children have roll-ups (has_children comes with the keys), and only of metrics
    // some descendant carries. Those the keys query rolled up for its filter or sort came with it.
    const carried = plan.descendantMetrics;
    const rolled = new Map<string, Map<string, number>>();
    for (const k of pageKeys) {
      for (const [name, col] of keys.rolledMetrics) {
        const v = k.row[col];
        if (v !== null && v !== undefined) addRolled(rolled, String(k.row['id']), name, v);
      }
    }
    const names = selection === null || selection.allMetrics ? null : [...selection.metrics].filter((m) => (carried === undefined || carried.has(m)) && !keys.rolledMetrics.has(m));
    const wantMetrics = names === null ? carried === undefined || carried.size > 0 : names.length > 0;
    const parents = pageKeys.filter((k) => level !== 'span' || k.row['has_children'] !== false).map((k) => String(k.row['id']));
    if (wantMetrics && parents.length > 0) {
      steps.push('page roll-ups');
      const more = await this.#pageRollUps(snap, level, scope, parents, [...new Set(pageKeys.map((k) => String(k.row['trace_id'])))], names);
      for (const [id, m] of more) for (const [name, v] of m) addRolled(rolled, id, name, v);
    }
    const counts = body.include_counts && page.length > 0 && level !== 'span' ? await this.#childCounts(snap, level, scope, page) : null;
    if (counts) steps.push('child counts');
    this.#onPlan?.(steps);
    const records = page.map((row) => {
      const rec = storedToRecord(row, !partial);
      if ('metrics' in rec) {
        const own = pick(rec['metrics'] as Record<string, unknown>, selection);
        rec['metrics'] = own;
        rec['metric_info'] = this.#metricStatus(own, pick(Object.fromEntries(rolled.get(String(row['id'])) ?? []), selection), Boolean(body.include_code_metric_metadata));
      }
      if (counts) rec[level === 'trace' ? 'num_spans' : 'num_traces'] = counts.get(String(row['id'])) ?? 0;
      return rec;
    });
    return {
      records,
      num_rows: records.length,
      num_records: records.length,
      starting_token: start,
      limit,
      paginated: more,
      next_starting_token: more ? start + records.length : null,
      last_row_id: records.length > 0 ? String(records[records.length - 1]!['id']) : null,
    };
  }

  /** The page's rows by seq, in the order of the keys. */
  async #fetch(snap: Snapshot, level: Level, scope: RunScope, columns: readonly string[] | '*', keys: { seq: number; c: number }[]): Promise<Row[]> {
    if (keys.length === 0) return [];
    let lo = Infinity;
    let hi = -Infinity;
    for (const k of keys) {
      lo = Math.min(lo, k.c);
      hi = Math.max(hi, k.c);
    }
    const withSeq = columns === '*' ? columns : [...new Set([...columns, 'seq'])];
    // Only the segments and memory tables whose rows may lie within the page's created_at span are
    // listed (each listed file costs DuckDB its metadata, each memory table a scan).
    const q = fetchQuery(snap.source(this.#scope(scope, KINDS[level]), [], [], [[lo, hi]]), withSeq, keys.map((k) => k.seq), [lo, hi]);
    const rows = await this.#db.all(q);
    const bySeq = new Map(rows.map((r) => [Number(r['seq']), r]));
    return keys.map((k) => bySeq.get(k.seq)).filter((r): r is Row => r !== undefined);
  }

  #scope(scope: RunScope, kinds: readonly RecordKind[]): Scope {
    return { projectId: scope.projectId, ...(scope.runId !== undefined ? { runId: scope.runId } : {}), kinds };
  }

  count(level: Level, scope: RunScope, body: FilterRequest): Promise<number> {
    return this.#records.read(async (snap) => {
      const plan = await this.#factPlan(snap, 'count', level, scope, body);
      const steps: string[] = [];
      const byTokens = this.#tokenCounts ? await countByTokens(this.#db, snap, this.#scope(scope, KINDS[level]), plan, steps) : null;
      if (byTokens !== null) {
        this.#onPlan?.(steps);
        return byTokens;
      }
      const kept = this.#counts && (await countBySegment(this.#db, this.#counts, snap, this.#scope(scope, KINDS[level]), plan, steps));
      if (kept !== null) {
        this.#onPlan?.(steps);
        return kept;
      }
      const q = countQuery(plan);
      this.#onPlan?.([`count${q.rolled.length > 0 ? ` + roll-up of ${q.rolled.join(', ')}` : ''}`]);
      return Number((await this.#db.all(q.sql))[0]!['n']);
    });
  }

  /** Throws InvalidRequestError for a filter the level cannot take (what a query would throw later). */
  validateFilter(level: Level, body: FilterRequest): void {
    parseRecordQuery('delete', level, body, this.#metricInfo);
  }

  /** SQL of the sequence numbers of matching records and their descendants (what a delete would remove). */
  selection(snap: Snapshot, level: Level, scope: RunScope, body: FilterRequest): Sql {
    return deleteQuery(this.#plan(snap, 'delete', level, scope, body));
  }

  /**
   * Deletes matching records and their descendants. Parents left without a child (a trace whose spans
   * all went stays, as an empty trace) are not rewritten: their row versions are marked childless in
   * the delete's own log entry, so has_children reads false from then on.
   */
  delete(level: Level, scope: RunScope, body: FilterRequest): Promise<{ deleted: number; matched: number; childless: number }> {
    return this.#records.read((snap) => this.#delete(snap, level, scope, body));
  }

  async #delete(snap: Snapshot, level: Level, scope: RunScope, body: FilterRequest): Promise<{ deleted: number; matched: number; childless: number }> {
    const { seqs, childless } = await deleteSet(this.#db, snap, await this.#factPlan(snap, 'delete', level, scope, body), this.#scope(scope, ['span']));
    if (seqs.length === 0) return { deleted: 0, matched: 0, childless: 0 };
    await this.#records.deleteSeqs(seqs, childless);
    return { deleted: seqs.length, matched: seqs.length, childless: childless.length };
  }

  async availableColumns(level: Level, scope: RunScope, extraMetrics: Iterable<string> = []): Promise<ColumnDef[]> {
    const standard = STANDARD_COLUMNS.filter((c) => appliesAt(c, level));
    // Segments list their metrics in the manifest, memory tables in their notes: nothing is scanned.
    // (A metric whose last record was deleted stays listed until its rows leave the files.)
    const present = await this.#records.read(async (snap) => snap.metricNames(this.#scope(scope, [...new Set([...KINDS[level], ...DESCENDANTS[level]])])));
    const names = [...new Set([...present, ...extraMetrics])].sort();
    const metrics = names.map((n) => metricColumn(n, { ...this.#metricInfo(n), is_empty: !present.has(n) }));
    return [...standard, ...metrics];
  }

  /** Which physical columns a partial search reads, and which metrics it returns. */
  #selection(level: Level, sel: PartialSearchRequest['select_columns']): { physical: string[]; metrics: Set<string>; allMetrics: boolean } {
    const physical = new Set(BASE_COLUMNS);
    const metrics = new Set<string>();
    const allMetrics = Boolean(sel?.include_all_metrics || sel?.includes_metric_columns);
    (sel?.column_ids ?? []).forEach((id, i) => {
      const c = resolveColumn(id, level, this.#metricInfo);
      if (!c) throw invalid(['body', 'select_columns', 'column_ids', i], `unknown column "${id}" for ${level}s`, id);
      if (c.metric !== undefined) metrics.add(c.metric);
      else physical.add(c.id);
      if (c.id === 'input' || c.id === 'output') physical.add(`${c.id}_json`);
      if (c.id === 'tools' || c.id === 'input' || c.id === 'output') physical.add('extra');
    });
    for (const name of sel?.metric_columns_names ?? []) metrics.add(name);
    if (allMetrics || metrics.size > 0) physical.add('metrics');
    return { physical: [...physical], metrics, allMetrics };
  }

  /**
   * `metrics` keeps exactly what was logged; `metric_info` (COMPAT.md 5.5's MetricStatus) reports each
   * value, own ('success') or rolled up from descendants where the record has none ('roll_up').
   */
  #metricStatus(own: Record<string, unknown>, rolled: Record<string, unknown>, withMetadata: boolean): Record<string, unknown> | null {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(own)) out[k] = withMetadata ? { status_type: 'success', value: v, metadata: null } : { status_type: 'success', value: v };
    // Rolled-up entries in name order, so the same record always reads the same.
    for (const k of Object.keys(rolled).sort()) if (out[k] === undefined) out[k] = { status_type: 'roll_up', value: rolled[k], roll_up_method: this.#rollUp(k) };
    return Object.keys(out).length > 0 ? out : null;
  }

  /** Roll-ups of every metric for the page's records (those that can have any: `ids`, of `traces`) from their descendants (own values win later). */
  async #pageRollUps(snap: Snapshot, level: Level, scope: RunScope, ids: string[], traces: string[], metrics: readonly string[] | null): Promise<Map<string, Map<string, number>>> {
    const s = { projectId: scope.projectId, ...(scope.runId !== undefined ? { runId: scope.runId } : {}) };
    const rows = await this.#db.all(pageRollUpsQuery(snap, level, s, DESCENDANTS[level], ids, traces, metrics));
    const out = new Map<string, Map<string, number>>();
    for (const r of rows) {
      const name = String(r['name']);
      const v = r[this.#rollUp(name)];
      if (v === null || v === undefined) continue;
      addRolled(out, String(r['id']), name, v);
    }
    return out;
  }

  /** Spans per trace, or traces per session, for the page's records. */
  async #childCounts(snap: Snapshot, level: Level, scope: RunScope, page: Row[]): Promise<Map<string, number>> {
    const kind: RecordKind = level === 'trace' ? 'span' : 'trace';
    const link = ident(level === 'trace' ? 'trace_id' : 'session_id');
    const src = snap.source({ projectId: scope.projectId, ...(scope.runId !== undefined ? { runId: scope.runId } : {}), kinds: [kind] });
    const ids = page.map((r) => String(r['id']));
    const rows = await this.#db.all(sql`SELECT ${link} AS id, count(*) AS n FROM ${src.sql} WHERE list_contains(${ids}::VARCHAR[], ${link}) GROUP BY 1`);
    return new Map(rows.map((r) => [String(r['id']), Number(r['n'])]));
  }
}

export { METRIC_PREFIX };
