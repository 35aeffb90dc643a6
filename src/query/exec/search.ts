// A search (or partial search) of one level, top-down: plan the request -> choose a strategy for the
// page's keys and run it (page-keys.ts) -> read what the keys did not carry (the rows, roll-ups, child
// counts: page-reads.ts) -> assemble the page (page-assembly.ts). Roll-ups and child counts are
// computed for the page's records only.
import type { Row } from '../../db/database.js';
import { invalid } from '../../errors.js';
import type { Level } from '../columns.js';
import type { PlanInput } from '../plan.js';
import type { PartialSearchRequest } from '../../schemas/query.js';
import type { Snapshot } from '../../storage/snapshot/snapshot.js';
import type { ExecContext } from './exec-context.js';
import { assemblePage, type SearchResult } from './page-assembly.js';
import { findPageKeys, type PageKey, type PageKeys } from './page-keys.js';
import { childCounts, fetchLocated, fetchRows, pageRollUps } from './page-reads.js';
import { addRolled, lightRow } from './page-rows.js';
import { pageShape, selectionOf, shownFromKeys, type PageShape } from './page-shape.js';
import { factPlan, KINDS, scopeOf, type RunScope } from './plan-input.js';
import { COLUMN_NAMES } from '../../record/record-columns.js';

export const MAX_PAGE_SIZE = 1000;

/** A whole record's stored columns (seq is the store's, never shown). */
const WHOLE = COLUMN_NAMES.filter((c) => c !== 'seq');

export async function search(
  cx: ExecContext,
  snap: Snapshot,
  level: Level,
  scope: RunScope,
  body: PartialSearchRequest,
  partial: boolean,
): Promise<SearchResult> {
  const start = body.pagination?.starting_token ?? body.starting_token ?? 0;
  const limit = body.pagination?.limit ?? body.limit ?? 100;
  if (limit > MAX_PAGE_SIZE)
    throw invalid(
      ['body', body.pagination?.limit != null ? 'pagination' : 'limit'],
      `Input should be less than or equal to ${MAX_PAGE_SIZE}`,
      limit,
      'less_than_equal',
    );
  // 1. Plan: the filter and sort over the level's records, and what the page shows.
  const plan = await factPlan(cx, snap, partial ? 'partial_search' : 'search', level, scope, body);
  const shape = pageShape(partial ? selectionOf(level, body.select_columns ?? null, cx.metricInfo, cx.scorerMetric) : null, scope, plan);
  const steps: string[] = [];
  // 2. Choose a strategy and run it: the page's keys, and one more to tell whether more follow.
  const keys = await findPageKeys(
    cx.keys,
    snap,
    scopeOf(scope, KINDS[level]),
    plan,
    limit,
    start,
    shape.keyColumns,
    shape.shownMetrics,
    steps,
    !shape.fromKeys,
    // A page of the id columns alone may carry only its keys: the columns are then fetched for it.
    shape.fromKeys && shape.shownMetrics.length === 0 && !shape.keyColumns.includes('has_children'),
  );
  for (const k of keys) for (const c in shape.constant) if (!(c in k.row)) k.row[c] = shape.constant[c];
  const more = keys.length > limit;
  const pageKeys = more ? keys.slice(0, limit) : keys;
  // 3. What the keys did not carry: the rows' columns, roll-ups, child counts.
  const rows = await pageRows(cx, snap, level, scope, shape, keys, pageKeys, steps);
  const rolled = await rollUps(cx, snap, level, scope, plan, shape, keys, pageKeys, steps);
  const counts = body.include_counts && rows.length > 0 && level !== 'span' ? await childCounts(cx.db, snap, level, scope, rows) : null;
  if (counts) steps.push('child counts');
  cx.onPlan?.(steps);
  // 4. The page.
  return assemblePage({
    level,
    rows,
    rolled,
    counts,
    selection: shape.selection,
    whole: !partial,
    withMetadata: Boolean(body.include_code_metric_metadata),
    rollUp: cx.rollUp,
    derived: cx.derivedStatuses,
    start,
    limit,
    more,
  });
}

/** The page's rows: the keys' own rows when they carry every selected column, else fetched by seq. */
async function pageRows(
  cx: ExecContext,
  snap: Snapshot,
  level: Level,
  scope: RunScope,
  shape: PageShape,
  keys: PageKeys,
  pageKeys: readonly PageKey[],
  steps: string[],
): Promise<Row[]> {
  const sel = shape.selection;
  if (sel !== null && !keys.narrow && shownFromKeys(shape, keys.ownMetrics)) {
    return pageKeys.map((k) =>
      lightRow(sel.physical.includes('created_at') ? { ...k.row, created_at: k.c } : k.row, sel.physical, keys.ownMetrics),
    );
  }
  if (keys.narrow || keys.located) {
    // The keys carry id (their tie-break, read anyway) and the scope's constant columns: those are not
    // read again (at 10M, a fetch of the id columns without id, project_id and run_id took 40% less).
    const wanted = sel ? sel.physical : WHOLE;
    const carried = wanted.filter((c) => pageKeys.every((k) => k.row[c] !== undefined));
    // A whole record's has_children must be the keys' (the snapshot's child overrides applied there),
    // not the file's: without it the page is fetched by seq.
    if (sel !== null || carried.includes('has_children')) {
      steps.push('fetch (located)');
      return fetchLocated(cx.db, snap, level, scope, wanted, pageKeys, carried);
    }
  }
  const bySeq = pageKeys.filter((k): k is PageKey & { seq: number } => k.seq !== null);
  if (bySeq.length < pageKeys.length) throw new Error('internal: a page to fetch was planned without row locators');
  steps.push('fetch');
  return fetchRows(cx.db, snap, level, scope, sel ? sel.physical : '*', bySeq);
}

/**
 * Roll-ups the page shows, by record id. Only records with children have them (has_children comes
 * with the keys), and only of metrics some descendant carries; those the keys query rolled up for its
 * filter or sort came with it.
 */
async function rollUps(
  cx: ExecContext,
  snap: Snapshot,
  level: Level,
  scope: RunScope,
  plan: PlanInput,
  shape: PageShape,
  keys: PageKeys,
  pageKeys: readonly PageKey[],
  steps: string[],
): Promise<Map<string, Map<string, number>>> {
  const sel = shape.selection;
  const carried = plan.descendantMetrics;
  const rolled = new Map<string, Map<string, number>>();
  for (const k of pageKeys) {
    for (const [name, col] of keys.rolledMetrics) {
      const v = k.row[col];
      if (v !== null && v !== undefined) addRolled(rolled, String(k.row['id']), name, v);
    }
  }
  const names =
    sel === null || sel.allMetrics
      ? null
      : [...sel.metrics].filter((m) => (carried === undefined || carried.has(m)) && !keys.rolledMetrics.has(m));
  const wanted = names === null ? carried === undefined || carried.size > 0 : names.length > 0;
  const parents = pageKeys.filter((k) => level !== 'span' || k.row['has_children'] !== false).map((k) => String(k.row['id']));
  if (wanted && parents.length > 0) {
    steps.push('page roll-ups');
    const traces = [...new Set(pageKeys.map((k) => String(k.row['trace_id'])))];
    const more = await pageRollUps(cx.db, snap, level, scope, parents, traces, names, cx.rollUp);
    for (const [id, m] of more) for (const [name, v] of m) addRolled(rolled, id, name, v);
  }
  return rolled;
}
