// Support for metric-topk.ts: an upper bound on how many listed rows a filter can admit, counted in
// JavaScript over the top-k lists before the top-k attempt's statement runs. A selective filter (a few
// trace ids, one status code) admits almost none of a metric's best rows, and its attempt would come
// back short before the full keys query. Each leaf is tested loosely: equality and membership on the
// listed id, type, model and status columns (strings compared ignoring case, so never stricter than
// SQL), comparisons of a listed metric value; anything else, and anything under a NOT, counts as a
// possible match.
// Returns: a count never below the true one, so skipping the attempt when it cannot fill the page
// changes no answer.
import type { Expr, Leaf } from '../filter-ast.js';
import type { TopList, TopRow } from './topk-cache.js';

const STRING_COLUMNS = new Set(['id', 'session_id', 'trace_id', 'parent_id', 'type', 'model']);

const COMPARE: Record<string, (a: number, b: number) => boolean> = {
  eq: (a, b) => a === b,
  gt: (a, b) => a > b,
  gte: (a, b) => a >= b,
  lt: (a, b) => a < b,
  lte: (a, b) => a <= b,
};

function leafMay(l: Leaf, r: TopRow, metricIds: Readonly<Record<string, number>>): boolean {
  if (l.kind === 'number' && l.column.metric !== undefined && COMPARE[l.op] && typeof l.value === 'number' && Number.isFinite(l.value)) {
    // A metric's own value, listed with the row (a metric the segment lacks: none). A row without a
    // value matches no comparison; NaN is left to SQL.
    const id = metricIds[l.column.metric];
    if (id === undefined) return true;
    const v = r.m[id];
    if (v === undefined || v === null) return false;
    return Number.isNaN(v) || COMPARE[l.op]!(v, l.value);
  }
  if (l.kind === 'fully_annotated' || l.column.metric !== undefined || l.column.sql !== `r.${l.column.id}`) return true;
  if ((l.kind === 'id' || l.kind === 'text') && STRING_COLUMNS.has(l.column.id) && (l.op === 'eq' || l.op === 'one_of')) {
    const v = r[l.column.id as keyof TopRow];
    if (v === null || v === undefined) return false;
    const have = String(v).toLowerCase();
    return (Array.isArray(l.value) ? l.value : [l.value]).some((x) => String(x).toLowerCase() === have);
  }
  if (l.kind === 'number' && l.column.id === 'status_code' && l.op === 'eq')
    return r.status_code !== null && Number(r.status_code) === Number(l.value);
  return true;
}

/** Whether the listed row may match `e` (never false for a row that matches). */
export function may(e: Expr, r: TopRow, ids: Readonly<Record<string, number>>): boolean {
  if ('leaf' in e) return leafMay(e.leaf, r, ids);
  if ('and' in e) return e.and.every((x) => may(x, r, ids));
  if ('or' in e) return e.or.some((x) => may(x, r, ids));
  return true;
}

/** At most how many rows of the lists `filter` can admit (stops counting at `enough`); `metricIds`: the manifest's. */
export function listedMatchBound(
  filter: Expr | null,
  lists: readonly TopList[],
  enough: number,
  metricIds: Readonly<Record<string, number>> = {},
): number {
  let n = 0;
  for (const l of lists) {
    for (const r of l.rows) {
      if (filter === null || may(filter, r, metricIds)) n++;
      if (n >= enough) return n;
    }
  }
  return n;
}
