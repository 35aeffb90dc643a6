// Project lists: POST /v2/projects/paginated (v2) and the bare POST /projects/paginated (v1, the
// shape galileo-generated 0.2.14 reads). Run counts are counted from the runs table on every
// request, never stored. With metric_id, only log streams whose scorer settings enable that scorer
// count (num_logstreams, the log_streams list, and the num_logstreams filter and sort all see the
// narrowed number). `bookmark` is the caller's own bookmark. Default order: newest first.
// Name sorts are case-insensitive, then as written; ties end with the id.
import { invalid } from '../errors.js';
import type {
  ProjectFilter,
  ProjectFilterV1,
  ProjectItem,
  ProjectSort,
  ProjectSortV1,
  ProjectsBody,
  ProjectsBodyV1,
  ProjectsPage,
  ProjectsPageV1,
} from '../schemas/projects.js';
import type { Catalog, Project, Run, User } from './catalog.js';
import { caseFold, dateMatcher, enumMatcher, idMatcher, numberMatcher, textMatcher, type Loc } from './list-match.js';
import { instant, pageOf, sortRows, type PageRequest, type SortKey } from './list-page.js';
import { visibleProjectIds } from './members.js';
import type { ProjectAction } from './permissions.js';
import { permissionsFor, projectDbView, viewer, type Viewer } from './project-view.js';
import type { SettingsRow } from './scorer-settings.js';

export interface ProjectPageQuery extends PageRequest {
  actions?: readonly ProjectAction[];
  include_logstreams?: boolean;
  metric_id?: string | null;
}

export type ProjectPageQueryV1 = Omit<ProjectPageQuery, 'include_logstreams' | 'metric_id'>;

interface Counted {
  id: string;
  project: Project;
  logStreams: Run[];
  experiments: number;
  runs: Run[];
}

type Pred = (c: Counted) => boolean;

/** One pass over the runs: each project's (possibly metric-narrowed) log streams and run counts. */
function countRuns(catalog: Catalog, projects: Project[], metricId: string | null): Counted[] {
  let withMetric: Set<string> | null = null;
  if (metricId !== null) {
    const m = metricId.toLowerCase();
    withMetric = new Set(
      catalog
        .table<SettingsRow>('run_scorer_settings')
        .filter((s) => s.scorers.some((x) => x.id === m))
        .map((s) => s.id),
    );
  }
  const byProject = new Map<string, Counted>(
    projects.map((p) => [p.id, { id: p.id, project: p, logStreams: [], experiments: 0, runs: [] }]),
  );
  for (const r of catalog.table<Run>('runs')) {
    const c = byProject.get(r.project_id);
    if (!c) continue;
    c.runs.push(r);
    if (r.kind === 'experiment') c.experiments++;
    else if (r.kind === 'log_stream' && (withMetric === null || withMetric.has(r.id))) c.logStreams.push(r);
  }
  return [...byProject.values()];
}

function emailLookup(catalog: Catalog): (id: string | null) => string | null {
  return (id) => catalog.userSummary(id)?.email ?? null;
}

function all(preds: Pred[]): Pred {
  return (c) => preds.every((p) => p(c));
}

function bookmarkPred(value: unknown, at: Loc, v: Viewer): Pred {
  if (typeof value !== 'boolean') throw invalid([...at, 'value'], 'Input should be a valid boolean', value, 'bool_type');
  return (c) => v.bookmarks.has(c.id) === value;
}

function commonPred(
  f: { name: string; operator?: unknown; value?: unknown; case_sensitive?: boolean },
  at: Loc,
  v: Viewer,
  emailOf: (id: string | null) => string | null,
): Pred | null {
  switch (f.name) {
    case 'name': {
      const m = textMatcher(f.operator, f.value, caseFold(f.case_sensitive, true), at);
      return (c) => m(c.project.name);
    }
    case 'creator': {
      const m = idMatcher(f.operator, f.value, at);
      return (c) => m(c.project.created_by, emailOf(c.project.created_by));
    }
    case 'created_at': {
      const m = dateMatcher(f.operator, f.value, at);
      return (c) => m(c.project.created_at);
    }
    case 'updated_at': {
      const m = dateMatcher(f.operator, f.value, at);
      return (c) => m(c.project.updated_at);
    }
    case 'bookmark':
      return bookmarkPred(f.value, at, v);
    default:
      return null;
  }
}

const V2_FILTERS = ['name', 'creator', 'created_at', 'updated_at', 'num_logstreams', 'num_experiments', 'bookmark'];
const V1_FILTERS = ['id', 'name', 'type', 'creator', 'created_at', 'updated_at', 'runs', 'bookmark'];

function unknownFilter(at: Loc, name: unknown, allowed: string[]): never {
  throw invalid(
    [...at, 'name'],
    `Input should be one of ${allowed.map((n) => `'${n}'`).join(', ')} (unknown project filter)`,
    name,
    'union_tag_invalid',
  );
}

function v2Pred(f: ProjectFilter, at: Loc, v: Viewer, emailOf: (id: string | null) => string | null): Pred {
  const common = commonPred(f, at, v, emailOf);
  if (common) return common;
  if (f.name === 'num_logstreams') {
    const m = numberMatcher(f.operator, f.value, at);
    return (c) => m(c.logStreams.length);
  }
  if (f.name === 'num_experiments') {
    const m = numberMatcher(f.operator, f.value, at);
    return (c) => m(c.experiments);
  }
  return unknownFilter(at, (f as { name?: unknown }).name, V2_FILTERS);
}

