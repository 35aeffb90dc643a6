// Guarantees: the official JS client (npm galileo 1.33.1, pinned) works against `tracelake serve`
// unchanged, pointed at it by environment variables only (GALILEO_API_URL, GALILEO_API_KEY,
// GALILEO_PROJECT, GALILEO_LOG_STREAM). Each flow runs the real client in its own process; a proxy
// records every request it sends and none gets a 4xx or 5xx unless the flow expects it. After each
// flow tracelake's own API returns what was logged, field by field, with the hierarchy intact.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { describeFailures, failures, runFlow, startProxy, startTracelake, summarize, type RecordedRequest } from './support/harness.js';
import { assertTraceMatches, findRun, getTree, helperLookupFailure, records, tracesPosted } from './support/expect.js';

type Rec = Record<string, any>;
const PROJECT = 'shop-assistant';
const STREAM = 'production';
const MISSING = '00000000-0000-4000-8000-000000000000';

function checkLog(t: TestContext, name: string, reqs: RecordedRequest[], expected: (r: RecordedRequest) => boolean = () => false): void {
  t.diagnostic(`requests of ${name}:\n  ${summarize(reqs).join('\n  ')}`);
  const bad = failures(reqs).filter((r) => !expected(r));
  assert.deepEqual(bad, [], `requests that failed:\n${describeFailures(bad)}`);
  for (const r of reqs) {
    const route = r.route.replace(/^\/(public\/)?v2(?=\/)/, '');
    if (route === '/healthcheck' || route.startsWith('/login')) continue;
    assert.equal(r.auth, 'Bearer', `${r.method} ${r.path} carries the bearer token from /login/api_key`);
  }
}

