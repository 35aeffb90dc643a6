// Tags, summaries and operation ids of the documented routes, keyed by method and route without its
// prefix (`{level}` stands for spans|traces|sessions, `{runs}` for log_streams|experiments|
// metrics_testing). A route may instead carry its own `schema.summary` and `schema.tags`; a
// documented route with neither fails the surface test.

export const TAGS = [
  { name: 'service', description: 'Health and the API description itself.' },
  { name: 'auth', description: 'Bearer tokens for an API key or a password (no credentials needed).' },
  { name: 'projects', description: 'Projects: find, create, read, change, bookmark, delete and list them.' },
  { name: 'runs', description: 'Log streams, experiments and metrics-testing runs of a project, and the scorers enabled in each.' },
  { name: 'logging', description: 'Logging traces, spans and sessions, and streaming updates to them.' },
  { name: 'opentelemetry', description: 'OTLP/HTTP trace exports (protobuf or JSON), at their own paths (no /v2 prefix).' },
  {
    name: 'records',
    description: 'Search, partial search, count, aggregate, delete and describe the columns of spans, traces and sessions.',
  },
  { name: 'scorers', description: 'The scorer (metric) catalog and its versions, and scoring records on demand.' },
  { name: 'users', description: 'Users, API keys and project members.' },
  {
    name: 'iceberg',
    description: 'The Iceberg REST catalog (read side) of the published tables, at /iceberg/v1 (no /v2 prefix; admins only).',
  },
] as const;

export type Tag = (typeof TAGS)[number]['name'];

const LEVEL = { spans: 'span', traces: 'trace', sessions: 'session' } as const;
const RUNS = { log_streams: 'log stream', experiments: 'experiment', metrics_testing: 'metrics-testing run' } as const;

