// Valid request bodies and query strings per route, from which the fuzzer mutates. A route without an
// entry here (a route added later) still gets fuzzed: its seed is built from its own TypeBox body
// schema (Value.Create), so every route is covered automatically.
import { type TSchema, Value } from '../../../src/vendor/typebox.js';
import { STANDARD_COLUMNS, type ColumnDef } from '../../../src/query/columns.js';
import { OPERATORS } from '../../../src/query/filter-ast.js';
import { PROJECT_ACTION_VALUES } from '../../../src/schemas/projects.js';
import type { Rng } from './rng.js';

/** What the seeds may refer to: live ids of the fuzzed store (chosen per request). */
export interface SeedWorld {
  projectId: string;
  runs: { log_stream: string; experiment: string; metrics_testing: string };
  traceIds: string[];
  spanIds: string[];
  sessionIds: string[];
  scorerIds: string[];
  scorerNames: string[];
  userIds: string[];
  apiKey: string;
  email: string;
  password: string;
}

export interface Seed {
  body?: unknown;
  query?: Record<string, string | string[]>;
  /** application/x-www-form-urlencoded instead of JSON. */
  form?: boolean;
}

const METRICS = ['duration_ns', 'num_input_tokens', 'custom_score', 'latency', 'correctness', 'bleu'];

function runIds(w: SeedWorld, rng: Rng): Record<string, string | null> {
  switch (rng.int(0, 5)) {
    case 0:
      return { experiment_id: w.runs.experiment };
    case 1:
      return { metrics_testing_id: w.runs.metrics_testing };
    case 2:
      return {};
    case 3:
      return { log_stream_id: w.runs.log_stream, experiment_id: null };
    default:
      return { log_stream_id: w.runs.log_stream };
  }
}

const iso = (rng: Rng) => new Date(Date.UTC(2026, rng.int(0, 11), rng.int(1, 28), rng.int(0, 23), rng.int(0, 59))).toISOString();

function idValue(w: SeedWorld, rng: Rng): string {
  return rng.pick([...w.traceIds, ...w.spanIds, ...w.sessionIds, w.runs.log_stream, w.projectId, rng.uuid()]);
}

function filterFor(c: ColumnDef, w: SeedWorld, rng: Rng): Record<string, unknown> {
  const col = rng.chance(0.85) ? { column_id: c.id } : { name: c.id };
  const ops = OPERATORS[c.filter_type] as readonly string[];
  const operator = rng.pick(ops);
  switch (c.filter_type) {
    case 'text': {
      const one = () =>
        c.allowed_values ? rng.pick(c.allowed_values) : rng.pick(['chat', 'calc', 'question a', 'x', '', 'gpt-4o', 'trace-a']);
      const value = operator === 'one_of' || operator === 'not_in' ? [one(), one()] : one();
      return { type: 'text', ...col, operator, value, case_sensitive: rng.chance(0.5) };
    }
    case 'collection': {
      const value = operator === 'contains' ? rng.pick(['t1', 'a', '']) : [rng.pick(['t1', 'a']), 'b'];
      return { type: 'collection', ...col, operator, value, case_sensitive: rng.chance(0.5) };
    }
    case 'id':
      return {
        type: 'id',
        ...col,
        operator,
        value: operator === 'one_of' || operator === 'not_in' ? [idValue(w, rng), idValue(w, rng)] : idValue(w, rng),
      };
    case 'date':
      return { type: 'date', ...col, operator, value: iso(rng) };
    case 'number':
      return { type: 'number', ...col, operator, value: operator === 'between' ? [rng.int(0, 5), rng.int(6, 600)] : rng.int(-1, 600) };
    case 'boolean':
      return { type: 'boolean', ...col, operator, value: rng.chance(0.5) };
    default:
      return { type: 'fully_annotated', user_ids: rng.chance(0.5) ? null : [rng.pick(w.userIds)] };
  }
}

export function recordFilter(w: SeedWorld, rng: Rng): Record<string, unknown> {
  if (rng.chance(0.25)) {
    const name = rng.pick(METRICS);
    const operator = rng.pick(OPERATORS.number as readonly string[]);
    return {
      type: 'number',
      column_id: `metrics/${name}`,
      operator,
      value: operator === 'between' ? [0, rng.int(1, 100)] : rng.int(0, 100) / 10,
    };
  }
  if (rng.chance(0.03)) return { type: 'fully_annotated' };
  return filterFor(rng.pick(STANDARD_COLUMNS), w, rng);
}

