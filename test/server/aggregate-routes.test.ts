// Guarantees: POST .../{spans|traces|sessions}/aggregate answers over HTTP what the library answers;
// every bad body is a 422 whose loc names the offending field; a project's own model prices (PUT
// .../model_prices) price the llm spans logged after them, a logged cost is kept as sent, and the
// computed cost filters like any metric.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startServer } from '../support/helpers.js';

const llm = (name: string, model: string, metrics: Record<string, number>, created_at = '2026-02-01T10:00:00Z') => ({
  name,
  input: 'q',
  created_at,
  spans: [{ type: 'llm', name, input: 'x', model, created_at, metrics }],
});

test('aggregate over HTTP equals the library, and bad bodies answer 422 at the field', async (t) => {
  const s = await startServer(t);
  const ls = s.logStreamId;
  await s.call('POST', `/projects/${s.projectId}/traces`, {
    log_stream_id: ls,
    traces: [
      llm('a', 'gpt-4o', { num_input_tokens: 1000, num_output_tokens: 100 }),
      llm('b', 'gpt-4o', { num_input_tokens: 2000, num_output_tokens: 0 }, '2026-02-01T12:30:00Z'),
      llm('c', 'gpt-4o-mini', { num_input_tokens: 10, num_output_tokens: 10, cost: 7 }),
    ],
  });
  const body = {
    log_stream_id: ls,
    filters: [{ type: 'text', column_id: 'type', operator: 'eq', value: 'llm' }],
    group_by: [{ column_id: 'created_at', interval: '1h' }],
    measures: [{ op: 'count' }, { op: 'sum', column_id: 'metrics/cost', alias: 'cost' }],
  };
  const http = await s.call('POST', `/projects/${s.projectId}/spans/aggregate`, body);
  assert.equal(http.status, 200, JSON.stringify(http.body));
  assert.deepEqual(http.body, await s.store.aggregate('span', s.projectId, body as never));
  assert.deepEqual(http.body, {
    interval: '1h',
    rows: [
      // gpt-4o: 1000 x 2.5 + 100 x 10 USD per 1M = 0.0035; the logged cost 7 kept
      { created_at: '2026-02-01T10:00:00.000Z', count: 2, cost: 7.0035 },
      { created_at: '2026-02-01T11:00:00.000Z', count: 0, cost: null },
      { created_at: '2026-02-01T12:00:00.000Z', count: 1, cost: 0.005 },
    ],
  });
  // The computed cost filters like a logged one.
  const costly = await s.call('POST', `/projects/${s.projectId}/spans/count`, {
    log_stream_id: ls,
    filters: [{ type: 'number', column_id: 'metrics/cost', operator: 'between', value: [0.004, 0.006] }],
  });
  assert.equal(costly.body.total_count, 1);

  const bad: [string, unknown, (string | number)[]][] = [
    ['no measures', { log_stream_id: ls, measures: [] }, ['body', 'measures']],
    ['unknown op', { log_stream_id: ls, measures: [{ op: 'median', column_id: 'metrics/duration_ns' }] }, ['body', 'measures', 0, 'op']],
    ['sum without a column', { log_stream_id: ls, measures: [{ op: 'sum' }] }, ['body', 'measures', 0, 'column_id']],
    ['a text column measured', { log_stream_id: ls, measures: [{ op: 'avg', column_id: 'name' }] }, ['body', 'measures', 0, 'column_id']],
    ['unknown group', { log_stream_id: ls, group_by: ['modle'], measures: [{ op: 'count' }] }, ['body', 'group_by', 0]],
    ['ungroupable column', { log_stream_id: ls, group_by: ['input'], measures: [{ op: 'count' }] }, ['body', 'group_by', 0]],
    [
      'created_at without an interval',
      { log_stream_id: ls, group_by: [{ column_id: 'created_at' }], measures: [{ op: 'count' }] },
      ['body', 'group_by', 0, 'interval'],
    ],
    [
      'an unknown interval',
      { log_stream_id: ls, group_by: [{ column_id: 'created_at', interval: '2h' }], measures: [{ op: 'count' }] },
      ['body', 'group_by', 0, 'interval'],
    ],
    [
      'too many 1m buckets',
      {
        log_stream_id: ls,
        filters: [
          { type: 'date', column_id: 'created_at', operator: 'gte', value: '2026-01-01T00:00:00Z' },
          { type: 'date', column_id: 'created_at', operator: 'lt', value: '2026-02-01T00:00:00Z' },
        ],
        group_by: [{ column_id: 'created_at', interval: '1m' }],
        measures: [{ op: 'count' }],
      },
      ['body', 'group_by', 0, 'interval'],
    ],
    [
      'two measures of one name',
      { log_stream_id: ls, measures: [{ op: 'count' }, { op: 'count', column_id: 'metrics/cost', alias: 'count' }] },
      ['body', 'measures', 1, 'alias'],
    ],
    [
      'a bad filter value',
      {
        log_stream_id: ls,
        filters: [{ type: 'number', column_id: 'metrics/cost', operator: 'gt', value: 'x' }],
        measures: [{ op: 'count' }],
      },
      ['body', 'filters', 0, 'value'],
    ],
  ];
  for (const [what, b, loc] of bad) {
    const r = await s.call('POST', `/projects/${s.projectId}/spans/aggregate`, b);
    assert.equal(r.status, 422, `${what}: ${JSON.stringify(r.body)}`);
    const locs = (r.body.detail as { loc: unknown[] }[]).map((d) => JSON.stringify(d.loc));
    assert.ok(locs.includes(JSON.stringify(loc)), `${what}: loc ${JSON.stringify(loc)} among ${locs.join(' ')}`);
  }
});