test('galileo 1.33.1 against tracelake serve', async (t) => {
  const tl = await startTracelake(t);
  const proxy = await startProxy(t, tl.url);
  const env = {
    GALILEO_PKG: 'galileo',
    GALILEO_API_URL: proxy.url,
    GALILEO_API_KEY: tl.key,
    GALILEO_PROJECT: PROJECT,
    GALILEO_LOG_STREAM: STREAM,
  };
  const flowRequests = (flow: string) => proxy.requests.filter((r) => r.flow === flow);

  await t.test('the Go ingest probe is refused, so clients stay on the standard routes (COMPAT.md 2)', async () => {
    for (const headers of [{}, { 'Galileo-API-Key': tl.key }] as Record<string, string>[]) {
      const res = await fetch(`${tl.url}/ingest/healthz`, { headers });
      assert.ok(res.status >= 400, `GET /ingest/healthz answered ${res.status}`);
    }
  });

  await t.test('batch mode: init, nested traces of every span kind, flush', async (t) => {
    proxy.flow = 'batch';
    const { result } = await runFlow<{ left: number }>(t, 'batch.ts', env);
    const reqs = flowRequests('batch');
    checkLog(t, 'batch', reqs);
    assert.equal(result.left, 0, 'flush succeeded: the client validated the response and cleared its buffer');
    // The client found nothing, created the project and the stream, logged in twice (axios and
    // Speakeasy), and sent both traces in one request.
    assert.deepEqual(
      reqs.map((r) => `${r.method} ${r.route}`),
      [
        'GET /healthcheck',
        'POST /login/api_key',
        'GET /projects',
        'POST /projects',
        'GET /projects/{id}/log_streams',
        'POST /projects/{id}/log_streams',
        'POST /login/api_key',
        'POST /projects/{id}/traces',
      ],
    );
    assert.deepEqual(reqs[2]!.query, { project_name: PROJECT, type: 'gen_ai' });
    assert.deepEqual(reqs[3]!.body, { name: PROJECT, type: 'gen_ai', create_example_templates: false });
    const { projectId, runId } = await findRun(tl, PROJECT, STREAM);
    const [posted] = tracesPosted(reqs);
    assert.ok(posted);
    assert.equal(posted.log_stream_id, runId);
    assert.equal(posted.traces.length, 2);
    const ingest = reqs[7]!.response as Rec;
    assert.deepEqual(
      [ingest['project_id'], ingest['project_name'], ingest['records_count'], ingest['traces_count']],
      [projectId, PROJECT, 8, 2],
    );

    const stored = await records(tl, projectId, runId, 'traces');
    assert.deepEqual(stored.map((r) => r['name']).sort(), ['single-llm', 'weather-question']);
    const sessions = await records(tl, projectId, runId, 'sessions');
    assert.equal(sessions.length, 2, 'each trace logged without a session gets its own');
    for (const sent of posted.traces as Rec[]) {
      const tree = await getTree(tl, projectId, 'traces', sent['id']);
      assertTraceMatches(tree, sent, { projectId, runId, sessionId: tree['session_id'], clientIds: true });
      assert.ok(sessions.some((s) => s['id'] === tree['session_id']));
    }

    // What the application logged, spelled out (independently of the wire).
    const trace = await getTree(tl, projectId, 'traces', stored.find((r) => r['name'] === 'weather-question')!['id']);
    assert.equal(trace['input'], 'What is the weather in Paris?');
    assert.equal(trace['output'], 'It is sunny and 21 C in Paris.');
    assert.equal(trace['created_at'], '2026-05-04T10:00:00.000Z');
    assert.deepEqual(trace['tags'], ['e2e', 'batch']);
    assert.deepEqual(trace['user_metadata'], { userId: 'u-42', plan_tier: 'pro' });
    assert.deepEqual(trace['metrics'], { duration_ns: 1_000_000_000 });
    const [agent] = trace['spans'];
    assert.deepEqual(
      [agent.type, agent.name, agent.agent_type, agent.input, agent.output],
      ['agent', 'planner', 'planner', 'plan the answer', 'answer planned'],
    );
    assert.deepEqual(agent.user_metadata, { agentVersion: '3' });
    const [llm, workflow] = agent.spans;
    assert.deepEqual(llm.input, [
      { role: 'system', content: 'You are a weather bot.' },
      { role: 'user', content: 'What is the weather in Paris?' },
    ]);
    assert.deepEqual(llm.output, { role: 'assistant', content: 'Let me look that up.' });
    assert.deepEqual(llm.metrics, {
      duration_ns: 250_000_000,
      num_input_tokens: 21,
      num_output_tokens: 7,
      num_total_tokens: 28,
      time_to_first_token_ns: 80_000_000,
      num_reasoning_tokens: 3, // sent as numReasoningTokens
      num_cached_input_tokens: 5, // sent as numCachedInputTokens
      // computed where the client logged none: gpt-4o-mini, 16 prompt tokens at 0.15, 5 cached at
      // 0.075 and 7 completion tokens at 0.60 USD per 1M
      cost: 0.000006975,
    });
    assert.deepEqual([llm.model, llm.temperature, llm.created_at], ['gpt-4o-mini', 0.2, '2026-05-04T10:00:00.020Z']);
    assert.deepEqual(llm.tools, [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }]);
    assert.deepEqual([workflow.type, workflow.name, workflow.output], ['workflow', 'lookup', 'weather found']);
    const [retriever, tool] = workflow.spans;
    assert.deepEqual(retriever.output, [
      { content: 'Paris: sunny, 21 C', metadata: { source: 'meteo', rank: 1 } },
      { content: 'Paris: light wind', metadata: { source: 'wind', rank: 2 } },
    ]);
    assert.deepEqual(
      [tool.name, tool.input, tool.output, tool.tool_call_id, tool.metrics],
      ['get_weather', '{"city":"Paris"}', '{"temp":21}', 'call_123', { duration_ns: 30_000_000 }],
    );
    assert.deepEqual(
      [trace['id'], agent.id, llm.id, workflow.id, retriever.id, tool.id].map((id: string) => /^[0-9a-f-]{36}$/.test(id)),
      [true, true, true, true, true, true],
    );
    // Roll-ups reach the trace (metric_info), and spans search finds the same records.
    assert.deepEqual(trace['metric_info'].num_total_tokens, { status_type: 'roll_up', value: 28, roll_up_method: 'sum' });
    assert.equal((await records(tl, projectId, runId, 'spans')).length, 6);
  });

  await t.test('streaming mode: session by external id, spans as they happen, conclusions, resume by id', async (t) => {
    proxy.flow = 'streaming';
    const { result } = await runFlow<Rec>(t, 'streaming.ts', env, { projectName: PROJECT, logStream: STREAM, externalId: 'ticket-81' });
    const reqs = flowRequests('streaming');
    // The client retries a 404 on an update (its record may still be on the way); one that then succeeds is fine.
    const retried = (r: RecordedRequest) =>
      r.status === 404 && r.method === 'PATCH' && reqs.some((x) => x.method === r.method && x.path === r.path && x.status === 200);
    checkLog(t, 'streaming', reqs, retried);
    const routes = new Set(reqs.map((r) => `${r.method} ${r.route}`));
    for (const want of [
      'POST /projects/{id}/sessions/search',
      'POST /projects/{id}/sessions',
      'POST /projects/{id}/traces',
      'POST /projects/{id}/spans',
      'PATCH /projects/{id}/traces/{id}',
      'PATCH /projects/{id}/spans/{id}',
      'GET /projects/{id}/traces/{id}',
      'GET /projects/{id}/spans/{id}',
    ]) {
      assert.ok(routes.has(want), `the flow calls ${want}`);
    }
    assert.ok(
      reqs.filter((r) => r.route === '/projects/{id}/spans').every((r) => (r.body as Rec)['reliable'] === false),
      'streaming spans are sent with reliable: false',
    );
    assert.equal(result['sessionAgain'], result['sessionId'], 'the second startSession found the session by its external id');
    assert.equal(result['resumedParents'], result['agentId'], 'the resumed logger continues under the agent span');

    const { projectId, runId } = await findRun(tl, PROJECT, STREAM);
    const sessions = await records(tl, projectId, runId, 'sessions', [
      { type: 'text', column_id: 'external_id', operator: 'eq', value: 'ticket-81' },
    ]);
    assert.equal(sessions.length, 1, 'one session for the external id');
    const session = sessions[0]!;
    assert.deepEqual([session['id'], session['name'], session['external_id']], [result['sessionId'], 'support chat', 'ticket-81']);
    assert.deepEqual(
      session['user_metadata'],
      { customerId: 'c-7', channel_name: 'web' },
      'session metadata is sent unconverted, and stored as sent',
    );
    const streamTraces = (await records(tl, projectId, runId, 'traces')).filter((r) => r['session_id'] === result['sessionId']);
    assert.deepEqual(
      streamTraces.map((r) => r['id']),
      [result['traceId']],
    );
    const allSessions = await records(tl, projectId, runId, 'sessions');
    assert.equal(allSessions.length, 3, 'the two of the batch flow and this one: no stand-in session is left over');

    const trace = await getTree(tl, projectId, 'traces', result['traceId']);
    assert.deepEqual(
      [
        trace['name'],
        trace['input'],
        trace['output'],
        trace['status_code'],
        trace['is_complete'],
        trace['has_children'],
        trace['created_at'],
        trace['session_id'],
      ],
      [
        'support-turn',
        'My order is late',
        'Your order shipped yesterday.',
        200,
        true,
        true,
        '2026-05-05T09:00:00.000Z',
        result['sessionId'],
      ],
    );
    assert.deepEqual(trace['tags'], ['streaming']);
    assert.deepEqual(trace['user_metadata'], { turnNo: '1' }, 'trace ingest (Speakeasy) keeps metadata keys as typed');
    assert.deepEqual(trace['metrics'], {}, 'the client sends no duration with a trace conclusion');
    assert.equal(trace['spans'].length, 1);
    const agent = trace['spans'][0];
    assert.deepEqual(
      [agent.id, agent.type, agent.name, agent.agent_type, agent.input, agent.output, agent.parent_id, agent.has_children],
      [result['agentId'], 'agent', 'support-agent', 'react', 'handle complaint', 'order shipped', result['traceId'], true],
    );
    // Siblings may arrive in any order (the client sends them concurrently): compare by id.
    const children = new Map<string, Rec>(agent.spans.map((s: Rec) => [s['id'], s]));
    assert.deepEqual([...children.keys()].sort(), [result['llmId'], result['toolId'], result['retrieverId'], result['lateId']].sort());
    const llm = children.get(result['llmId'])!;
    assert.deepEqual(llm['input'], [{ role: 'user', content: 'My order is late' }]);
    assert.deepEqual(llm['output'], {
      role: 'assistant',
      content: 'Let me check your order.',
      tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'order_status', arguments: '{"order":"A1"}' } }],
    });
    assert.equal(llm['model'], 'claude-x');
    assert.deepEqual(llm['metrics'], { num_input_tokens: 9, num_output_tokens: 6, num_total_tokens: 15, num_reasoning_tokens: 4 });
    assert.deepEqual(
      llm['user_metadata'],
      { prompt_version: 'v2' },
      'the span path (axios) snake_cases metadata keys (promptVersion); stored as sent',
    );
    assert.equal(llm['created_at'], '2026-05-05T09:00:00.010Z');
    const tool = children.get(result['toolId'])!;
    assert.deepEqual(
      [tool['name'], tool['input'], tool['output'], tool['tool_call_id'], tool['metrics']],
      ['order_status', '{"order":"A1"}', 'shipped yesterday', 'call_9', { duration_ns: 7_000_000 }],
    );
    const retriever = children.get(result['retrieverId'])!;
    assert.deepEqual(retriever['output'], [
      { content: 'Refunds after 10 days.', metadata: {} },
      { content: 'Track at /orders.', metadata: {} },
    ]);
    const late = children.get(result['lateId'])!;
    assert.deepEqual([late['name'], late['output'], late['created_at']], ['notify-customer', 'sent', '2026-05-05T09:00:00.060Z']);
    for (const s of [agent, ...children.values()]) {
      assert.equal(s['trace_id'], result['traceId'], `${s['name']}: trace_id`);
      assert.equal(s['session_id'], result['sessionId'], `${s['name']}: session_id`);
      assert.equal(s['is_complete'], true, `${s['name']}: is_complete`);
    }
    const grouped = await getTree(tl, projectId, 'sessions', result['sessionId']);
    assert.deepEqual(
      grouped['traces'].map((x: Rec) => x['id']),
      [result['traceId']],
    );
  });

  await t.test('helpers: projects, log streams, search, count, columns, delete, scorers', async (t) => {
    // More scorers than fit in one page of 100, so getScorers has to follow next_starting_token.
    for (let i = 0; i < 40; i++) assert.equal((await tl.call('POST', '/scorers', { name: `brand-check-${i}` })).status, 200);
    proxy.flow = 'helpers';
    const { result } = await runFlow<Rec>(t, 'helpers.ts', env, {
      projectName: PROJECT,
      logStream: STREAM,
      newProject: 'made-by-helper',
      newStream: 'staging',
      deleteName: 'get_weather',
      missingProjectId: MISSING,
    });
    const reqs = flowRequests('helpers');
    // Three lookups are expected to fail: a project that does not exist (the helper's init asks for
    // its log streams), a search on a column that does not exist, a scorer version that does not exist.
    const expected = helperLookupFailure(MISSING);
    checkLog(t, 'helpers', reqs, expected);
    assert.equal(reqs.filter(expected).length, 4, 'each failing lookup was sent (the missing project twice)');
    const { projectId, runId } = await findRun(tl, PROJECT, STREAM);

    assert.deepEqual(result['projects'], [PROJECT]);
    const all = reqs.find((r) => r.route === '/projects/all')!;
    assert.deepEqual(all.query, { project_type: 'gen_ai' });
    const made = (await tl.call('GET', '/projects?project_name=made-by-helper')).body;
    assert.equal(made.length, 1);
    assert.deepEqual(result['created'], { id: made[0].id, name: 'made-by-helper' });
    assert.deepEqual(result['byName'], { id: projectId, name: PROJECT });
    assert.equal(result['byId'].id, projectId);
    assert.match(result['missingProjectError'], /404.*not found/, 'the error detail reaches the caller');

    const streams = (await tl.call('GET', `/projects/${projectId}/log_streams`)).body as Rec[];
    assert.deepEqual(result['newStream'], { id: streams.find((s) => s['name'] === 'staging')!['id'], name: 'staging', projectId });
    assert.deepEqual(
      result['streams'].map((s: Rec) => s['name']),
      ['production', 'staging'],
    );
    assert.equal(result['logStreamId'], runId);
    assert.deepEqual(result['oneStream'], { id: runId, name: STREAM });
    const experiments = (await tl.call('GET', `/projects/${projectId}/experiments`)).body as Rec[];
    assert.deepEqual(
      experiments.map((e) => [e['id'], e['name']]),
      [[result['experiment'].id, 'baseline']],
    );
    assert.deepEqual(result['experiments'], ['baseline']);
    assert.equal(result['traceCount'], 3, 'two batch traces and the streaming one');

    const search = reqs.find((r) => r.route === '/projects/{id}/spans/search')!;
    assert.deepEqual(search.body, {
      project_id: projectId,
      log_stream_id: runId,
      filters: [{ column_id: 'type', operator: 'eq', value: 'llm', type: 'text' }],
      sort: { column_id: 'created_at', ascending: false },
      limit: 10,
    });
    // llm spans of both flows, newest first: streaming (2026-05-05), then the batch ones.
    assert.deepEqual(
      result['llmSpans'].map((r: Rec) => r['name']),
      ['reason', 'single-llm', 'chat-completion'],
    );
    assert.deepEqual(result['llmSpans'][2].metrics, {
      durationNs: 250_000_000,
      numInputTokens: 21,
      numOutputTokens: 7,
      numTotalTokens: 28,
      timeToFirstTokenNs: 80_000_000,
      numReasoningTokens: 3,
      numCachedInputTokens: 5,
      // computed where the client logged none: gpt-4o-mini, 16 prompt tokens at 0.15, 5 cached at
      // 0.075 and 7 completion tokens at 0.60 USD per 1M
      cost: 0.000006975,
    });
    assert.deepEqual(result['llmSpansPaging'], { limit: 10, startingToken: 0, nextStartingToken: null });
    assert.deepEqual(result['firstPage'], { names: ['planner', 'chat-completion'], next: 2 });
    assert.deepEqual(result['secondPage'], { names: ['lookup', 'weather-search'], next: 4 });
    assert.deepEqual(
      result['traces'].map((r: Rec) => r['name']),
      ['weather-question'],
    );
    assert.equal(result['sessionCount'], 3);
    assert.match(result['badColumnError'], /422.*unknown column "no_such_column"/, 'a 422 detail reaches the caller as its first msg');
    const settings = (await tl.call('GET', `/projects/${projectId}/runs/${runId}/scorer-settings`)).body;
    assert.deepEqual(
      settings.scorers.map((x: Rec) => x['name']),
      ['correctness'],
      'enableMetrics stored the run scorer settings',
    );

    const spansBefore = 6 + 5; // batch and streaming
    assert.equal(result['countAll'], spansBefore);
    assert.equal(result['countToDelete'], 1);
    const columnIds = result['columns'].map((c: Rec) => c['id']);
    for (const id of [
      'input',
      'output',
      'name',
      'created_at',
      'tags',
      'type',
      'trace_id',
      'parent_id',
      'model',
      'tool_call_id',
      'metrics/num_input_tokens',
      'metrics/num_reasoning_tokens',
      'metrics/duration_ns',
      'metrics/correctness',
    ]) {
      assert.ok(columnIds.includes(id), `available columns include ${id}`);
    }
    assert.deepEqual(
      result['columns'].find((c: Rec) => c['id'] === 'metrics/num_input_tokens'),
      { id: 'metrics/num_input_tokens', category: 'metric', dataType: 'floating_point', filterable: true },
    );
    assert.deepEqual(result['deleted'], { message: 'Deleted 1 record' });
    assert.equal(result['countAfter'], spansBefore - 1);
    const left = await records(tl, projectId, runId, 'spans', [{ type: 'text', column_id: 'name', operator: 'eq', value: 'get_weather' }]);
    assert.deepEqual(left, [], 'the tool span is gone');
    const workflow = (
      await records(tl, projectId, runId, 'spans', [{ type: 'text', column_id: 'name', operator: 'eq', value: 'lookup' }])
    )[0]!;
    assert.equal(workflow['has_children'], true, 'its parent still has the retriever');

    const listCalls = reqs.filter((r) => r.route === '/scorers/list');
    const everyScorer = listCalls.filter((r) => JSON.stringify(r.body) === '{"filters":[]}');
    const catalog = await tl.call('POST', '/v2/scorers/list', {});
    const total = 73 + 40;
    assert.equal(result['scorerCount'], total);
    assert.equal(result['scorerIdsUnique'], total, 'every page was fetched once');
    assert.ok(catalog.body.scorers.length === 100 && catalog.body.next_starting_token === 100, 'the catalog has more than one page');
    assert.deepEqual(
      everyScorer.map((r) => r.query),
      [
        { starting_token: '0', limit: '100' },
        { starting_token: '100', limit: '100' },
      ],
    );
    assert.equal((everyScorer[1]!.response as Rec)['next_starting_token'], null, 'the last page ends the loop');
    assert.equal(result['presetCount'], 73);
    assert.deepEqual(result['byNames'], [
      { name: 'completeness', scorerType: 'preset' },
      { name: 'correctness', scorerType: 'preset' },
    ]);
    assert.ok(
      listCalls.some(
        (r) =>
          JSON.stringify(r.body) ===
          JSON.stringify({ filters: [{ name: 'name', value: ['correctness', 'completeness'], operator: 'one_of' }] }),
      ),
    );
    const correctness = catalog.body.scorers.find((x: Rec) => x['name'] === 'correctness');
    assert.deepEqual(result['scorerVersion'], { id: correctness.default_version_id, version: 1, scorerId: correctness.id });
    assert.match(result['missingVersionError'], /404.*has no version 99/);
  });

  await t.test('GALILEO_API_URL with a /v2 path: every route answers under it', async (t) => {
    proxy.flow = 'prefixed';
    const { result } = await runFlow<{ left: number }>(t, 'batch.ts', {
      ...env,
      GALILEO_API_URL: `${proxy.url}/v2`,
      GALILEO_PROJECT: 'prefixed-project',
    });
    const reqs = flowRequests('prefixed');
    checkLog(t, 'prefixed', reqs);
    assert.equal(result.left, 0);
    assert.ok(reqs.length >= 8 && reqs.every((r) => r.path.startsWith('/v2/')), 'every request went to /v2/...');
    const { projectId, runId } = await findRun(tl, 'prefixed-project', STREAM);
    assert.equal((await records(tl, projectId, runId, 'traces')).length, 2);
    assert.equal((await records(tl, projectId, runId, 'spans')).length, 6);
  });
});
