// POST /projects/{project_id}/log_streams/search over the runs table, as the hosted service answers it: filters id,
// name (case-sensitive unless case_sensitive is false), created_by (`contains` also searches the
// creator's email), created_at, updated_at; sorts name, created_at, updated_at; default newest
// first. The engine adds num_spans / num_traces for the page when include_counts is true.
import { invalid } from '../errors.js';
import type { LogStreamFilter, LogStreamSearchBody, LogStreamSort } from '../schemas/log-streams.js';
import type { Catalog, Run } from './catalog.js';
import { caseFold, dateMatcher, idMatcher, textMatcher, type Loc } from './list-match.js';
import { instant, pageOf, sortRows, type PageFields, type SortKey } from './list-page.js';
import { runView, type RunView } from './project-view.js';

const FILTERS = ['id', 'name', 'created_by', 'created_at', 'updated_at'];

function predicate(f: LogStreamFilter, at: Loc, catalog: Catalog): (r: Run) => boolean {
  switch (f.name) {
    case 'id': {
      const m = idMatcher(f.operator, f.value, at);
      return (r) => m(r.id);
    }
    case 'name': {
      const m = textMatcher(f.operator, f.value, caseFold(f.case_sensitive, true), at);
      return (r) => m(r.name);
    }
    case 'created_by': {
      const m = idMatcher(f.operator, f.value, at);
      return (r) => m(r.created_by, catalog.userSummary(r.created_by)?.email ?? null);
    }
    case 'created_at': {
      const m = dateMatcher(f.operator, f.value, at);
      return (r) => m(r.created_at);
    }
    case 'updated_at': {
      const m = dateMatcher(f.operator, f.value, at);
      return (r) => m(r.updated_at);
    }
    default: {
      const unknown: never = f;
      throw invalid(
        [...at, 'name'],
        `Input should be one of ${FILTERS.map((n) => `'${n}'`).join(', ')} (unknown log stream filter)`,
        (unknown as { name?: unknown }).name,
        'union_tag_invalid',
      );
    }
  }
}

const byName = (r: Run): SortKey => r.name.toLowerCase();

function sortRuns(rows: Run[], sort: LogStreamSort | null): void {
  if (sort === null) {
    sortRows(rows, (r) => instant(r.created_at), false);
    return;
  }
  const asc = sort.ascending ?? true;
  switch (sort.name) {
    case 'name':
      sortRows(rows, byName, asc, (r) => r.name);
      return;
    case 'created_at':
      sortRows(rows, (r) => instant(r.created_at), asc, byName);
      return;
    case 'updated_at':
      sortRows(rows, (r) => instant(r.updated_at), asc, byName);
      return;
    default: {
      const unknown: never = sort;
      throw invalid(
        ['body', 'sort', 'name'],
        "Input should be one of 'name', 'created_at', 'updated_at'",
        (unknown as { name?: unknown }).name,
        'union_tag_invalid',
      );
    }
  }
}

/** The page of log streams (without counts). */
export function searchLogStreams(catalog: Catalog, projectId: string, body: LogStreamSearchBody): PageFields & { log_streams: RunView[] } {
  const project = catalog.project(projectId);
  const preds = (body.filters ?? []).map((f, i) => predicate(f, ['body', 'filters', i], catalog));
  const rows = catalog.runs(project.id, 'log_stream').filter((r) => preds.every((p) => p(r)));
  sortRuns(rows, body.sort ?? null);
  const page = pageOf(rows, body, ['body']);
  return {
    starting_token: page.starting_token,
    limit: page.limit,
    paginated: page.paginated,
    next_starting_token: page.next_starting_token,
    log_streams: page.items.map((r) => runView(catalog, r)),
  };
}