function filterTree(w: SeedWorld, rng: Rng, depth = 0): unknown {
  const r = depth > 2 ? 0 : rng.int(0, 3);
  if (r === 0) return { filter: recordFilter(w, rng) };
  if (r === 3) return { not: filterTree(w, rng, depth + 1) };
  return { [r === 1 ? 'and' : 'or']: Array.from({ length: rng.int(1, 3) }, () => filterTree(w, rng, depth + 1)) };
}

function filterBody(w: SeedWorld, rng: Rng): Record<string, unknown> {
  const body: Record<string, unknown> = { ...runIds(w, rng) };
  if (rng.chance(0.7)) body['filters'] = Array.from({ length: rng.int(1, 3) }, () => recordFilter(w, rng));
  if (rng.chance(0.4)) body['filter_tree'] = filterTree(w, rng);
  return body;
}

function sortClause(rng: Rng): Record<string, unknown> {
  const column = rng.chance(0.3) ? `metrics/${rng.pick(METRICS)}` : rng.pick(STANDARD_COLUMNS.filter((c) => c.sortable)).id;
  return { [rng.chance(0.8) ? 'column_id' : 'name']: column, ascending: rng.chance(0.5), sort_type: 'column' };
}

function searchBody(w: SeedWorld, rng: Rng, partial: boolean): Record<string, unknown> {
  const body = filterBody(w, rng);
  if (rng.chance(0.5)) body['limit'] = rng.int(1, 50);
  if (rng.chance(0.3)) body['starting_token'] = rng.int(0, 20);
  if (rng.chance(0.2)) body['pagination'] = { limit: rng.int(1, 20), starting_token: rng.int(0, 5) };
  if (rng.chance(0.5)) body['sort'] = sortClause(rng);
  if (rng.chance(0.3)) body['include_counts'] = true;
  if (rng.chance(0.2)) body['include_code_metric_metadata'] = true;
  if (partial) {
    body['select_columns'] = {
      column_ids: Array.from({ length: rng.int(0, 5) }, () =>
        rng.chance(0.3) ? `metrics/${rng.pick(METRICS)}` : rng.pick(STANDARD_COLUMNS).id,
      ),
      include_all_metrics: rng.chance(0.5),
      include_all_feedback: rng.chance(0.2),
      ...(rng.chance(0.3) ? { includes_metric_columns: true, metric_columns_names: [rng.pick(METRICS)] } : {}),
    };
  }
  return body;
}

const MESSAGES = [
  { role: 'system', content: 'be brief' },
  { role: 'user', content: 'what is 2+2?' },
];

function span(rng: Rng, depth = 0): Record<string, unknown> {
  const type = rng.pick(depth > 1 ? ['llm', 'tool', 'retriever', 'control'] : ['agent', 'workflow', 'llm', 'tool', 'retriever', 'control']);
  const s: Record<string, unknown> = {
    type,
    name: `${type}-${rng.int(0, 9)}`,
    input: rng.chance(0.5) ? 'input text' : { q: 'structured', n: rng.int(0, 9) },
  };
  if (rng.chance(0.5)) s['output'] = 'output text';
  if (rng.chance(0.3)) s['tags'] = ['t1', `tag${rng.int(0, 3)}`];
  if (rng.chance(0.4)) s['metrics'] = { [rng.pick(METRICS)]: rng.int(0, 1000) / 10, duration_ns: rng.int(1, 1e9) };
  if (rng.chance(0.3)) s['user_metadata'] = { env: 'fuzz', k: rng.int(0, 9) };
  if (rng.chance(0.2)) s['created_at'] = iso(rng);
  if (rng.chance(0.2)) s['status_code'] = rng.pick([200, 500]);
  if (rng.chance(0.1)) s['id'] = rng.uuid();
  switch (type) {
    case 'llm':
      s['input'] = MESSAGES;
      s['output'] = { role: 'assistant', content: '4' };
      s['model'] = 'gpt-4o';
      s['temperature'] = 0.2;
      if (rng.chance(0.3)) s['tools'] = [{ type: 'function', function: { name: 'calc' } }];
      break;
    case 'agent':
      s['agent_type'] = rng.pick(['default', 'planner', 'router']);
      break;
    case 'retriever':
      s['output'] = [{ content: 'doc', metadata: { score: 0.5 } }];
      break;
    case 'tool':
      s['tool_call_id'] = `call-${rng.int(0, 99)}`;
      break;
    case 'control':
      s['control_id'] = rng.int(0, 100);
      s['check_stage'] = rng.pick(['pre', 'post']);
      break;
    default:
      break;
  }
  if ((type === 'agent' || type === 'workflow') && rng.chance(0.6))
    s['spans'] = Array.from({ length: rng.int(1, 3) }, () => span(rng, depth + 1));
  return s;
}

