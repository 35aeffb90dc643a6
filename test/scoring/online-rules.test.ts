// Guarantees of online scoring's choices: more records owed than the queue holds are still each scored
// exactly once (the run is scanned instead); a sample rate scores a stable share of the records, the
// same ones after a reopen; scoreable node types set in the run's settings, and its node filters
// (name, metadata), decide which records a scorer scores.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TraceStore } from '../../src/engine/trace-store.js';
import { draw } from '../../src/scoring/plans.js';
import { openStore, tempDir } from '../support/helpers.js';

type Rec = Record<string, any>;

function trace(tag: string, metadata: Record<string, string> = {}): Rec {
  const llm = (name: string, output: string) => ({
    type: 'llm',
    name,
    input: [{ role: 'user', content: `question ${tag}` }],
    output: { role: 'assistant', content: output },
    dataset_output: `the answer is ${tag}`,
    user_metadata: metadata,
  });
  return {
    type: 'trace',
    name: `trace-${tag}`,
    input: `question ${tag}`,
    output: 'x',
    spans: [
      llm(`first-${tag}`, `the answer is ${tag}`),
      llm(`second-${tag}`, `maybe ${tag}`),
      { type: 'tool', name: `tool-${tag}`, input: 'a', output: 'b', user_metadata: metadata },
    ],
  };
}

async function spans(store: TraceStore, projectId: string, runId: string): Promise<Rec[]> {
  return (await store.search('span', projectId, { log_stream_id: runId, limit: 1000 })).records as Rec[];
}

async function log(store: TraceStore, projectId: string, runId: string, traces: Rec[]): Promise<void> {
  await store.logTraces(projectId, { log_stream_id: runId, traces: traces as never });
}

test('more owed records than the queue holds: the run is scanned, every one scored exactly once', async (t) => {
  const { store, projectId, logStreamId } = await openStore(t, { scoring: { queueLimit: 8, batchSize: 16, scanWindow: 64 } });
  store.catalog.setRunScorerSettings(projectId, logStreamId, { scorers: [{ name: 'bleu' }] });
  // 160 llm spans owed, in requests of 40: most do not fit in the queue.
  for (let b = 0; b < 4; b++)
    await log(
      store,
      projectId,
      logStreamId,
      Array.from({ length: 20 }, (_, i) => trace(`q${b}-${i}`)),
    );
  await store.scorers.idle();
  const all = await spans(store, projectId, logStreamId);
  assert.equal(all.length, 240, 'one live version per span');
  const llm = all.filter((s) => s.type === 'llm');
  assert.equal(llm.length, 160);
  for (const s of llm) assert.equal(s.metric_info.bleu.status_type, 'success', s.name);
  for (const s of all.filter((x) => x.type === 'tool')) assert.equal(s.metrics.bleu, undefined);
  const { counts, queued, scans } = store.scorers.online;
  assert.equal(counts['success'], 160, 'each owed span scored once');
  assert.equal(counts['already'] ?? 0, 0, 'no span was scored twice');
  assert.deepEqual({ queued, scans }, { queued: 0, scans: 0 });
});

test('sample_rate: a stable share of the records is scored, the same ones after a reopen; the others are not pending', async (t) => {
  const dir = tempDir(t);
  const { store, projectId, logStreamId } = await openStore(t, {}, dir);
  const bleu = store.catalog.setRunScorerSettings(projectId, logStreamId, { scorers: [{ name: 'bleu', sample_rate: 0.3 }] });
  const scorerId = (bleu.scorers[0] as Rec)['id'] as string;
  await log(
    store,
    projectId,
    logStreamId,
    Array.from({ length: 100 }, (_, i) => trace(`s${i}`)),
  );
  await store.scorers.idle();
  const llm = (await spans(store, projectId, logStreamId)).filter((s) => s.type === 'llm');
  assert.equal(llm.length, 200);
  const chosen = llm.filter((s) => draw(scorerId, s.id) < 0.3).map((s) => s.id);
  assert.ok(chosen.length > 35 && chosen.length < 85, `about 30% drawn: ${chosen.length}`);
  const scored = llm.filter((s) => s.metrics.bleu !== undefined).map((s) => s.id);
  assert.deepEqual(scored.sort(), chosen.sort(), 'exactly the drawn records are scored');
  for (const s of llm.filter((x) => x.metrics.bleu === undefined)) assert.equal(s.metric_info?.bleu, undefined, 'not drawn: not pending');
  await store.close();
  const { TraceStore } = await import('../../src/engine/trace-store.js');
  const again = await TraceStore.open(dir);
  t.after(() => again.close());
  await again.scorers.idle();
  assert.equal(again.scorers.online.counts['success'] ?? 0, 0, 'the catch-up after a reopen finds nothing owed');
  const after = (await spans(again, projectId, logStreamId)).filter((s) => s.metrics.bleu !== undefined).map((s) => s.id);
  assert.deepEqual(after.sort(), chosen.sort());
});

test("the run's settings decide what is scored: scoreable node types, node name and metadata filters", async (t) => {
  const { store, projectId, logStreamId } = await openStore(t);
  const seen = store.scorers.define({ name: 'seen', scoreableNodeTypes: ['llm'], score: () => 1 });
  const named = store.scorers.define({ name: 'named', scoreableNodeTypes: ['llm'], score: () => 1 });
  const team = store.scorers.define({ name: 'team_a', scoreableNodeTypes: ['llm', 'tool'], score: () => 1 });
  store.catalog.setRunScorerSettings(projectId, logStreamId, {
    scorers: [
      // The run's node types replace the scorer's own (llm).
      { id: seen.id, scoreable_node_types: ['tool', 'trace'] },
      { id: named.id, filters: [{ name: 'node_name', operator: 'contains', value: 'FIRST-', case_sensitive: false }] },
      { id: team.id, filters: [{ name: 'metadata', operator: 'eq', key: 'team', value: 'a' }] },
    ],
  } as never);
  await log(store, projectId, logStreamId, [trace('x', { team: 'a' }), trace('y', { team: 'b' }), trace('z')]);
  await store.scorers.idle();
  const all = await spans(store, projectId, logStreamId);
  const has = (metric: string) =>
    all
      .filter((s) => s.metrics[metric] !== undefined)
      .map((s) => s.name)
      .sort();
  assert.deepEqual(has('seen'), ['tool-x', 'tool-y', 'tool-z']);
  const traces = (await store.search('trace', projectId, { log_stream_id: logStreamId, limit: 10 })).records as Rec[];
  assert.equal(traces.length, 3);
  for (const tr of traces) {
    assert.equal(tr.metric_info.seen.status_type, 'success', `${tr.name} scored at trace level`);
    assert.equal(tr.metric_info.seen.value, 1);
  }
  assert.deepEqual(has('named'), ['first-x', 'first-y', 'first-z']);
  assert.deepEqual(has('team_a'), ['first-x', 'second-x', 'tool-x']);
  for (const s of all.filter((x) => x.metrics.team_a === undefined)) assert.equal(s.metric_info?.team_a, undefined, `${s.name}: not owed`);
});
