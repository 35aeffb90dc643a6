// Every screen's state as a URL and back. The URL is the only place screen state lives, so a copied
// link or a reload shows the same screen (DOM-free: unit-tested under Node).
//
//   /ui/                                        projects            ?page=
//   /ui/p/:project                              one project's runs
//   /ui/p/:project/:ls|exp/:run/:level          a table             ?sort=col:asc|desc&cols=a,b&f=<filter_tree JSON>&page=&size=
//   /ui/p/:project/:ls|exp/:run/overview        a run's charts      ?range=hour|day|week | from=&to= (ISO)
//   /ui/p/:project/:ls|exp/:run/scorers         a run's scorers (which are enabled, sample rates)
//   /ui/p/:project/compare                      runs side by side   ?runs=ls:<id>,exp:<id>,...
//   /ui/p/:project/traces/:trace                a trace             ?span=&tab=
//   /ui/p/:project/sessions/:session            a session

export const LEVELS = ['traces', 'spans', 'sessions'] as const;
export type TableLevel = (typeof LEVELS)[number];
export type RunKind = 'ls' | 'exp';
export const TABS = ['overview', 'metrics', 'metadata', 'raw'] as const;
export type DetailTab = (typeof TABS)[number];

export const PAGE_SIZES = [25, 50, 100, 200] as const;
export const DEFAULT_PAGE_SIZE = 50;

export interface SortState {
  column: string;
  ascending: boolean;
}

/** The time an overview covers: a span up to now, every record, or fixed bounds (ISO instants). */
export type TimeRange = { kind: 'last'; span: 'hour' | 'day' | 'week' } | { kind: 'all' } | { kind: 'custom'; from: string; to: string };
export const LAST_SPANS = ['hour', 'day', 'week'] as const;

export interface RunRef {
  kind: RunKind;
  id: string;
}

export interface TableQuery {
  sort: SortState | null;
  /** Visible column ids in order; null means the default set. */
  cols: string[] | null;
  /** The API's own filter_tree, as sent; null means no filter. */
  filter: unknown;
  page: number;
  size: number;
}

export type Route =
  | { name: 'projects'; page: number }
  | { name: 'project'; projectId: string }
  | { name: 'table'; projectId: string; runKind: RunKind; runId: string; level: TableLevel; query: TableQuery }
  | { name: 'overview'; projectId: string; runKind: RunKind; runId: string; range: TimeRange }
  | { name: 'scorers'; projectId: string; runKind: RunKind; runId: string }
  | { name: 'compare'; projectId: string; runs: RunRef[] }
  | { name: 'trace'; projectId: string; traceId: string; spanId: string | null; tab: DetailTab }
  | { name: 'session'; projectId: string; sessionId: string }
  | { name: 'not-found'; path: string };

export const BASE = '/ui';

const positive = (v: string | null, fallback: number): number => {
  const n = Number(v);
  return v !== null && Number.isInteger(n) && n >= 1 ? n : fallback;
};

function parseFilter(v: string | null): unknown {
  if (!v) return null;
  try {
    const tree: unknown = JSON.parse(v);
    return tree !== null && typeof tree === 'object' ? tree : null;
  } catch {
    return null;
  }
}

export function parseTableQuery(params: URLSearchParams): TableQuery {
  const sortParam = params.get('sort');
  let sort: SortState | null = null;
  if (sortParam) {
    const at = sortParam.lastIndexOf(':');
    const column = at > 0 ? sortParam.slice(0, at) : sortParam;
    sort = { column, ascending: at > 0 && sortParam.slice(at + 1) === 'asc' };
  }
  const cols = params.get('cols');
  const size = positive(params.get('size'), DEFAULT_PAGE_SIZE);
  return {
    sort,
    cols: cols ? cols.split(',').filter(Boolean) : null,
    filter: parseFilter(params.get('f')),
    page: positive(params.get('page'), 1),
    size: (PAGE_SIZES as readonly number[]).includes(size) ? size : DEFAULT_PAGE_SIZE,
  };
}

function parseRange(params: URLSearchParams): TimeRange {
  const range = params.get('range');
  if ((LAST_SPANS as readonly string[]).includes(range ?? '')) return { kind: 'last', span: range as 'hour' | 'day' | 'week' };
  const from = params.get('from');
  const to = params.get('to');
  if (from && to && !Number.isNaN(Date.parse(from)) && !Number.isNaN(Date.parse(to))) return { kind: 'custom', from, to };
  return { kind: 'all' };
}

function parseRuns(v: string | null): RunRef[] {
  const out: RunRef[] = [];
  for (const part of (v ?? '').split(',')) {
    const at = part.indexOf(':');
    const kind = part.slice(0, at);
    const id = part.slice(at + 1);
    if (at > 0 && id && (kind === 'ls' || kind === 'exp') && !out.some((r) => r.id === id)) out.push({ kind, id });
  }
  return out;
}

function rangeEntries(r: TimeRange): [string, string | null][] {
  if (r.kind === 'last') return [['range', r.span]];
  if (r.kind === 'custom')
    return [
      ['from', r.from],
      ['to', r.to],
    ];
  return [];
}

