// Guarantees: the older official clients work against `tracelake serve` unchanged: galileo 1.32.0
// (alias galileo-1-32) and 1.9.0 (alias galileo-1-9), the oldest version npm still installs. Both
// ignore GALILEO_API_URL and take GALILEO_CONSOLE_URL as their API base, unless it names localhost
// (then they always call http://localhost:8088): the recording proxy listens on another loopback
// address at a free port (startLegacyProxy; where that address is unavailable, on localhost:8088,
// waiting for the port). 1.32 sends no ids (the server mints them), camelCase toolCallId, and looks
// sessions up by external_id with an `id` filter; it has no streaming mode. 1.9 sends the field names
// of its time (created_at_ns, userMetadata, token counts beside the metrics) and has only the batch
// logger, sessions and the project and log stream helpers.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import {
  describeFailures,
  failures,
  runFlow,
  startLegacyProxy,
  startTracelake,
  summarize,
  type RecordedRequest,
} from './support/harness.js';
import { assertTraceMatches, findRun, getTree, helperLookupFailure, records, tracesPosted } from './support/expect.js';

type Rec = Record<string, any>;
const PROJECT = 'legacy-app';
const STREAM = 'default-stream';
const MISSING = '00000000-0000-4000-8000-000000000000';

function checkLog(
  t: TestContext,
  name: string,
  reqs: RecordedRequest[],
  expected: (r: RecordedRequest) => boolean = () => false,
  sdk = 'galileo-js/1.32.0',
): void {
  t.diagnostic(`requests of ${name}:\n  ${summarize(reqs).join('\n  ')}`);
  const bad = failures(reqs).filter((r) => !expected(r));
  assert.deepEqual(bad, [], `requests that failed:\n${describeFailures(bad)}`);
  for (const r of reqs) {
    if (sdk) assert.equal(r.sdk, sdk);
    if (r.route !== '/healthcheck' && !r.route.startsWith('/login')) assert.equal(r.auth, 'Bearer', `${r.method} ${r.path}`);
  }
}