test("a project's own prices price the llm spans logged after them", async (t) => {
  const s = await startServer(t);
  const shipped = await s.call('GET', `/projects/${s.projectId}/model_prices`);
  assert.equal(shipped.status, 200);
  assert.deepEqual(shipped.body.models, {});
  assert.deepEqual(shipped.body.defaults['gpt-4o'], { input: 2.5, output: 10, cached_input: 1.25 });
  assert.match(shipped.body.date, /^\d{4}-\d{2}-\d{2}$/);

  const bad = await s.call('PUT', `/projects/${s.projectId}/model_prices`, { models: { 'my-model': { input: -1, output: 2 } } });
  assert.equal(bad.status, 422);
  const put = await s.call('PUT', `/projects/${s.projectId}/model_prices`, {
    models: { 'My-Model': { input: 4, output: 8 }, 'gpt-4o': { input: 1, output: 1 } },
  });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  await s.call('POST', `/projects/${s.projectId}/traces`, {
    log_stream_id: s.logStreamId,
    traces: [
      llm('mine', 'acme/my-model-2026-01-01', { num_input_tokens: 1_000_000, num_output_tokens: 500_000 }),
      llm('theirs', 'gpt-4o', { num_input_tokens: 1_000_000, num_output_tokens: 1_000_000 }),
      llm('unpriced', 'other', { num_input_tokens: 5 }),
    ],
  });
  const got = await s.call('POST', `/projects/${s.projectId}/spans/aggregate`, {
    log_stream_id: s.logStreamId,
    group_by: ['name'],
    measures: [{ op: 'max', column_id: 'metrics/cost', alias: 'cost' }],
    filters: [{ type: 'text', column_id: 'type', operator: 'eq', value: 'llm' }],
  });
  const cost = Object.fromEntries((got.body.rows as { name: string; cost: number | null }[]).map((r) => [r.name, r.cost]));
  assert.deepEqual(cost, { mine: 8, theirs: 2, unpriced: null }, 'provider prefix and dated suffix match; the project overrides gpt-4o');
});