export function parseRoute(pathname: string, search: string): Route {
  const params = new URLSearchParams(search);
  const path = pathname.replace(/\/+$/, '');
  if (path === BASE || path === '') return { name: 'projects', page: positive(params.get('page'), 1) };
  if (!path.startsWith(`${BASE}/`)) return { name: 'not-found', path: pathname };
  const parts = path
    .slice(BASE.length + 1)
    .split('/')
    .map((s) => decodeURIComponent(s));
  const [p, projectId, a, b, c] = parts;
  if (p !== 'p' || !projectId) return { name: 'not-found', path: pathname };
  if (parts.length === 2) return { name: 'project', projectId };
  if (parts.length === 3 && a === 'compare') return { name: 'compare', projectId, runs: parseRuns(params.get('runs')) };
  if (parts.length === 4 && a === 'traces' && b) {
    const tab = params.get('tab');
    return {
      name: 'trace',
      projectId,
      traceId: b,
      spanId: params.get('span'),
      tab: (TABS as readonly string[]).includes(tab ?? '') ? (tab as DetailTab) : 'overview',
    };
  }
  if (parts.length === 4 && a === 'sessions' && b) return { name: 'session', projectId, sessionId: b };
  if (parts.length === 5 && (a === 'ls' || a === 'exp') && b && c === 'overview') {
    return { name: 'overview', projectId, runKind: a, runId: b, range: parseRange(params) };
  }
  if (parts.length === 5 && (a === 'ls' || a === 'exp') && b && c === 'scorers')
    return { name: 'scorers', projectId, runKind: a, runId: b };
  if (parts.length === 5 && (a === 'ls' || a === 'exp') && b && (LEVELS as readonly string[]).includes(c ?? '')) {
    return { name: 'table', projectId, runKind: a, runId: b, level: c as TableLevel, query: parseTableQuery(params) };
  }
  return { name: 'not-found', path: pathname };
}

function withQuery(path: string, entries: [string, string | null | undefined][]): string {
  const params = new URLSearchParams();
  for (const [k, v] of entries) if (v !== null && v !== undefined && v !== '') params.set(k, v);
  const q = params.toString();
  return q ? `${path}?${q}` : path;
}

const seg = encodeURIComponent;

export function tableQueryEntries(q: Partial<TableQuery>): [string, string | null][] {
  return [
    ['sort', q.sort ? `${q.sort.column}:${q.sort.ascending ? 'asc' : 'desc'}` : null],
    ['cols', q.cols ? q.cols.join(',') : null],
    ['f', q.filter ? JSON.stringify(q.filter) : null],
    ['page', q.page && q.page > 1 ? String(q.page) : null],
    ['size', q.size && q.size !== DEFAULT_PAGE_SIZE ? String(q.size) : null],
  ];
}

export function routeUrl(route: Route): string {
  switch (route.name) {
    case 'projects':
      return withQuery(`${BASE}/`, [['page', route.page > 1 ? String(route.page) : null]]);
    case 'project':
      return `${BASE}/p/${seg(route.projectId)}`;
    case 'table':
      return withQuery(
        `${BASE}/p/${seg(route.projectId)}/${route.runKind}/${seg(route.runId)}/${route.level}`,
        tableQueryEntries(route.query),
      );
    case 'overview':
      return withQuery(`${BASE}/p/${seg(route.projectId)}/${route.runKind}/${seg(route.runId)}/overview`, rangeEntries(route.range));
    case 'scorers':
      return `${BASE}/p/${seg(route.projectId)}/${route.runKind}/${seg(route.runId)}/scorers`;
    case 'compare':
      return withQuery(`${BASE}/p/${seg(route.projectId)}/compare`, [['runs', route.runs.map((r) => `${r.kind}:${r.id}`).join(',')]]);
    case 'trace':
      return withQuery(`${BASE}/p/${seg(route.projectId)}/traces/${seg(route.traceId)}`, [
        ['span', route.spanId],
        ['tab', route.tab === 'overview' ? null : route.tab],
      ]);
    case 'session':
      return `${BASE}/p/${seg(route.projectId)}/sessions/${seg(route.sessionId)}`;
    case 'not-found':
      return route.path;
  }
}

/** A table of a run with the default state. */
export function runTable(projectId: string, runKind: RunKind, runId: string, level: TableLevel = 'traces'): Route {
  return {
    name: 'table',
    projectId,
    runKind,
    runId,
    level,
    query: { sort: null, cols: null, filter: null, page: 1, size: DEFAULT_PAGE_SIZE },
  };
}

/** A run's scorers page. */
export function runScorers(projectId: string, runKind: RunKind, runId: string): Route {
  return { name: 'scorers', projectId, runKind, runId };
}

/** A run's overview over all its records. */
export function runOverview(projectId: string, runKind: RunKind, runId: string): Route {
  return { name: 'overview', projectId, runKind, runId, range: { kind: 'all' } };
}