export function seedTrace(rng: Rng): Record<string, unknown> {
  const t: Record<string, unknown> = {
    type: 'trace',
    name: `trace-${rng.int(0, 99)}`,
    input: 'question',
    output: 'answer',
    spans: Array.from({ length: rng.int(0, 3) }, () => span(rng)),
  };
  if (rng.chance(0.3)) t['tags'] = ['t1'];
  if (rng.chance(0.3)) t['metrics'] = { duration_ns: rng.int(1, 1e9) };
  if (rng.chance(0.2)) t['id'] = rng.uuid();
  if (rng.chance(0.2)) t['created_at'] = iso(rng);
  return t;
}

type SeedFn = (w: SeedWorld, rng: Rng) => Seed;

const pageQuery = (rng: Rng): Record<string, string | string[]> => {
  const q: Record<string, string | string[]> = {};
  if (rng.chance(0.4)) q['limit'] = String(rng.int(1, 50));
  if (rng.chance(0.3)) q['starting_token'] = String(rng.int(0, 10));
  if (rng.chance(0.4)) q['actions'] = [rng.pick(PROJECT_ACTION_VALUES), rng.pick(PROJECT_ACTION_VALUES)];
  return q;
};

const textFilter = (name: string, rng: Rng) => ({
  name,
  operator: rng.pick(['eq', 'ne', 'contains', 'one_of', 'not_in']),
  value: rng.chance(0.5) ? 'fuzz' : ['a', 'fuzz'],
  case_sensitive: rng.chance(0.5),
});