const TABLE: Record<string, [Tag, string]> = {
  'GET /healthcheck': ['service', 'Liveness and version'],
  'GET /openapi.json': ['service', 'This OpenAPI document'],
  'POST /login/api_key': ['auth', 'Exchange an API key for a bearer token'],
  'POST /login': ['auth', 'Exchange an email and password (OAuth2 password form) for a bearer token'],
  'POST /projects': ['projects', 'Create a project'],
  'GET /projects': ['projects', 'Find projects by name (an empty list when none has it)'],
  'GET /projects/all': ['projects', 'All projects the caller can see'],
  'GET /projects/{project_id}': ['projects', 'Read a project'],
  'PATCH /projects/{project_id}': ['projects', 'Change a project (name, description, labels, type)'],
  'PUT /projects/{project_id}': ['projects', 'Change a project (the hosted service’s verb; same as PATCH)'],
  'DELETE /projects/{project_id}': ['projects', 'Delete a project with all its runs and records'],
  'PUT /projects/{project_id}/bookmark': ['projects', 'Bookmark a project for the caller'],
  'DELETE /projects/{project_id}/bookmark': ['projects', 'Remove the caller’s bookmark'],
  'POST /projects/paginated': ['projects', 'List projects, filtered, sorted and paged'],
  'POST /projects/{project_id}/{runs}': ['runs', 'Create a {run}'],
  'GET /projects/{project_id}/{runs}': ['runs', 'List the {run}s of a project'],
  'GET /projects/{project_id}/{runs}/{run_id}': ['runs', 'Read a {run}'],
  'PATCH /projects/{project_id}/{runs}/{run_id}': ['runs', 'Rename a {run}'],
  'PUT /projects/{project_id}/{runs}/{run_id}': ['runs', 'Rename a {run} (the hosted service’s verb; same as PATCH)'],
  'DELETE /projects/{project_id}/{runs}/{run_id}': ['runs', 'Delete a {run} with its records'],
  'POST /projects/{project_id}/log_streams/search': ['runs', 'Search the log streams of a project, filtered, sorted and paged'],
  'GET /projects/{project_id}/runs/{run_id}/scorer-settings': ['runs', 'Scorers enabled in a run'],
  'PATCH /projects/{project_id}/runs/{run_id}/scorer-settings': ['runs', 'Replace the scorers enabled in a run'],
  'PUT /projects/{project_id}/runs/{run_id}/scorer-settings': ['runs', 'Replace the scorers enabled in a run (same as PATCH)'],
  'POST /projects/{project_id}/runs/{run_id}/scorer-settings': [
    'runs',
    'Replace the scorers enabled in a run (the older create; same as PATCH)',
  ],
  'POST /projects/{project_id}/traces': ['logging', 'Log traces with their spans'],
  'POST /projects/{project_id}/spans': ['logging', 'Log spans into an existing trace'],
  'POST /projects/{project_id}/sessions': ['logging', 'Create a session'],
  'PATCH /projects/{project_id}/traces/{trace_id}': ['logging', 'Update a trace (streaming mode: output, metrics, status, completion)'],
  'PATCH /projects/{project_id}/spans/{span_id}': ['logging', 'Update a span (streaming mode: output, metrics, status, completion)'],
  'POST /projects/{project_id}/{level}/search': ['records', 'Search {level}s: full records, filtered, sorted and paged'],
  'POST /projects/{project_id}/{level}/partial_search': ['records', 'Search {level}s returning only the selected columns'],
  'POST /projects/{project_id}/{level}/count': ['records', 'Count the {level}s matching filters'],
  'POST /projects/{project_id}/{level}/aggregate': [
    'records',
    'Counts and measures (sum, avg, min, max, percentiles) of the {level}s matching filters, by column or time bucket',
  ],
  'POST /projects/{project_id}/{level}/delete': ['records', 'Delete the {level}s matching filters, with their descendants'],
  'GET /projects/{project_id}/{level}/{id}': ['records', 'Read one {level} with its descendants nested'],
  'POST /projects/{project_id}/{level}/available_columns': ['records', 'The columns {level}s can be filtered, sorted and selected by'],
  'GET /current_user': ['users', 'The calling user'],
  'GET /users': ['users', 'List users (admins)'],
  'POST /users': ['users', 'Create a user (admins)'],
  'GET /users/{user_id}/api_keys': ['users', 'List a user’s API keys (their first characters only)'],
  'POST /users/{user_id}/api_keys': ['users', 'Create an API key (shown once, in this answer)'],
  'DELETE /api_keys/{key_id}': ['users', 'Revoke an API key'],
  'GET /projects/{project_id}/retention': ['projects', 'Retention of a project (retention_days, and what applies)'],
  'PUT /projects/{project_id}/retention': ['projects', 'Set or remove (null) the retention of a project in days'],
  'GET /projects/{project_id}/model_prices': ['projects', 'Model prices computed costs use: the project’s own and the defaults'],
  'PUT /projects/{project_id}/model_prices': ['projects', 'Replace the project’s own model prices (USD per 1M tokens; {} removes them)'],
  'GET /projects/{project_id}/log_streams/{run_id}/retention': ['runs', 'Retention of a log stream (its own, else its project’s)'],
  'PUT /projects/{project_id}/log_streams/{run_id}/retention': ['runs', 'Set or remove (null) the retention of a log stream in days'],
  'GET /projects/{project_id}/users': ['users', 'Members of a project with their roles'],
  'POST /projects/{project_id}/users': ['users', 'Give users roles in a project (owners and admins)'],
  'PATCH /projects/{project_id}/users/{user_id}': ['users', 'Change a member’s role (owners and admins)'],
  'DELETE /projects/{project_id}/users/{user_id}': ['users', 'Remove a member (owners and admins)'],
  'POST /projects/{project_id}/recompute_metrics': ['scorers', 'Score the records a filter selects with the named scorers (a job)'],
  'POST /projects/{project_id}/recompute-metrics': ['scorers', 'Score the records a filter selects (same as recompute_metrics)'],
  'GET /projects/{project_id}/jobs/{job_id}': ['scorers', 'Read a scoring job and its progress'],
  'POST /scorers/list': ['scorers', 'List scorers, filtered, sorted and paged'],
  'POST /scorers': ['scorers', 'Register a scorer'],
  'GET /scorers/{scorer_id}': ['scorers', 'Read a scorer'],
  'PATCH /scorers/{scorer_id}': ['scorers', 'Change a scorer'],
  'DELETE /scorers/{scorer_id}': ['scorers', 'Delete a scorer'],
  'POST /scorers/{scorer_id}/versions': ['scorers', 'Add a version to a scorer'],
  'GET /scorers/{scorer_id}/versions': ['scorers', 'List the versions of a scorer'],
  'GET /scorers/{scorer_id}/version': ['scorers', 'One version of a scorer (?version=N)'],
};

const LEVEL_ROUTE = new RegExp(
  '^/projects/\\{project_id\\}/(spans|traces|sessions)/' +
    '(search|partial_search|count|aggregate|delete|available_columns|\\{(?:span|trace|session)_id\\})$',
);

/** Tag and summary of a route (path without prefix, OpenAPI form), or null when the table lacks it. */
export function describeOperation(method: string, path: string): { tag: Tag; summary: string } | null {
  let key = `${method} ${path}`;
  let word = '';
  const level = LEVEL_ROUTE.exec(path);
  const runs = /^\/projects\/\{project_id\}\/(log_streams|experiments|metrics_testing)(\/\{run_id\})?$/.exec(path);
  if (level && !(level[2]!.startsWith('{') && method !== 'GET')) {
    key = `${method} /projects/{project_id}/{level}/${level[2]!.startsWith('{') ? '{id}' : level[2]}`;
    word = LEVEL[level[1] as keyof typeof LEVEL];
  } else if (runs) {
    key = `${method} /projects/{project_id}/{runs}${runs[2] ?? ''}`;
    word = RUNS[runs[1] as keyof typeof RUNS];
  }
  const found = TABLE[key];
  if (!found) return null;
  return { tag: found[0], summary: found[1].replace('{level}', word).replace('{run}', word) };
}

/** A stable operation id: method and path segments in camel case, path parameters as `ByName`. */
export function operationId(method: string, path: string, suffix = ''): string {
  const words = path
    .split('/')
    .filter(Boolean)
    .flatMap((seg) => (seg.startsWith('{') ? ['by', ...seg.slice(1, -1).split(/[_-]/)] : seg.split(/[_.-]/)));
  return method.toLowerCase() + words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('') + suffix;
}
