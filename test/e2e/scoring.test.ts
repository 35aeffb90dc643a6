// Guarantees: through the official client (galileo 1.33.1, unchanged), scorers enabled on a log stream
// with enableMetrics (the bleu preset and a declarative scorer registered over HTTP) are computed by
// the server for the llm spans the logger sends with a reference answer; getSpans reads them back,
// sorted and filtered by bleu; traces show the roll-ups; recomputeMetrics over a filter starts a job
// that scores exactly the matching span. No request the client sends fails.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { failures, describeFailures, runFlow, startProxy, startTracelake } from './support/harness.js';
import { waitFor } from '../support/wait-for.js';

type Rec = Record<string, any>;
const PROJECT = 'scored-project';
const STREAM = 'scored-stream';

test('scorers through the official client: enable, log, read metrics, recompute over a filter', async (t) => {
  const tl = await startTracelake(t);
  const proxy = await startProxy(t, tl.url);
  const project = await tl.call('POST', '/projects', { name: PROJECT });
  assert.equal(project.status, 200, JSON.stringify(project.body));
  const projectId = project.body.id as string;
  const stream = await tl.call('POST', `/projects/${projectId}/log_streams`, { name: STREAM });
  const runId = stream.body.id as string;
  const registered = await tl.call('POST', '/scorers', {
    name: 'mentions_weather',
    scorer_type: 'code',
    version: { rule: { kind: 'regex', field: 'output', pattern: '(?i)\\b(sun|rain|snow)' } },
  });
  assert.equal(registered.status, 200, JSON.stringify(registered.body));

  const env = {
    GALILEO_PKG: 'galileo',
    GALILEO_API_URL: proxy.url,
    GALILEO_API_KEY: tl.key,
    GALILEO_PROJECT: PROJECT,
    GALILEO_LOG_STREAM: STREAM,
  };
  const { result } = await runFlow<Rec>(t, 'scoring.ts', env, { registered: 'mentions_weather', projectName: PROJECT, logStream: STREAM });
  const bad = failures(proxy.requests);
  assert.deepEqual(bad, [], describeFailures(bad));
  assert.ok(
    proxy.requests.some((r) => r.method === 'POST' && /recompute_metrics$/.test(r.path)),
    'the client posted recompute_metrics',
  );
  assert.equal(result['enabled'], 0, 'no local metrics: both run on the server');

  const spans = result['spans'] as Rec[];
  const byName = new Map(spans.map((s) => [s['name'], s]));
  assert.equal(byName.get('answer-0')!['metrics']['bleu'], 1, 'identical answer and reference');
  assert.ok(byName.get('answer-1')!['metrics']['bleu'] > 0 && byName.get('answer-1')!['metrics']['bleu'] < 1);
  assert.deepEqual(result['sortedNames'], ['answer-0', 'answer-1'], 'filtered and sorted by bleu');

  // The recompute the flow started (rouge on exactly answer-1) is finished before reading, so the
  // reads below see no record mid-rewrite.
  const job = result['job'] as Rec;
  assert.equal(job['job_name'], 'recompute_metrics');
  const done = await waitFor(async () => {
    const j = await tl.call('GET', `/projects/${projectId}/jobs/${job['id']}`);
    assert.equal(j.status, 200);
    return j.body.status === 'completed' || j.body.status === 'failed' ? j.body : null;
  });
  assert.equal(done.status, 'completed', JSON.stringify(done));
  assert.deepEqual(done.counts, { success: 1 });

  // tracelake's own API: statuses and the traces' roll-ups.
  const own = await tl.call('POST', `/projects/${projectId}/spans/search`, { log_stream_id: runId, limit: 50 });
  const ownByName = new Map((own.body.records as Rec[]).map((r) => [r['name'], r]));
  const names = JSON.stringify((own.body.records as Rec[]).map((r) => [r['name'], r['id'], r['updated_at']]));
  for (const n of ['answer-0', 'answer-1', 'answer-2']) assert.ok(ownByName.has(n), `span ${n} in the search: ${names}`);
  // (the client turns metric names into camelCase: the registered one is read here, by its name)
  assert.deepEqual(
    ['answer-0', 'answer-1', 'answer-2'].map((n) => ownByName.get(n)!['metrics']['mentions_weather']),
    [1, 1, 0],
    `the registered regex scorer ran: ${JSON.stringify(own.body.records.map((r: Rec) => r['metric_info']))}`,
  );
  const s0 = (own.body.records as Rec[]).find((r) => r['name'] === 'answer-0')!;
  assert.equal(s0['metric_info']['bleu']['status_type'], 'success');
  assert.equal(s0['metric_info']['bleu']['scorer_version'], 1);
  const traces = await tl.call('POST', `/projects/${projectId}/traces/search`, { log_stream_id: runId, limit: 50 });
  const t0 = (traces.body.records as Rec[]).find((r) => r['name'] === 'answer-0')!;
  assert.deepEqual([t0['metric_info']['bleu']['status_type'], t0['metric_info']['bleu']['value']], ['roll_up', 1]);

  // recompute: rouge (not enabled) on exactly the span named answer-1.
  const after = await tl.call('POST', `/projects/${projectId}/spans/search`, { log_stream_id: runId, limit: 50 });
  const withRouge = (after.body.records as Rec[]).filter((r) => r['metrics']['rouge'] !== undefined).map((r) => r['name']);
  assert.deepEqual(withRouge, ['answer-1']);
  assert.equal(after.body.records.length, 3, 'one live version per span');
});
