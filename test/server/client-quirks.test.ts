// Guarantees: quirks of the official clients that are not bugs to refuse. galileo 1.32 looks a
// session up by external_id with an `id` filter: an id filter on a text column matches the text
// exactly (case-sensitive, not lower-cased like ids). The Go ingest probe never gets a 2xx.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startServer } from '../support/helpers.js';

test('an id filter on a text column is an exact text match', async (t) => {
  const s = await startServer(t);
  const ls = s.logStreamId;
  const made = await s.call('POST', `/projects/${s.projectId}/sessions`, { log_stream_id: ls, name: 'chat', external_id: 'User-7' });
  assert.equal(made.status, 200);
  const search = (filter: Record<string, unknown>) =>
    s.call('POST', `/projects/${s.projectId}/sessions/search`, {
      log_stream_id: ls,
      filters: [{ column_id: 'external_id', type: 'id', ...filter }],
      limit: 1,
    });
  const hit = await search({ operator: 'eq', value: 'User-7' });
  assert.equal(hit.status, 200, JSON.stringify(hit.body));
  assert.deepEqual(
    hit.body.records.map((r: any) => r.id),
    [made.body.id],
  );
  assert.deepEqual((await search({ value: 'User-7' })).body.records.length, 1, 'eq is the default operator of an id filter');
  assert.deepEqual((await search({ operator: 'eq', value: 'user-7' })).body.records, [], 'case-sensitive, unlike a uuid');
  assert.deepEqual((await search({ operator: 'one_of', value: ['x', 'User-7'] })).body.records.length, 1);
  const wrong = await search({ operator: 'gt', value: 'User-7' });
  assert.equal(wrong.status, 422);
  assert.equal(wrong.body.detail[0].loc.join('.'), 'body.filters.0.operator');
  const date = await s.call('POST', `/projects/${s.projectId}/spans/search`, {
    log_stream_id: ls,
    filters: [{ column_id: 'created_at', type: 'id', value: 'x' }],
  });
  assert.equal(date.status, 422, 'an id filter on a non-text column is still refused');
});

test('GET /ingest/healthz is not a 2xx, with or without a key', async (t) => {
  const s = await startServer(t);
  assert.ok((await fetch(`${s.url}/ingest/healthz`)).status >= 400);
  assert.ok((await s.call('GET', '/ingest/healthz')).status >= 400);
});

test('GET /scorers/{id}/version?version=N: one version of a scorer (the client getScorerVersion)', async (t) => {
  const s = await startServer(t);
  const list = await s.call('POST', '/scorers/list', { filters: [{ name: 'name', value: 'correctness', operator: 'eq' }] });
  const correctness = list.body.scorers[0];
  const v1 = await s.call('GET', `/scorers/${correctness.id}/version?version=1&scorer_id=${correctness.id}`);
  assert.equal(v1.status, 200, JSON.stringify(v1.body));
  assert.deepEqual([v1.body.id, v1.body.version, v1.body.scorer_id], [correctness.default_version_id, 1, correctness.id]);
  const made = await s.call('POST', '/scorers', { name: 'tone' });
  await s.call('POST', `/scorers/${made.body.id}/versions`, { user_prompt: 'v2' });
  const v2 = await s.call('GET', `/v2/scorers/${made.body.id}/version?version=2`);
  assert.deepEqual([v2.status, v2.body.version], [200, 2]);
  const missing = await s.call('GET', `/scorers/${correctness.id}/version?version=9`);
  assert.equal(missing.status, 404);
  assert.match(missing.body.detail, /has no version 9/);
  const noVersion = await s.call('GET', `/scorers/${correctness.id}/version`);
  assert.equal(noVersion.status, 422);
});

test('field names of galileo before 1.25: created_at_ns, userMetadata, token counts beside the metrics', async (t) => {
  const s = await startServer(t);
  const r = await s.call('POST', `/projects/${s.projectId}/traces`, {
    log_stream_id: s.logStreamId,
    traces: [
      {
        type: 'trace',
        name: 'old',
        input: 'q',
        created_at_ns: '2026-02-03T04:05:06.789Z',
        duration_ns: 5,
        userMetadata: { userId: 'u1' },
        spans: [
          {
            type: 'llm',
            name: 'chat',
            input: [{ role: 'user', content: 'q' }],
            created_at_ns: 1_770_091_506_790_123_000,
            input_tokens: 3,
            output_tokens: 4,
            total_tokens: 7,
            time_to_first_token_ns: 9,
            metrics: { num_input_tokens: 30 },
          },
          {
            type: 'tool',
            name: 'both',
            user_metadata: { a: '1' },
            userMetadata: { b: '2' },
            created_at: '2026-02-03T04:05:07.000Z',
            created_at_ns: '1999-01-01T00:00:00Z',
          },
        ],
      },
    ],
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const trace = await s.call('GET', `/projects/${s.projectId}/traces/${r.body.trace_ids[0]}`);
  assert.equal(trace.body.created_at, '2026-02-03T04:05:06.789Z');
  assert.deepEqual(trace.body.user_metadata, { userId: 'u1' });
  assert.deepEqual(trace.body.metrics, { duration_ns: 5 });
  const [llm, tool] = trace.body.spans;
  assert.equal(llm.created_at, '2026-02-03T04:05:06.790123Z', 'nanoseconds since the epoch');
  assert.deepEqual(
    llm.metrics,
    { num_input_tokens: 30, num_output_tokens: 4, num_total_tokens: 7, time_to_first_token_ns: 9 },
    'a metric sent both ways keeps the metrics value',
  );
  assert.deepEqual(tool.user_metadata, { a: '1' }, 'user_metadata wins over userMetadata');
  assert.equal(tool.created_at, '2026-02-03T04:05:07.000Z', 'created_at wins over created_at_ns');
  const bad = await s.call('POST', `/projects/${s.projectId}/traces`, {
    log_stream_id: s.logStreamId,
    traces: [{ name: 'x', created_at_ns: 'yesterday' }],
  });
  assert.equal(bad.status, 422);
  assert.equal(bad.body.detail[0].loc.join('.'), 'body.traces.0.created_at_ns');
});
