// POST /v2/scorers/list over the in-memory scorer catalog: filter, sort, page, then present only the
// page (permissions are evaluated for the rows returned, not for the whole catalog).
// Sorts: name (case-insensitive, then as written), updated_at, and enabled_in_run /
// enabled_in_playground, whose key is "enabled under the given id" (false before true when
// ascending), ties broken by name. Playgrounds do not exist here: their scorer settings would live
// in the same table as runs', keyed by the playground id, so enabled_in_playground reads that table
// with the given id. Without a sort the list is ordered by name. Ties always end with the id.
import { invalid } from '../errors.js';
import type { ListScorersBody, ListScorersResponse, ScorerSort } from '../schemas/scorers.js';
import type { Catalog, User } from './catalog.js';
import { instant, pageOf, sortRows, type PageRequest, type SortKey } from './list-page.js';
import type { ScorerAction } from './permissions.js';
import type { ScorerRow } from './scorer-row.js';
import { scorerPredicate } from './scorer-filters.js';
import { visibleProjectIds } from './members.js';
import { enabledScorerIds } from './scorer-settings.js';

export interface ScorerPageQuery extends PageRequest {
  actions?: readonly ScorerAction[];
}

const byName = (r: ScorerRow): SortKey => r.name.toLowerCase();

/** Global scorers, the caller's own, and those scoped to a project the caller can see. */
export function scorerVisible(row: ScorerRow, visible: Set<string> | null, user: User | null): boolean {
  if (visible === null || row.is_global) return true;
  if (row.created_by !== null && row.created_by === user?.id) return true;
  return row.scope_project_ids.some((id) => visible.has(id));
}

export function listScorers(catalog: Catalog, body: ListScorersBody, query: ScorerPageQuery, user: User | null): ListScorersResponse {
  const emails = new Map<string, string | null>();
  const emailOf = (id: string | null): string | null => {
    if (id === null) return null;
    let e = emails.get(id);
    if (e === undefined) emails.set(id, (e = catalog.userSummary(id)?.email ?? null));
    return e;
  };
  const keep = scorerPredicate(body.filters ?? [], ['body', 'filters'], emailOf);
  const visible = visibleProjectIds(catalog, user);
  const rows = catalog.scorers.rows().filter((r) => scorerVisible(r, visible, user) && keep(r));
  sortScorers(catalog, rows, body.sort ?? null);
  const page = pageOf(rows, query, ['query']);
  const actions = query.actions ?? [];
  return {
    starting_token: page.starting_token,
    limit: page.limit,
    paginated: page.paginated,
    next_starting_token: page.next_starting_token,
    scorers: page.items.map((r) => catalog.scorers.present(r, user, actions)),
  };
}

function sortScorers(catalog: Catalog, rows: ScorerRow[], sort: ScorerSort | null): void {
  if (sort === null) {
    sortRows(rows, byName, true, (r) => r.name);
    return;
  }
  const asc = sort.ascending ?? true;
  switch (sort.name) {
    case 'name':
      sortRows(rows, byName, asc, (r) => r.name);
      return;
    case 'updated_at':
      sortRows(rows, (r) => instant(r.updated_at), asc, byName);
      return;
    case 'enabled_in_run':
    case 'enabled_in_playground': {
      if (typeof sort.value !== 'string')
        throw invalid(['body', 'sort', 'value'], 'Field required: the run (or playground) id', undefined, 'missing');
      const enabled = enabledScorerIds(catalog, sort.value);
      sortRows(rows, (r) => (enabled.has(r.id) ? 1 : 0), asc, byName);
      return;
    }
    default: {
      const unknown: never = sort;
      throw invalid(
        ['body', 'sort', 'name'],
        "Input should be one of 'name', 'updated_at', 'enabled_in_run', 'enabled_in_playground'",
        (unknown as { name?: unknown }).name,
        'union_tag_invalid',
      );
    }
  }
}