/** Seeds by route key: METHOD plus the path without its /v2 or /public/v2 prefix. */
export const SEEDS: Record<string, SeedFn> = {
  'POST /login/api_key': (w) => ({ body: { api_key: w.apiKey } }),
  'POST /login': (w, rng) => ({ form: rng.chance(0.8), body: { username: w.email, password: w.password, grant_type: 'password' } }),
  'POST /projects': (_w, rng) => ({
    body: {
      name: `fuzz-${rng.int(0, 1e6)}`,
      type: rng.pick(['gen_ai', 'llm_monitor', null]),
      description: 'made by the fuzzer',
      labels: ['fuzz'],
    },
  }),
  'GET /projects': (_w, rng) => ({
    query: rng.chance(0.7) ? { project_name: rng.pick(['fuzz', 'test-project', 'x']) } : ({} as Record<string, string>),
  }),
  'GET /projects/all': () => ({ query: {} }),
  'GET /projects/:project_id': (_w, rng) => ({
    query: rng.chance(0.5) ? { actions: [rng.pick(PROJECT_ACTION_VALUES)] } : ({} as Record<string, string>),
  }),
  'PATCH /projects/:project_id': (_w, rng) => ({
    body: { name: `renamed-${rng.int(0, 1e6)}`, description: 'd', labels: ['l'], bookmark: rng.chance(0.5) },
  }),
  'PUT /projects/:project_id': (_w, rng) => ({ body: { description: `d${rng.int(0, 9)}` } }),
  'POST /projects/paginated': (_w, rng) => ({
    query: { ...pageQuery(rng), ...(rng.chance(0.3) ? { include_logstreams: 'true' } : {}) },
    body: {
      filters: rng.chance(0.6)
        ? [
            rng.pick([
              textFilter('name', rng),
              { name: 'created_at', operator: 'gt', value: '2020-01-01T00:00:00Z' },
              { name: 'num_logstreams', operator: 'gte', value: 1 },
              { name: 'bookmark', value: true },
              { name: 'runs', operator: 'gt', value: 0 },
            ]),
          ]
        : [],
      sort: {
        name: rng.pick(['name', 'created_at', 'updated_at', 'num_logstreams', 'runs']),
        ascending: rng.chance(0.5),
        sort_type: rng.pick(['column', 'custom']),
      },
    },
  }),
  'POST /projects/:project_id/log_streams': (_w, rng) => ({ body: { name: `stream-${rng.int(0, 1e6)}` } }),
  'POST /projects/:project_id/experiments': (_w, rng) => ({ body: { name: `exp-${rng.int(0, 1e6)}` } }),
  'POST /projects/:project_id/metrics_testing': (_w, rng) => ({ body: { name: `mt-${rng.int(0, 1e6)}` } }),
  'PATCH /projects/:project_id/log_streams/:run_id': (_w, rng) => ({ body: { name: `renamed-${rng.int(0, 1e6)}` } }),
  'PUT /projects/:project_id/log_streams/:run_id': (_w, rng) => ({ body: { name: `renamed-${rng.int(0, 1e6)}` } }),
  'POST /projects/:project_id/log_streams/search': (w, rng) => ({
    body: {
      starting_token: rng.int(0, 3),
      limit: rng.int(1, 100),
      filters: [
        rng.pick([
          textFilter('name', rng),
          { name: 'id', operator: 'eq', value: w.runs.log_stream },
          { name: 'created_at', operator: 'lt', value: iso(rng) },
        ]),
      ],
      sort: { name: rng.pick(['name', 'created_at', 'updated_at']), ascending: rng.chance(0.5), sort_type: 'column' },
      include_counts: rng.chance(0.5),
    },
  }),
  'PUT /projects/:project_id/runs/:run_id/scorer-settings': (w, rng) => ({ body: scorerSettings(w, rng) }),
  'PATCH /projects/:project_id/runs/:run_id/scorer-settings': (w, rng) => ({ body: scorerSettings(w, rng) }),
  'POST /projects/:project_id/runs/:run_id/scorer-settings': (w, rng) => ({ body: scorerSettings(w, rng) }),
  'POST /projects/:project_id/spans': (w, rng) => {
    const traceId = rng.chance(0.6) && w.traceIds.length ? rng.pick(w.traceIds) : rng.uuid();
    const parent = rng.chance(0.7) ? traceId : rng.pick([...w.spanIds, traceId]);
    return {
      body: {
        log_stream_id: w.runs.log_stream,
        trace_id: traceId,
        parent_id: parent,
        spans: Array.from({ length: rng.int(1, 3) }, () => span(rng)),
        reliable: rng.chance(0.5),
        logging_method: 'api_direct',
      },
    };
  },
  'POST /projects/:project_id/traces': (w, rng) => ({
    body: {
      ...runIds(w, rng),
      log_stream_id: w.runs.log_stream,
      traces: Array.from({ length: rng.int(1, 3) }, () => seedTrace(rng)),
      reliable: rng.chance(0.5),
      ...(rng.chance(0.2) ? { session_external_id: `ext-${rng.int(0, 9)}` } : {}),
      ...(rng.chance(0.2) && w.sessionIds.length ? { session_id: rng.pick(w.sessionIds) } : {}),
    },
  }),
  'PATCH /projects/:project_id/traces/:trace_id': (w, rng) => ({
    body: {
      log_stream_id: w.runs.log_stream,
      output: 'patched',
      tags: ['p'],
      is_complete: true,
      duration_ns: rng.int(1, 1e9),
      status_code: 200,
    },
  }),
  'PATCH /projects/:project_id/spans/:span_id': (w, rng) => ({
    body: {
      log_stream_id: w.runs.log_stream,
      output: { role: 'assistant', content: 'patched' },
      is_complete: rng.chance(0.5),
      duration_ns: 5,
    },
  }),
  'POST /projects/:project_id/sessions': (w, rng) => ({
    body: {
      log_stream_id: w.runs.log_stream,
      name: `session-${rng.int(0, 99)}`,
      external_id: `ext-${rng.int(0, 9)}`,
      user_metadata: { a: 1 },
      ...(rng.chance(0.2) ? { id: rng.uuid() } : {}),
    },
  }),
  'POST /projects/:project_id/users': (w, rng) => ({
    body: [{ user_id: rng.pick(w.userIds), role: rng.pick(['owner', 'editor', 'annotator', 'viewer']) }],
  }),
  'PATCH /projects/:project_id/users/:user_id': (_w, rng) => ({ body: { role: rng.pick(['owner', 'editor', 'annotator', 'viewer']) } }),
  'POST /scorers/list': (w, rng) => ({
    query: pageQuery(rng),
    body: {
      filters: rng.chance(0.6)
        ? [
            rng.pick([
              textFilter('name', rng),
              { name: 'scorer_type', operator: 'eq', value: 'llm' },
              { name: 'tags', operator: 'contains', value: 'x' },
              { name: 'scope_projects', project_ids: [w.projectId] },
              { name: 'exclude_slm_scorers' },
            ]),
          ]
        : [],
      sort: rng.chance(0.5)
        ? { name: 'name', ascending: true, sort_type: 'column' }
        : { name: 'enabled_in_run', value: w.runs.log_stream, sort_type: 'custom_uuid' },
    },
  }),
  'POST /scorers': (w, rng) => ({
    body: {
      name: `scorer-${rng.int(0, 1e6)}`,
      scorer_type: rng.pick(['llm', 'code']),
      description: 'fuzz',
      tags: ['fuzz'],
      metric_name: `metric_${rng.int(0, 99)}`,
      roll_up_method: rng.pick(['average', 'sum', 'max', 'min']),
      scope_projects: rng.chance(0.3) ? [{ id: w.projectId }] : [],
      version: { user_prompt: 'Is it good?', num_judges: 3, cot_enabled: true },
    },
  }),
  'PATCH /scorers/:scorer_id': (_w, rng) => ({ body: { description: `d${rng.int(0, 9)}`, tags: ['x'], deprecated: rng.chance(0.2) } }),
  'POST /scorers/:scorer_id/versions': (_w, rng) => ({
    body: { user_prompt: 'Rate it', num_judges: rng.int(1, 5), set_as_default: rng.chance(0.5) },
  }),
  'GET /scorers/:scorer_id': () => ({ query: { actions: ['update', 'delete'] } }),
};

