// The one semantic check of a record query body, for search, partial search, count and delete alike:
// the filters and filter tree all four take, and the sort only the two searches take. Count and delete
// have no sort in the service's contract, so a `sort` sent to them is an unknown field and
// is ignored like any other, never read half-way (it used to reach the planner unchecked: a 500).
import { validateSort, type SortSpec } from './plan.js';
import { validateFilters } from './validate-filter.js';
import type { Level, MetricInfo } from './columns.js';
import type { Expr } from './filter-ast.js';

export interface RecordQuery {
  readonly filter: Expr | null;
  readonly sort: SortSpec | null;
}

export type QueryKind = 'search' | 'partial_search' | 'count' | 'delete';

/** Fields a record query body may hold that this check reads (the wire schemas check their types first). */
export interface RecordQueryBody {
  filters?: unknown[] | null;
  filter_tree?: unknown;
  sort?: { column_id?: string | null; name?: string | null; ascending?: boolean | null; sort_type?: string | null } | null;
}

export function parseRecordQuery(
  kind: QueryKind,
  level: Level,
  body: RecordQueryBody,
  metrics?: (name: string) => MetricInfo | undefined,
): RecordQuery {
  const filter = validateFilters({ filters: body.filters ?? null, filter_tree: body.filter_tree }, level, metrics);
  const sorted = kind === 'search' || kind === 'partial_search';
  return { filter, sort: sorted ? validateSort(body.sort, level, metrics) : null };
}
