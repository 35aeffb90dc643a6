// Example request bodies shown in the document and on /docs (a test checks each validates against
// its operation's schema). Keyed by method and documented path; `{level}` is spans|traces|sessions.

const LS = '6f1c2d8e-3b4a-4c5d-9e8f-0a1b2c3d4e5f';

// Columns every level has, so each example works for spans, traces and sessions alike.
const filters = [
  { type: 'text', column_id: 'name', operator: 'contains', value: 'question' },
  { type: 'date', column_id: 'created_at', operator: 'gte', value: '2026-01-01T00:00:00Z' },
];

const EXAMPLES: Record<string, unknown> = {
  'POST /v2/login/api_key': { api_key: 'tl_...' },
  'POST /v2/projects': { name: 'my-app', description: 'The support bot', labels: ['prod'] },
  'POST /v2/projects/paginated': {
    filters: [{ name: 'name', operator: 'contains', value: 'app' }],
    sort: { name: 'created_at', ascending: false },
  },
  'POST /v2/projects/{project_id}/log_streams': { name: 'production' },
  'POST /v2/projects/{project_id}/log_streams/search': { filters: [{ name: 'name', operator: 'eq', value: 'production' }], limit: 20 },
  'POST /v2/projects/{project_id}/traces': {
    log_stream_id: LS,
    traces: [
      {
        name: 'answer question',
        input: 'What is the capital of France?',
        output: 'Paris',
        spans: [
          {
            type: 'llm',
            name: 'chat',
            input: [{ role: 'user', content: 'What is the capital of France?' }],
            output: { role: 'assistant', content: 'Paris' },
            model: 'gpt-4o',
            metrics: { num_input_tokens: 9, num_output_tokens: 1 },
          },
        ],
      },
    ],
  },
  'POST /v2/projects/{project_id}/{level}/search': {
    log_stream_id: LS,
    filters,
    sort: { column_id: 'created_at', ascending: false },
    limit: 50,
  },
  'POST /v2/projects/{project_id}/{level}/partial_search': {
    log_stream_id: LS,
    filter_tree: {
      or: [
        { filter: filters[0] },
        { not: { filter: { type: 'date', column_id: 'created_at', operator: 'lt', value: '2025-12-01T00:00:00Z' } } },
      ],
    },
    select_columns: { column_ids: ['name', 'input', 'output', 'created_at'] },
    include_counts: true,
  },
  'POST /v2/projects/{project_id}/{level}/count': { log_stream_id: LS, filters },
  'POST /v2/projects/{project_id}/{level}/aggregate': {
    log_stream_id: LS,
    filters: [
      { type: 'date', column_id: 'created_at', operator: 'gte', value: '2026-01-01T00:00:00Z' },
      { type: 'date', column_id: 'created_at', operator: 'lt', value: '2026-01-02T00:00:00Z' },
    ],
    group_by: [{ column_id: 'created_at', interval: '1h' }],
    measures: [
      { op: 'count' },
      { op: 'p50', column_id: 'metrics/duration_ns', alias: 'p50_duration' },
      { op: 'p95', column_id: 'metrics/duration_ns', alias: 'p95_duration' },
      { op: 'sum', column_id: 'metrics/num_input_tokens', alias: 'input_tokens' },
      { op: 'count', alias: 'errors', filters: [{ type: 'number', column_id: 'status_code', operator: 'gte', value: 400 }] },
    ],
  },
  'POST /v2/projects/{project_id}/{level}/delete': {
    log_stream_id: LS,
    filters: [{ type: 'text', column_id: 'name', operator: 'eq', value: 'test run' }],
  },
  'POST /v2/projects/{project_id}/{level}/available_columns': { log_stream_id: LS },
  'PUT /v2/projects/{project_id}/model_prices': { models: { 'my-finetune': { input: 3, output: 12 } } },
  'POST /v2/scorers/list': { filters: [{ name: 'scorer_type', operator: 'eq', value: 'llm' }], sort: { name: 'name', ascending: true } },
};

export function requestExample(method: string, path: string): unknown {
  const key = `${method} ${path.replace(/\/(spans|traces|sessions)\/(search|partial_search|count|aggregate|delete|available_columns)$/, '/{level}/$2')}`;
  return EXAMPLES[key];
}
