// Sorting and offset paging shared by the catalog lists. Sorts are stable and total: equal keys fall
// back to the id, so pages never overlap or skip rows between requests. Missing values sort last in
// either direction. next_starting_token is null on the last page (the official client loops until
// it is), and `paginated` says whether another page follows.
import { invalid } from '../errors.js';
import type { Loc } from './list-match.js';

export const DEFAULT_LIMIT = 100;
/** Largest page a catalog list returns. */
export const MAX_LIMIT = 1000;

export interface PageRequest {
  starting_token?: number | null;
  limit?: number | null;
}

export interface PageFields {
  starting_token: number;
  limit: number;
  paginated: boolean;
  next_starting_token: number | null;
}

export type SortKey = string | number | null | undefined;

/**
 * Sorts rows in place by a key computed once per row (not per comparison). `then` breaks ties,
 * always ascending (e.g. by name within "enabled first"), before the id does.
 */
export function sortRows<T extends { id: string }>(
  rows: T[],
  key: (row: T) => SortKey,
  ascending: boolean,
  then?: (row: T) => SortKey,
): T[] {
  const keyed = rows.map((row) => ({ row, k: key(row), t: then ? then(row) : null }));
  const dir = ascending ? 1 : -1;
  keyed.sort(
    (a, b) =>
      nullsLast(a.k, b.k) || compareKeys(a.k, b.k) * dir || nullsLast(a.t, b.t) || compareKeys(a.t, b.t) || compareKeys(a.row.id, b.row.id),
  );
  for (let i = 0; i < keyed.length; i++) rows[i] = keyed[i]!.row;
  return rows;
}

/** Missing keys go last whatever the direction, so they are ordered before the direction applies. */
function nullsLast(a: SortKey, b: SortKey): number {
  const an = a == null;
  const bn = b == null;
  return an === bn ? 0 : an ? 1 : -1;
}

function compareKeys(a: SortKey, b: SortKey): number {
  if (a == null || b == null) return 0;
  return a < b ? -1 : a > b ? 1 : 0;
}

export function pageOf<T>(rows: readonly T[], req: PageRequest, loc: Loc): { items: T[] } & PageFields {
  const start = req.starting_token ?? 0;
  const limit = req.limit ?? DEFAULT_LIMIT;
  if (!Number.isInteger(start) || start < 0)
    throw invalid([...loc, 'starting_token'], 'Input should be greater than or equal to 0', start, 'greater_than_equal');
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
    throw invalid([...loc, 'limit'], `Input should be between 1 and ${MAX_LIMIT}`, limit, 'value_error');
  const items = rows.slice(start, start + limit);
  const next = start + items.length < rows.length ? start + items.length : null;
  return { items, starting_token: start, limit, paginated: next !== null, next_starting_token: next };
}

/** Milliseconds of an ISO timestamp, for date sorts. */
export function instant(iso: string | null | undefined): number | null {
  if (iso == null) return null;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? null : t;
}
