// Guarantees: the requests of a streaming client may arrive in any order (it sends them concurrently,
// reliable: false) and the stored trace is the same: spans before their trace, a child span before its
// parent, the conclusion (PATCH) before the trace itself. The trace keeps its children, its
// conclusion and its session; no stand-in session is left behind. Reliable requests still get a 422
// for a parent that does not exist.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startServer } from '../support/helpers.js';

const TRACE = '6b1e54c2-7d5b-4a0f-8d6e-3b2a1c0f9e01';
const AGENT = '6b1e54c2-7d5b-4a0f-8d6e-3b2a1c0f9e02';
const LLM = '6b1e54c2-7d5b-4a0f-8d6e-3b2a1c0f9e03';
const TOOL = '6b1e54c2-7d5b-4a0f-8d6e-3b2a1c0f9e04';

test('spans before their trace, a child before its parent, the conclusion before the trace: one consistent trace', async (t) => {
  const s = await startServer(t);
  const ls = s.logStreamId;
  const q = `?project_id=${s.projectId}`;
  const session = await s.call('POST', `/projects/${s.projectId}/sessions${q}`, {
    log_stream_id: ls,
    name: 'chat',
    external_id: 'ext-order',
  });
  assert.equal(session.status, 200);
  const span = (parent: string, body: Record<string, unknown>) =>
    s.call('POST', `/projects/${s.projectId}/spans${q}`, {
      spans: [body],
      trace_id: TRACE,
      parent_id: parent,
      experiment_id: null,
      log_stream_id: ls,
      reliable: false,
    });
  // The llm span overtakes its agent, which overtakes the trace.
  const llm = await span(AGENT, {
    type: 'llm',
    id: LLM,
    name: 'reason',
    input: [{ role: 'user', content: 'hi' }],
    output: { role: 'assistant', content: 'yo' },
    created_at: '2026-05-05T09:00:00.010Z',
  });
  assert.equal(llm.status, 200, JSON.stringify(llm.body));
  const agent = await span(TRACE, {
    type: 'agent',
    id: AGENT,
    name: 'agent',
    input: 'go',
    created_at: '2026-05-05T09:00:00.005Z',
    spans: [],
  });
  assert.equal(agent.status, 200, JSON.stringify(agent.body));
  const tool = await span(AGENT, {
    type: 'tool',
    id: TOOL,
    name: 'calc',
    input: '1+1',
    output: '2',
    created_at: '2026-05-05T09:00:00.020Z',
  });
  assert.equal(tool.status, 200, JSON.stringify(tool.body));
  // The conclusion overtakes the trace too.
  const conclude = await s.call('PATCH', `/projects/${s.projectId}/traces/${TRACE}${q}&trace_id=${TRACE}`, {
    trace_id: TRACE,
    output: 'done',
    status_code: 200,
    tags: ['streaming'],
    is_complete: true,
    experiment_id: null,
    log_stream_id: ls,
  });
  assert.equal(conclude.status, 200, JSON.stringify(conclude.body));
  const start = await s.call('POST', `/projects/${s.projectId}/traces`, {
    log_stream_id: ls,
    experiment_id: null,
    reliable: true,
    session_id: session.body.id,
    is_complete: false,
    include_trace_ids: false,
    traces: [
      {
        type: 'trace',
        id: TRACE,
        name: 'turn',
        input: 'hello',
        created_at: '2026-05-05T09:00:00.000Z',
        tags: ['streaming'],
        user_metadata: { turn: '1' },
        metrics: {},
        spans: [],
      },
    ],
  });
  assert.equal(start.status, 200, JSON.stringify(start.body));

  const trace = await s.call('GET', `/projects/${s.projectId}/traces/${TRACE}`);
  assert.equal(trace.status, 200);
  assert.equal(trace.body.name, 'turn', 'the trace itself replaced the stand-in');
  assert.equal(trace.body.input, 'hello');
  assert.equal(trace.body.output, 'done', 'the conclusion that came first is kept');
  assert.equal(trace.body.status_code, 200);
  assert.equal(trace.body.is_complete, true);
  assert.equal(trace.body.has_children, true);
  assert.deepEqual(trace.body.user_metadata, { turn: '1' });
  assert.equal(trace.body.created_at, '2026-05-05T09:00:00.000Z');
  assert.equal(trace.body.session_id, session.body.id);
  assert.deepEqual(
    trace.body.spans.map((x: any) => x.id),
    [AGENT],
  );
  assert.equal(trace.body.spans[0].has_children, true, 'the parent that came after its child knows it has one');
  assert.deepEqual(trace.body.spans[0].spans.map((x: any) => x.id).sort(), [LLM, TOOL].sort());
  const spans = await s.call('POST', `/projects/${s.projectId}/spans/search`, { log_stream_id: ls });
  assert.equal(spans.body.records.length, 3);
  for (const r of spans.body.records) {
    assert.equal(r.session_id, session.body.id, `${r.name} moved to the trace's session`);
    assert.equal(r.trace_id, TRACE);
  }
  const sessions = await s.call('POST', `/projects/${s.projectId}/sessions/search`, { log_stream_id: ls });
  assert.deepEqual(
    sessions.body.records.map((r: any) => r.id),
    [session.body.id],
    'the stand-in session is gone',
  );
  const count = await s.call('POST', `/projects/${s.projectId}/traces/count`, { log_stream_id: ls });
  assert.equal(count.body.total_count, 1);
  const grouped = await s.call('GET', `/projects/${s.projectId}/sessions/${session.body.id}`);
  assert.deepEqual(
    grouped.body.traces.map((x: any) => x.id),
    [TRACE],
  );
  assert.equal(grouped.body.traces[0].spans[0].spans.length, 2);
});

test('spans before a trace without a session: the trace keeps its implicit session and its children', async (t) => {
  const s = await startServer(t);
  const ls = s.logStreamId;
  const r = await s.call('POST', `/projects/${s.projectId}/spans`, {
    spans: [{ type: 'tool', id: TOOL, name: 'calc' }],
    trace_id: TRACE,
    parent_id: TRACE,
    log_stream_id: ls,
    reliable: false,
  });
  assert.equal(r.status, 200);
  const start = await s.call('POST', `/projects/${s.projectId}/traces`, {
    log_stream_id: ls,
    is_complete: false,
    traces: [{ id: TRACE, name: 'late', input: 'x', spans: [] }],
  });
  assert.equal(start.status, 200);
  const trace = await s.call('GET', `/projects/${s.projectId}/traces/${TRACE}`);
  assert.equal(trace.body.name, 'late');
  assert.equal(trace.body.has_children, true);
  assert.equal(trace.body.is_complete, false);
  assert.equal(trace.body.session_id, r.body.session_id);
  assert.equal(trace.body.spans[0].session_id, r.body.session_id);
  const sessions = await s.call('POST', `/projects/${s.projectId}/sessions/count`, { log_stream_id: ls });
  assert.equal(sessions.body.total_count, 1);
});

test('a reliable request still gets 422 for a parent span that does not exist', async (t) => {
  const s = await startServer(t);
  const r = await s.call('POST', `/projects/${s.projectId}/spans`, {
    spans: [{ type: 'tool' }],
    trace_id: TRACE,
    parent_id: AGENT,
    log_stream_id: s.logStreamId,
  });
  assert.equal(r.status, 422);
  assert.equal(r.body.detail[0].loc.join('.'), 'body.parent_id');
  const count = await s.call('POST', `/projects/${s.projectId}/spans/count`, { log_stream_id: s.logStreamId });
  assert.equal(count.body.total_count, 0);
});
