// Guarantees: the ingest routes answer under every prefix on a real server; every kind of bad input
// gets a 4xx with a useful message and writes nothing; credentials are required.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildServer } from '../../src/server/build-server.js';
import { everyKindTrace, jsonCaller, openStore, startServer } from '../support/helpers.js';

test('log traces and spans over HTTP under bare, /v2 and /public/v2 paths', async (t) => {
  const s = await startServer(t);
  for (const prefix of ['', '/v2', '/public/v2']) {
    const r = await s.call('POST', `${prefix}/projects/${s.projectId}/traces`, {
      log_stream_id: s.logStreamId,
      traces: [everyKindTrace(prefix || 'bare')],
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.spans_count, 6);
    assert.equal(r.body.project_name, 'test-project');
    const traceId = r.body.trace_ids[0];
    const r2 = await s.call('POST', `${prefix}/projects/${s.projectId}/spans?project_id=${s.projectId}`, {
      log_stream_id: s.logStreamId,
      trace_id: traceId,
      parent_id: traceId,
      spans: [{ type: 'llm', input: [{ role: 'user', content: 'hi' }], output: { role: 'assistant', content: 'yo' } }],
      reliable: true,
      logging_method: 'api_direct',
      client_version: '1.0',
      unknown_key: 'ignored',
    });
    assert.equal(r2.status, 200, JSON.stringify(r2.body));
    assert.equal(r2.body.records_count, 1);
    assert.equal(r2.body.trace_id, traceId);
  }
  const count = await s.call('POST', `/v2/projects/${s.projectId}/spans/count`, { log_stream_id: s.logStreamId });
  assert.deepEqual(count.body, { total_count: 21 });
  const page = await s.call('POST', `/projects/${s.projectId}/spans/search`, { log_stream_id: s.logStreamId, limit: 5 });
  assert.equal(page.status, 200);
  assert.equal(page.body.records.length, 5);
  assert.equal(page.body.next_starting_token, 5);
});

test('bad input: 4xx with a message pointing at the field, and nothing written', async (t) => {
  const s = await startServer(t, { bodyLimit: 8 * 1024 * 1024 });
  const ls = s.logStreamId;
  const traceId = '0a7e54c2-7d5b-4a0f-8d6e-3b2a1c0f9e21';
  const ok = await s.call('POST', `/projects/${s.projectId}/traces`, { log_stream_id: ls, traces: [everyKindTrace('keep')] });
  assert.equal(ok.status, 200);
  const otherTrace = ok.body.trace_ids[0];
  const spans = await s.call('POST', `/projects/${s.projectId}/spans/search`, { log_stream_id: ls });
  const agentId = spans.body.records.find((r: any) => r.type === 'agent').id;
  const big = 'x'.repeat(9 * 1024 * 1024);
  const cases: { name: string; path: string; body: unknown; status: number; loc?: string; msg?: RegExp }[] = [
    { name: 'malformed JSON', path: 'spans', body: '{"spans": [', status: 422, loc: 'body', msg: /JSON/ },
    {
      name: 'missing spans',
      path: 'spans',
      body: { log_stream_id: ls, trace_id: traceId, parent_id: traceId },
      status: 422,
      loc: 'body.spans',
      msg: /required/,
    },
    {
      name: 'empty spans',
      path: 'spans',
      body: { log_stream_id: ls, trace_id: traceId, parent_id: traceId, spans: [] },
      status: 422,
      loc: 'body.spans',
      msg: /at least 1/,
    },
    {
      name: 'unknown span type',
      path: 'spans',
      body: { log_stream_id: ls, trace_id: traceId, parent_id: traceId, spans: [{ type: 'banana' }] },
      status: 422,
      loc: 'body.spans.0.type',
      msg: /'llm'/,
    },
    {
      name: 'wrong type of name',
      path: 'spans',
      body: { log_stream_id: ls, trace_id: traceId, parent_id: traceId, spans: [{ type: 'tool', name: 5 }] },
      status: 422,
      loc: 'body.spans.0.name',
      msg: /string/,
    },
    {
      name: 'bad uuid',
      path: 'spans',
      body: { log_stream_id: ls, trace_id: 'nope', parent_id: traceId, spans: [{ type: 'tool' }] },
      status: 422,
      loc: 'body.trace_id',
      msg: /UUID/,
    },
    {
      name: 'bad timestamp',
      path: 'traces',
      body: { log_stream_id: ls, traces: [{ created_at: 'yesterday' }] },
      status: 422,
      loc: 'body.traces.0.created_at',
      msg: /datetime/,
    },
    {
      name: 'bad message role',
      path: 'traces',
      body: { log_stream_id: ls, traces: [{ spans: [{ type: 'llm', input: [{ role: 'robot', content: 'x' }] }] }] },
      status: 422,
      loc: 'body.traces.0.spans.0.input.0.role',
    },
    {
      name: 'nested bad kind deep down',
      path: 'traces',
      body: { log_stream_id: ls, traces: [{ spans: [{ type: 'workflow', spans: [{ type: 'workflow', spans: [{ type: 'x' }] }] }] }] },
      status: 422,
      loc: 'body.traces.0.spans.0.spans.0.spans.0.type',
    },
    {
      name: 'parent from another trace',
      path: 'spans',
      body: { log_stream_id: ls, trace_id: traceId, parent_id: agentId, spans: [{ type: 'tool' }] },
      status: 422,
      loc: 'body.parent_id',
      msg: new RegExp(otherTrace),
    },
    {
      name: 'no run id',
      path: 'spans',
      body: { trace_id: traceId, parent_id: traceId, spans: [{ type: 'tool' }] },
      status: 422,
      loc: 'body.log_stream_id',
    },
    {
      name: 'unknown log stream',
      path: 'spans',
      body: { log_stream_id: traceId, trace_id: traceId, parent_id: traceId, spans: [{ type: 'tool' }] },
      status: 404,
    },
    { name: 'body over the limit', path: 'traces', body: { log_stream_id: ls, traces: [{ input: big }] }, status: 413 },
  ];
  for (const c of cases) {
    const r = await s.call('POST', `/projects/${s.projectId}/${c.path}`, c.body);
    assert.equal(r.status, c.status, `${c.name}: ${JSON.stringify(r.body).slice(0, 300)}`);
    if (c.loc) {
      assert.ok(Array.isArray(r.body.detail), `${c.name}: detail is a list`);
      const issue = r.body.detail.find((d: any) => d.loc.join('.') === c.loc);
      assert.ok(issue, `${c.name}: expected loc ${c.loc}, got ${JSON.stringify(r.body.detail)}`);
      assert.ok(typeof issue.msg === 'string' && typeof issue.type === 'string');
      if (c.msg) assert.match(issue.msg, c.msg, c.name);
    } else {
      assert.equal(typeof r.body.detail, 'string', c.name);
    }
  }
  const after = await s.call('POST', `/projects/${s.projectId}/spans/count`, { log_stream_id: ls });
  assert.equal(after.body.total_count, 6, 'nothing but the first trace was written');
  const traces = await s.call('POST', `/projects/${s.projectId}/traces/count`, { log_stream_id: ls });
  assert.equal(traces.body.total_count, 1);
});

test('every route but the healthcheck needs a valid key', async (t) => {
  const s = await startServer(t);
  assert.equal((await fetch(`${s.url}/healthcheck`)).status, 200);
  const none = await fetch(`${s.url}/projects?project_name=x`);
  assert.equal(none.status, 401);
  assert.match(((await none.json()) as { detail: string }).detail, /API key/);
  const wrong = await s.call('GET', '/projects', undefined, { 'Galileo-API-Key': 'tl_wrong' });
  assert.equal(wrong.status, 401);
  const svc = await fetch(`${s.url}/v2/projects?project_name=test-project`, { headers: { 'Service-API-Key': s.key } });
  assert.equal(svc.status, 200);
  assert.equal(((await svc.json()) as unknown[]).length, 1);
  const login = await s.call('POST', '/login/api_key', { api_key: s.key });
  assert.equal(login.status, 200);
  assert.equal(login.body.token_type, 'bearer');
  const bearer = await fetch(`${s.url}/projects/all`, { headers: { Authorization: `Bearer ${login.body.access_token}` } });
  assert.equal(bearer.status, 200);
  const forged = await fetch(`${s.url}/projects/all`, { headers: { Authorization: `Bearer ${login.body.access_token}x` } });
  assert.equal(forged.status, 401);
});

test('projects and log streams: create, find by name, list', async (t) => {
  const s = await startServer(t);
  const missing = await s.call('GET', '/projects?project_name=nope&type=gen_ai');
  assert.deepEqual(missing.body, []);
  const created = await s.call('POST', '/projects', { name: 'my-project', type: 'gen_ai', create_example_templates: false });
  assert.equal(created.status, 200);
  const pid = created.body.id;
  const dup = await s.call('POST', '/projects', { name: 'my-project' });
  assert.equal(dup.status, 409);
  const found = await s.call('GET', '/projects?project_name=my-project&type=gen_ai');
  assert.equal(found.body.length, 1);
  assert.equal(found.body[0].id, pid);
  const ls = await s.call('POST', `/projects/${pid}/log_streams?project_id=${pid}`, { name: 'my-stream' });
  assert.equal(ls.status, 200);
  assert.equal(ls.body.project_id, pid);
  const list = await s.call('GET', `/v2/projects/${pid}/log_streams?project_id=${pid}`);
  assert.deepEqual(
    list.body.map((l: any) => l.name),
    ['my-stream'],
  );
  const unknown = await s.call('GET', `/projects/0a7e54c2-7d5b-4a0f-8d6e-3b2a1c0f9e99/log_streams`);
  assert.equal(unknown.status, 404);
  assert.match(unknown.body.detail, /not found/);
});

test('streaming flow: session, empty trace, spans one by one, updates, conclusion, read back nested', async (t) => {
  const s = await startServer(t);
  const ls = s.logStreamId;
  const session = await s.call('POST', `/projects/${s.projectId}/sessions?project_id=${s.projectId}`, {
    log_stream_id: ls,
    name: 'chat 1',
    external_id: 'ext-1',
    previous_session_id: null,
  });
  assert.equal(session.status, 200, JSON.stringify(session.body));
  assert.equal(session.body.project_name, 'test-project');
  const traceId = '1a7e54c2-7d5b-4a0f-8d6e-3b2a1c0f9e31';
  const agentId = '2a7e54c2-7d5b-4a0f-8d6e-3b2a1c0f9e32';
  const start = await s.call('POST', `/projects/${s.projectId}/traces`, {
    log_stream_id: ls,
    experiment_id: null,
    session_id: session.body.id,
    reliable: true,
    is_complete: false,
    traces: [{ type: 'trace', id: traceId, name: 'stream', input: 'hello', spans: [] }],
  });
  assert.equal(start.status, 200, JSON.stringify(start.body));
  const span = (body: unknown) => s.call('POST', `/projects/${s.projectId}/spans?project_id=${s.projectId}`, body);
  const r1 = await span({
    spans: [{ type: 'agent', id: agentId, name: 'agent', input: 'go' }],
    trace_id: traceId,
    parent_id: traceId,
    experiment_id: null,
    log_stream_id: ls,
    reliable: false,
  });
  assert.equal(r1.status, 200, JSON.stringify(r1.body));
  const r2 = await span({
    spans: [{ type: 'llm', name: 'chat', input: [{ role: 'user', content: 'hi' }], output: { role: 'assistant', content: 'hello!' } }],
    trace_id: traceId,
    parent_id: agentId,
    log_stream_id: ls,
    reliable: false,
  });
  assert.equal(r2.status, 200, JSON.stringify(r2.body));
  const upSpan = await s.call('PATCH', `/projects/${s.projectId}/spans/${agentId}?project_id=${s.projectId}&span_id=${agentId}`, {
    span_id: agentId,
    output: 'done',
    log_stream_id: ls,
    duration_ns: 42,
  });
  assert.equal(upSpan.status, 200, JSON.stringify(upSpan.body));
  assert.equal(upSpan.body.span_id, agentId);
  const conclude = await s.call('PATCH', `/projects/${s.projectId}/traces/${traceId}?project_id=${s.projectId}&trace_id=${traceId}`, {
    trace_id: traceId,
    output: 'bye',
    tags: ['final'],
    is_complete: true,
    experiment_id: null,
    log_stream_id: ls,
  });
  assert.equal(conclude.status, 200, JSON.stringify(conclude.body));
  assert.equal(conclude.body.session_id, session.body.id);
  const trace = await s.call('GET', `/projects/${s.projectId}/traces/${traceId}`);
  assert.equal(trace.status, 200, JSON.stringify(trace.body));
  assert.equal(trace.body.output, 'bye');
  assert.equal(trace.body.is_complete, true);
  assert.deepEqual(trace.body.tags, ['final']);
  assert.equal(trace.body.has_children, true);
  assert.equal(trace.body.spans.length, 1);
  assert.equal(trace.body.spans[0].id, agentId);
  assert.equal(trace.body.spans[0].output, 'done');
  assert.equal(trace.body.spans[0].metrics.duration_ns, 42);
  assert.equal(trace.body.spans[0].spans[0].name, 'chat');
  assert.deepEqual(trace.body.spans[0].spans[0].output, { role: 'assistant', content: 'hello!' });
  const count = await s.call('POST', `/projects/${s.projectId}/traces/count`, { log_stream_id: ls });
  assert.equal(count.body.total_count, 1, 'updates replace, never duplicate');
  const sess = await s.call('GET', `/projects/${s.projectId}/sessions/${session.body.id}`);
  assert.equal(sess.body.traces.length, 1);
  assert.equal(sess.body.external_id, 'ext-1');
  const found = await s.call('POST', `/projects/${s.projectId}/sessions/search`, {
    log_stream_id: ls,
    filters: [{ type: 'text', column_id: 'external_id', operator: 'eq', value: 'ext-1' }],
  });
  assert.equal(found.body.records[0].id, session.body.id);
  const missing = await s.call('PATCH', `/projects/${s.projectId}/traces/3a7e54c2-7d5b-4a0f-8d6e-3b2a1c0f9e33`, {
    log_stream_id: ls,
    output: 'x',
  });
  assert.equal(missing.status, 404);
  assert.match(missing.body.detail, /not found/);
});

test('a body the route checked is not checked again by the library method it calls', async (t) => {
  const fx = await openStore(t);
  const user = fx.store.users.create({ email: `once${Date.now()}@test` });
  fx.store.catalog.addProjectMember(fx.projectId, user.id, 'owner');
  const key = fx.store.users.createApiKey(user.id).key;
  const app = buildServer({ store: fx.store });
  // After the route's check and before the handler, the body is changed into one its schema refuses
  // (`reliable` a string), which the engine tolerates: only a second check would refuse it now.
  app.addHook('preHandler', async (req) => {
    if (req.body && typeof req.body === 'object' && 'reliable' in req.body) (req.body as Record<string, unknown>)['reliable'] = 'yes';
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());
  const call = jsonCaller(url, key);
  const r = await call('POST', `/projects/${fx.projectId}/traces`, {
    log_stream_id: fx.logStreamId,
    reliable: true,
    traces: [everyKindTrace('once')],
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  // The same body through the library is checked.
  await assert.rejects(
    fx.store.logTraces(fx.projectId, { log_stream_id: fx.logStreamId, reliable: 'yes', traces: [everyKindTrace('lib')] } as never),
    /reliable/,
  );
  // A body the route refuses is still refused.
  const bad = await call('POST', `/projects/${fx.projectId}/traces`, { log_stream_id: fx.logStreamId, reliable: 'yes', traces: [] });
  assert.equal(bad.status, 422);
});

test('Idempotency-Key: a repeat without it is two traces; a retry with it is one (the first answer); a bad or reused key is 422 naming it', async (t) => {
  const s = await startServer(t);
  const path = `/v2/projects/${s.projectId}/traces`;
  const body = { log_stream_id: s.logStreamId, traces: [{ name: 'ask', input: 'same question', output: 'same answer' }] };
  const a = await s.call('POST', path, body);
  const b = await s.call('POST', path, body);
  assert.equal(a.status, 200);
  assert.notDeepEqual(a.body.trace_ids, b.body.trace_ids);
  const k1 = await s.call('POST', path, body, { 'Idempotency-Key': 'retry-me' });
  const k2 = await s.call('POST', path, body, { 'Idempotency-Key': 'retry-me' });
  assert.equal(k2.status, 200);
  assert.deepEqual(k2.body, k1.body);
  const count = await s.call('POST', `/v2/projects/${s.projectId}/traces/count`, { log_stream_id: s.logStreamId });
  assert.deepEqual(count.body, { total_count: 3 });
  const reused = await s.call('POST', path, { ...body, traces: [{ name: 'other' }] }, { 'Idempotency-Key': 'retry-me' });
  assert.equal(reused.status, 422);
  assert.deepEqual(reused.body.detail[0].loc, ['header', 'idempotency-key']);
  const bad = await s.call('POST', path, body, { 'Idempotency-Key': 'x'.repeat(256) });
  assert.equal(bad.status, 422);
  assert.deepEqual(bad.body.detail[0].loc, ['header', 'idempotency-key']);
  const after = await s.call('POST', `/v2/projects/${s.projectId}/traces/count`, { log_stream_id: s.logStreamId });
  assert.deepEqual(after.body, { total_count: 3 });
});