test('galileo 1.32.0 against tracelake serve', async (t) => {
  const tl = await startTracelake(t);
  const { proxy, consoleUrl } = await startLegacyProxy(t, tl.url);
  const env = {
    GALILEO_PKG: 'galileo-1-32',
    GALILEO_CONSOLE_URL: consoleUrl,
    GALILEO_API_KEY: tl.key,
    GALILEO_PROJECT: PROJECT,
    GALILEO_LOG_STREAM: STREAM,
  };
  const flowRequests = (flow: string) => proxy.requests.filter((r) => r.flow === flow);
  let sessionId = '';

  await t.test('batch mode with a session started by external id', async (t) => {
    proxy.flow = 'batch-1';
    const { result } = await runFlow<{ left: number; sessionId: string }>(t, 'batch.ts', env, { sessionExternalId: 'user-7' });
    const reqs = flowRequests('batch-1');
    checkLog(t, 'batch-1', reqs);
    assert.equal(result.left, 0, 'flush succeeded');
    sessionId = result.sessionId;
    const search = reqs.find((r) => r.route === '/projects/{id}/sessions/search')!;
    assert.deepEqual(
      (search.body as Rec)['filters'],
      [{ column_id: 'external_id', operator: 'eq', value: 'user-7', type: 'id' }],
      'the 1.32 lookup uses an id filter on a text column',
    );
    assert.deepEqual((search.response as Rec)['records'], [], 'nothing found yet');
    assert.ok(
      reqs.some((r) => r.method === 'POST' && r.route === '/projects/{id}/sessions'),
      'so it creates the session',
    );

    const { projectId, runId } = await findRun(tl, PROJECT, STREAM);
    const [posted] = tracesPosted(reqs);
    assert.ok(posted);
    assert.equal(posted.log_stream_id, runId);
    assert.equal(posted.session_id, sessionId);
    const walk = (n: Rec): Rec[] => [n, ...((n['spans'] ?? []) as Rec[]).flatMap(walk)];
    assert.ok(
      (posted.traces as Rec[]).flatMap(walk).every((n) => n['id'] === undefined),
      '1.32 sends no ids',
    );

    const stored = await records(tl, projectId, runId, 'traces');
    assert.equal(stored.length, 2);
    for (const sent of posted.traces as Rec[]) {
      const match = stored.filter((r) => r['name'] === sent['name']);
      assert.equal(match.length, 1, `one trace named ${sent['name']}`);
      const tree = await getTree(tl, projectId, 'traces', match[0]!['id']);
      assertTraceMatches(tree, sent, { projectId, runId, sessionId, clientIds: false });
    }
    const trace = await getTree(tl, projectId, 'traces', stored.find((r) => r['name'] === 'weather-question')!['id']);
    const [agent] = trace['spans'];
    const [llm, workflow] = agent.spans;
    assert.deepEqual(llm.metrics, {
      duration_ns: 250_000_000,
      num_input_tokens: 21,
      num_output_tokens: 7,
      num_total_tokens: 28,
      time_to_first_token_ns: 80_000_000,
      // computed where the client logged none: gpt-4o-mini, 21 prompt tokens at 0.15 and 7 completion
      // tokens at 0.60 USD per 1M
      cost: 0.00000735,
    });
    const tool = workflow.spans[1];
    assert.equal(tool.tool_call_id, 'call_123', 'camelCase toolCallId is read');
    const sessions = await records(tl, projectId, runId, 'sessions');
    assert.deepEqual(
      sessions.map((s) => [s['id'], s['name'], s['external_id']]),
      [[sessionId, 'batch session', 'user-7']],
    );
  });

  await t.test('a second process finds the session by its external id instead of creating another', async (t) => {
    proxy.flow = 'batch-2';
    const { result } = await runFlow<{ left: number; sessionId: string }>(t, 'batch.ts', env, { sessionExternalId: 'user-7' });
    const reqs = flowRequests('batch-2');
    checkLog(t, 'batch-2', reqs);
    assert.equal(result.left, 0);
    assert.equal(result.sessionId, sessionId);
    assert.ok(!reqs.some((r) => r.method === 'POST' && r.route === '/projects/{id}/sessions'), 'no second session is created');
    const { projectId, runId } = await findRun(tl, PROJECT, STREAM);
    assert.equal((await records(tl, projectId, runId, 'sessions')).length, 1);
    const grouped = await getTree(tl, projectId, 'sessions', sessionId);
    assert.equal(grouped['traces'].length, 4, 'both processes logged into the session');
    assert.ok(grouped['traces'].every((tr: Rec) => tr['session_id'] === sessionId));
  });

  await t.test('helpers: projects, log streams, search, count, columns, delete, scorers', async (t) => {
    for (let i = 0; i < 40; i++) assert.equal((await tl.call('POST', '/scorers', { name: `legacy-check-${i}` })).status, 200);
    proxy.flow = 'helpers';
    const { result } = await runFlow<Rec>(t, 'helpers.ts', env, {
      projectName: PROJECT,
      logStream: STREAM,
      newProject: 'made-by-1-32',
      newStream: 'staging',
      deleteName: 'get_weather',
      missingProjectId: MISSING,
    });
    const reqs = flowRequests('helpers');
    const expected = helperLookupFailure(MISSING);
    checkLog(t, 'helpers', reqs, expected);
    assert.equal(reqs.filter(expected).length, 4);
    const { projectId, runId } = await findRun(tl, PROJECT, STREAM);
    assert.deepEqual(result['projects'], [PROJECT]);
    assert.equal(result['created'].name, 'made-by-1-32');
    assert.deepEqual(result['byName'], { id: projectId, name: PROJECT });
    assert.equal(result['byId'].id, projectId);
    assert.match(result['missingProjectError'], /404.*not found/);
    assert.deepEqual(
      result['streams'].map((s: Rec) => s['name']),
      [STREAM, 'staging'],
    );
    assert.equal(result['logStreamId'], runId);
    assert.deepEqual(result['oneStream'], { id: runId, name: STREAM });
    const experiments = (await tl.call('GET', `/projects/${projectId}/experiments`)).body as Rec[];
    assert.deepEqual(
      experiments.map((e) => [e['id'], e['name']]),
      [[result['experiment'].id, 'baseline']],
    );
    assert.deepEqual(result['experiments'], ['baseline']);
    assert.equal(result['traceCount'], 4);
    assert.deepEqual(
      result['llmSpans'].map((r: Rec) => r['name']),
      ['single-llm', 'single-llm', 'chat-completion', 'chat-completion'],
    );
    assert.deepEqual(
      result['traces'].map((r: Rec) => r['name']),
      ['weather-question', 'weather-question'],
    );
    assert.equal(result['sessionCount'], 1);
    assert.match(result['badColumnError'], /422.*unknown column "no_such_column"/);
    const settings = (await tl.call('GET', `/projects/${projectId}/runs/${runId}/scorer-settings`)).body;
    assert.deepEqual(
      settings.scorers.map((x: Rec) => x['name']),
      ['correctness'],
    );
    assert.deepEqual([result['scorerVersion'].version, typeof result['scorerVersion'].id], [1, 'string']);
    assert.match(result['missingVersionError'], /404.*has no version 99/);
    assert.equal(result['countAll'], 12);
    assert.equal(result['countToDelete'], 2);
    assert.deepEqual(result['deleted'], { message: 'Deleted 2 records' });
    assert.equal(result['countAfter'], 10);
    assert.ok(result['columns'].some((c: Rec) => c['id'] === 'metrics/num_total_tokens'));
    assert.ok(
      result['columns'].some((c: Rec) => c['id'] === 'metrics/correctness'),
      'the enabled scorer has a column',
    );
    assert.equal(result['scorerCount'], 73 + 40);
    assert.equal(result['scorerIdsUnique'], 73 + 40);
    assert.equal(result['presetCount'], 73);
    assert.deepEqual(
      result['byNames'].map((s: Rec) => s['name']),
      ['completeness', 'correctness'],
    );
    assert.deepEqual(
      reqs.filter((r) => r.route === '/scorers/list' && JSON.stringify(r.body) === '{"filters":[]}').map((r) => r.query['starting_token']),
      ['0', '100'],
    );
  });
});