function scorerSettings(w: SeedWorld, rng: Rng): unknown {
  const scorers = Array.from({ length: rng.int(0, 3) }, () =>
    rng.chance(0.5) && w.scorerIds.length
      ? { id: rng.pick(w.scorerIds) }
      : { name: rng.pick(w.scorerNames.length ? w.scorerNames : ['bleu']) },
  );
  return { scorers, segment_filters: null };
}

for (const [path, level] of [
  ['spans', 'span'],
  ['traces', 'trace'],
  ['sessions', 'session'],
] as const) {
  void level;
  SEEDS[`POST /projects/:project_id/${path}/search`] = (w, rng) => ({ body: searchBody(w, rng, false) });
  SEEDS[`POST /projects/:project_id/${path}/partial_search`] = (w, rng) => ({ body: searchBody(w, rng, true) });
  SEEDS[`POST /projects/:project_id/${path}/count`] = (w, rng) => ({ body: filterBody(w, rng) });
  SEEDS[`POST /projects/:project_id/${path}/delete`] = (w, rng) => ({ body: filterBody(w, rng) });
  SEEDS[`POST /projects/:project_id/${path}/available_columns`] = (w, rng) => ({
    body: { ...runIds(w, rng), ...(rng.chance(0.2) ? { start_time: iso(rng), end_time: iso(rng) } : {}) },
  });
}
for (const kind of ['experiments', 'metrics_testing']) {
  SEEDS[`PATCH /projects/:project_id/${kind}/:run_id`] = SEEDS['PATCH /projects/:project_id/log_streams/:run_id']!;
  SEEDS[`PUT /projects/:project_id/${kind}/:run_id`] = SEEDS['PUT /projects/:project_id/log_streams/:run_id']!;
}

/** A valid seed for a route: the hand-written one, or one built from the route's body schema. */
export function seedFor(key: string, schema: { body?: unknown; querystring?: unknown } | undefined, w: SeedWorld, rng: Rng): Seed {
  const fn = SEEDS[key];
  if (fn) return fn(w, rng);
  const seed: Seed = {};
  if (schema?.body) {
    try {
      seed.body = Value.Create(schema.body as TSchema);
    } catch {
      seed.body = {};
    }
  }
  return seed;
}

/** Does this route take a body at all? */
export function takesBody(method: string, schema: { body?: unknown } | undefined): boolean {
  return (
    method !== 'GET' && method !== 'HEAD' && (schema?.body !== undefined || method === 'POST' || method === 'PATCH' || method === 'PUT')
  );
}