function v1Pred(f: ProjectFilterV1, at: Loc, v: Viewer, emailOf: (id: string | null) => string | null): Pred {
  const common = commonPred(f, at, v, emailOf);
  if (common) return common;
  switch (f.name) {
    case 'id': {
      const m = idMatcher(f.operator, f.value, at);
      return (c) => m(c.id);
    }
    case 'type': {
      const m = enumMatcher(f.operator, f.value, at);
      return (c) => m(c.project.type);
    }
    case 'runs': {
      const m = numberMatcher(f.operator, f.value, at);
      return (c) => m(c.runs.length);
    }
    default:
      return unknownFilter(at, (f as { name?: unknown }).name, V1_FILTERS);
  }
}

const byName = (c: Counted): SortKey => c.project.name.toLowerCase();

function sortKey(name: string, v: Viewer): ((c: Counted) => SortKey) | null {
  switch (name) {
    case 'name':
      return byName;
    case 'created_at':
      return (c) => instant(c.project.created_at);
    case 'updated_at':
      return (c) => instant(c.project.updated_at);
    case 'num_logstreams':
      return (c) => c.logStreams.length;
    case 'num_experiments':
      return (c) => c.experiments;
    case 'type':
      return (c) => c.project.type;
    case 'runs':
      return (c) => c.runs.length;
    case 'bookmark':
      return (c) => (v.bookmarks.has(c.id) ? 1 : 0);
    default:
      return null;
  }
}

function sortProjects(rows: Counted[], sort: ProjectSort | ProjectSortV1 | null, allowed: string[], v: Viewer): void {
  if (sort === null) {
    sortRows(rows, (c) => instant(c.project.created_at), false);
    return;
  }
  const key = allowed.includes(sort.name) ? sortKey(sort.name, v) : null;
  if (!key)
    throw invalid(
      ['body', 'sort', 'name'],
      `Input should be one of ${allowed.map((n) => `'${n}'`).join(', ')}`,
      sort.name,
      'union_tag_invalid',
    );
  sortRows(rows, key, sort.ascending ?? true, sort.name === 'name' ? (c) => c.project.name : byName);
}

/** The projects a caller can see (every project for admins and library calls). */
export function visibleProjects(catalog: Catalog, user: User | null): Project[] {
  const ids = visibleProjectIds(catalog, user);
  return ids === null ? catalog.projects() : catalog.projects().filter((p) => ids.has(p.id));
}

export function listProjects(catalog: Catalog, body: ProjectsBody, query: ProjectPageQuery, user: User | null): ProjectsPage {
  const v = viewer(catalog, user, query.actions ?? []);
  const emailOf = emailLookup(catalog);
  const keep = all((body.filters ?? []).map((f, i) => v2Pred(f, ['body', 'filters', i], v, emailOf)));
  const rows = countRuns(catalog, visibleProjects(catalog, user), query.metric_id ?? null).filter(keep);
  sortProjects(rows, body.sort ?? null, ['name', 'created_at', 'updated_at', 'num_logstreams', 'num_experiments'], v);
  const page = pageOf(rows, query, ['query']);
  return {
    starting_token: page.starting_token,
    limit: page.limit,
    paginated: page.paginated,
    next_starting_token: page.next_starting_token,
    total_count: rows.length,
    projects: page.items.map((c) => projectItem(catalog, c, v, query.include_logstreams === true)),
  };
}

function projectItem(catalog: Catalog, c: Counted, v: Viewer, withStreams: boolean): ProjectItem {
  const p = c.project;
  const item: ProjectItem = {
    id: p.id,
    name: p.name,
    type: p.type,
    created_at: p.created_at,
    updated_at: p.updated_at,
    permissions: permissionsFor(p, v),
    bookmark: v.bookmarks.has(p.id),
    num_logstreams: c.logStreams.length,
    num_experiments: c.experiments,
    created_by: p.created_by,
    created_by_user: catalog.userSummary(p.created_by),
    description: p.description,
    labels: p.labels,
  };
  if (withStreams) {
    // Oldest first; streams created in the same millisecond go by name, then id, so the order is stable.
    item.log_streams = [...c.logStreams]
      .sort((a, b) =>
        a.created_at < b.created_at
          ? -1
          : a.created_at > b.created_at
            ? 1
            : a.name < b.name
              ? -1
              : a.name > b.name
                ? 1
                : a.id < b.id
                  ? -1
                  : 1,
      )
      .map((r) => ({ id: r.id, name: r.name }));
  }
  return item;
}

export function listProjectsV1(catalog: Catalog, body: ProjectsBodyV1, query: ProjectPageQueryV1, user: User | null): ProjectsPageV1 {
  const v = viewer(catalog, user, query.actions ?? []);
  const emailOf = emailLookup(catalog);
  const keep = all((body.filters ?? []).map((f, i) => v1Pred(f, ['body', 'filters', i], v, emailOf)));
  const rows = countRuns(catalog, visibleProjects(catalog, user), null).filter(keep);
  sortProjects(rows, body.sort ?? null, ['name', 'type', 'created_at', 'updated_at', 'runs', 'bookmark'], v);
  const page = pageOf(rows, query, ['query']);
  return {
    starting_token: page.starting_token,
    limit: page.limit,
    paginated: page.paginated,
    next_starting_token: page.next_starting_token,
    projects: page.items.map((c) => projectDbView(catalog, c.project, v, c.runs)),
  };
}