/** A node as galileo 1.9 sends it, in today's field names (what tracelake is expected to store). */
function modernize(n: Rec): Rec {
  const { created_at_ns, userMetadata, duration_ns, input_tokens, output_tokens, total_tokens, time_to_first_token_ns, spans, ...rest } = n;
  const metrics: Rec = { duration_ns };
  if (input_tokens !== undefined)
    Object.assign(metrics, { num_input_tokens: input_tokens, num_output_tokens: output_tokens, num_total_tokens: total_tokens });
  if (time_to_first_token_ns !== undefined) metrics['time_to_first_token_ns'] = time_to_first_token_ns;
  return {
    ...rest,
    created_at: created_at_ns,
    user_metadata: userMetadata,
    metrics,
    ...(spans ? { spans: (spans as Rec[]).map(modernize) } : {}),
  };
}

test('galileo 1.9.0 against tracelake serve', async (t) => {
  const tl = await startTracelake(t);
  const { proxy, consoleUrl } = await startLegacyProxy(t, tl.url);
  const env = {
    GALILEO_PKG: 'galileo-1-9',
    GALILEO_CONSOLE_URL: consoleUrl,
    GALILEO_API_KEY: tl.key,
    GALILEO_PROJECT: 'oldest-app',
    GALILEO_LOG_STREAM: STREAM,
  };
  const flowRequests = (flow: string) => proxy.requests.filter((r) => r.flow === flow);

  await t.test('batch mode with a session: the old field names are read', async (t) => {
    proxy.flow = 'batch';
    const { result } = await runFlow<{ left: number }>(t, 'batch.ts', env, { sessionExternalId: 'user-9' });
    const reqs = flowRequests('batch');
    checkLog(t, 'batch (1.9)', reqs, () => false, '');
    assert.equal(result.left, 0, 'flush succeeded');
    const { projectId, runId } = await findRun(tl, 'oldest-app', STREAM);
    const sessions = await records(tl, projectId, runId, 'sessions');
    assert.deepEqual(
      sessions.map((x) => [x['name'], x['external_id']]),
      [['batch session', 'user-9']],
    );
    const [posted] = tracesPosted(reqs);
    assert.ok(posted);
    const first = (posted.traces as Rec[])[0]!;
    assert.deepEqual(
      [first['created_at'], typeof first['created_at_ns'], typeof first['userMetadata'], first['tags']],
      [undefined, 'string', 'object', undefined],
      'the 1.9 wire format',
    );
    const stored = await records(tl, projectId, runId, 'traces');
    assert.equal(stored.length, 2);
    for (const sent of posted.traces as Rec[]) {
      const tree = await getTree(tl, projectId, 'traces', stored.find((r) => r['name'] === sent['name'])!['id']);
      assertTraceMatches(tree, modernize(sent), { projectId, runId, sessionId: sessions[0]!['id'], clientIds: false });
    }
    const trace = await getTree(tl, projectId, 'traces', stored.find((r) => r['name'] === 'weather-question')!['id']);
    assert.deepEqual(
      [trace['created_at'], trace['user_metadata'], trace['metrics']],
      ['2026-05-04T10:00:00.000Z', { userId: 'u-42', plan_tier: 'pro' }, { duration_ns: 900_000_000 }],
    );
    const llm = trace['spans'][0].spans[0];
    assert.deepEqual(
      [llm['name'], llm['created_at'], llm['user_metadata']],
      ['chat-completion', '2026-05-04T10:00:00.020Z', { promptId: 'p-1' }],
    );
    assert.deepEqual(llm['metrics'], {
      duration_ns: 250_000_000,
      num_input_tokens: 21,
      num_output_tokens: 7,
      num_total_tokens: 28,
      time_to_first_token_ns: 80_000_000,
      // computed where the client logged none: gpt-4o-mini, 21 prompt tokens at 0.15 and 7 completion
      // tokens at 0.60 USD per 1M
      cost: 0.00000735,
    });
  });

  await t.test('project and log stream helpers', async (t) => {
    proxy.flow = 'projects';
    const { result } = await runFlow<Rec>(t, 'projects-1-9.ts', env, {
      projectName: 'oldest-app',
      logStream: STREAM,
      newProject: 'made-by-1-9',
      newStream: 'staging',
    });
    checkLog(t, 'projects (1.9)', flowRequests('projects'), () => false, '');
    const { projectId, runId } = await findRun(tl, 'oldest-app', STREAM);
    assert.deepEqual(result['projects'], ['oldest-app']);
    assert.equal(result['created'].name, 'made-by-1-9');
    assert.equal((await tl.call('GET', '/projects?project_name=made-by-1-9')).body.length, 1);
    assert.deepEqual(result['byName'], { id: projectId, name: 'oldest-app' });
    assert.deepEqual(result['byId'], { id: projectId, name: 'oldest-app' });
    assert.deepEqual(result['streams'], [STREAM, 'staging']);
    assert.deepEqual(result['stream'], { id: runId, name: STREAM });
  });
});
