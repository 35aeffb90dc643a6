// Guarantees: scorers enabled in a run score the records logged into it in the background (bleu
// against dataset_output, a library scorer, a declarative rule), results are ordinary metrics (sorted,
// filtered, rolled up to traces) with their statuses in metric_info, values a client logged are kept,
// records without what a scorer needs say why; a recompute scores exactly the records its filter
// selects; records a closed store left unscored are scored once after a reopen, with no second live
// version.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TraceStore } from '../../src/engine/trace-store.js';
import { openStore, tempDir } from '../support/helpers.js';

type Rec = Record<string, any>;

/** A trace of two llm spans (answers `a` and `b` to reference `ref`) and one tool span. */
function trace(tag: string, a: string, b: string, ref: string | null, extra: Rec = {}): Rec {
  const llm = (name: string, output: string) => ({
    type: 'llm',
    name,
    input: [{ role: 'user', content: `question ${tag}` }],
    output: { role: 'assistant', content: output },
    ...(ref !== null ? { dataset_output: ref } : {}),
    ...extra,
  });
  return {
    type: 'trace',
    name: `trace-${tag}`,
    input: `question ${tag}`,
    output: b,
    spans: [llm(`first-${tag}`, a), llm(`second-${tag}`, b), { type: 'tool', name: `tool-${tag}`, input: '1', output: '2' }],
  };
}

async function spans(store: TraceStore, projectId: string, runId: string, body: Rec = {}): Promise<Rec[]> {
  const page = await store.search('span', projectId, { log_stream_id: runId, limit: 1000, ...body });
  return page.records as Rec[];
}

test('online: bleu and a library scorer score llm spans as they are logged; statuses, sort, filter, roll-ups', async (t) => {
  const { store, projectId, logStreamId } = await openStore(t);
  const words = store.scorers.define({
    name: 'short_answer',
    scoreableNodeTypes: ['llm'],
    score: (r) => {
      const text = typeof r.output === 'object' && r.output !== null ? String((r.output as Rec)['content']) : String(r.output);
      const n = text.split(/\s+/).length;
      return { value: n <= 3, explanation: `${n} words` };
    },
  });
  assert.equal(words.scorer_type, 'code');
  assert.ok(store.catalog.getScorer(words.id), 'the library scorer is listed in the catalog');
  store.catalog.setRunScorerSettings(projectId, logStreamId, { scorers: [{ name: 'bleu' }, { name: 'short_answer' }] });
  await store.logTraces(projectId, {
    log_stream_id: logStreamId,
    traces: [
      trace('a', 'The cat sat on the mat.', 'Paris', 'The cat sat on the mat.'),
      trace('b', 'It is sunny in Paris today', 'no idea at all here', 'It is sunny in Paris.'),
      trace('c', 'anything', 'else', null),
    ] as never,
  });
  await store.scorers.idle();
  const all = await spans(store, projectId, logStreamId);
  const byName = new Map(all.map((s) => [s.name, s]));
  const first = byName.get('first-a')!;
  assert.equal(first.metrics.bleu, 1, 'identical answer and reference');
  assert.equal(first.metric_info.bleu.status_type, 'success');
  assert.equal(first.metric_info.bleu.value, 1);
  assert.equal(first.metric_info.short_answer.status_type, 'success');
  assert.equal(first.metrics.short_answer, 0);
  assert.equal(first.metric_info.short_answer.explanation, '6 words');
  assert.equal(byName.get('second-a')!.metrics.short_answer, 1);
  assert.ok(byName.get('second-b')!.metrics.bleu < 0.2);
  for (const n of ['tool-a', 'tool-b', 'tool-c']) assert.equal(byName.get(n)!.metrics.bleu, undefined, 'tools are not llm spans');
  const noRef = byName.get('first-c')!;
  assert.equal(noRef.metrics.bleu, undefined);
  assert.equal(noRef.metric_info.bleu.status_type, 'not_applicable');
  assert.match(noRef.metric_info.bleu.message, /dataset_output/);
  assert.equal(noRef.metrics.short_answer, 1, 'the library scorer needs no reference');

  const sorted = await spans(store, projectId, logStreamId, {
    filters: [{ type: 'number', column_id: 'metrics/bleu', operator: 'gte', value: 0 }],
    sort: { column_id: 'metrics/bleu', ascending: false },
  });
  const values = sorted.map((s) => s.metrics.bleu as number);
  assert.deepEqual(
    values,
    [...values].sort((x, y) => y - x),
    'sorted by the computed metric',
  );
  assert.equal(sorted[0]!.name, 'first-a');
  assert.equal(sorted.length, 4);
  const traces = (await store.search('trace', projectId, { log_stream_id: logStreamId, limit: 10 })).records as Rec[];
  const ta = traces.find((x) => x.name === 'trace-a')!;
  assert.equal(ta.metric_info.bleu.status_type, 'roll_up');
  const bleuA = [byName.get('first-a')!.metrics.bleu, byName.get('second-a')!.metrics.bleu];
  assert.ok(Math.abs(ta.metric_info.bleu.value - (bleuA[0] + bleuA[1]) / 2) < 1e-9, 'the trace averages its spans');
  assert.equal(all.length, 9, 'one live version per span');
  assert.equal((store.scorers.online.counts['success'] ?? 0) + (store.scorers.online.counts['not_applicable'] ?? 0), 12);
});

test('a value the client logged is kept; a scorer that cannot run here says why; pending without online scoring', async (t) => {
  const { store, projectId, logStreamId } = await openStore(t, { scoring: { online: false } });
  store.catalog.setRunScorerSettings(projectId, logStreamId, { scorers: [{ name: 'bleu' }, { name: 'correctness' }] });
  await store.logTraces(projectId, {
    log_stream_id: logStreamId,
    traces: [trace('x', 'the same text here', 'other', 'the same text here', { metrics: { bleu: 0.25 } })] as never,
  });
  const before = await spans(store, projectId, logStreamId);
  const first = before.find((s) => s.name === 'first-x')!;
  assert.equal(first.metrics.bleu, 0.25);
  assert.equal(first.metric_info.bleu.status_type, 'success');
  assert.equal(first.metric_info.correctness.status_type, 'not_computed');
  assert.match(first.metric_info.correctness.message, /no judge is configured/);
  const job = store.scorers.score({ projectId, runId: logStreamId, scorers: ['bleu'] });
  const done = await store.scorers.wait(job.id);
  assert.equal(done.status, 'completed');
  assert.equal(done.counts['skipped'], 2, 'the logged values stay');
  const after = await spans(store, projectId, logStreamId);
  assert.equal(after.find((s) => s.name === 'first-x')!.metrics.bleu, 0.25);
  const forced = await store.scorers.wait(
    store.scorers.score({ projectId, runId: logStreamId, scorers: ['bleu'], overwriteLogged: true }).id,
  );
  assert.equal(forced.counts['success'], 2);
  const over = await spans(store, projectId, logStreamId);
  assert.equal(over.find((s) => s.name === 'first-x')!.metrics.bleu, 1);
  assert.equal(over.length, 3);
});

test('pending: an enabled scorer that has not run yet shows as pending', async (t) => {
  const { store, projectId, logStreamId } = await openStore(t, { scoring: { online: false } });
  store.catalog.setRunScorerSettings(projectId, logStreamId, { scorers: [{ name: 'rouge' }] });
  await store.logTraces(projectId, { log_stream_id: logStreamId, traces: [trace('p', 'a b c', 'd e', 'a b c')] as never });
  const all = await spans(store, projectId, logStreamId);
  assert.equal(all.find((s) => s.name === 'first-p')!.metric_info.rouge.status_type, 'pending');
  assert.equal(all.find((s) => s.name === 'tool-p')!.metric_info?.rouge, undefined, 'tools do not wait for rouge');
});

test('recompute over a filter scores exactly the records the filter counts', async (t) => {
  const { store, projectId, logStreamId } = await openStore(t, { scoring: { online: false } });
  const traces = Array.from({ length: 20 }, (_, i) => trace(`r${i}`, `the answer is ${i}`, `answer ${i} too`, `the answer is ${i}`));
  await store.logTraces(projectId, { log_stream_id: logStreamId, traces: traces as never });
  await store.flush(); // half sealed, half in memory
  await store.logTraces(projectId, {
    log_stream_id: logStreamId,
    traces: Array.from({ length: 10 }, (_, i) => trace(`m${i}`, 'one two three four', 'y', 'one two three four')) as never,
  });
  const filter = { filters: [{ type: 'text', column_id: 'name', operator: 'contains', value: 'first-' }] } as never;
  const expected = await store.count('span', projectId, { log_stream_id: logStreamId, ...(filter as object) });
  assert.equal(expected.total_count, 30);
  const job = store.scorers.score({ projectId, runId: logStreamId, scorers: ['bleu'], filter });
  const done = await store.scorers.wait(job.id);
  assert.equal(done.status, 'completed');
  assert.equal(done.steps_total, 30);
  assert.equal(done.counts['success'], 30);
  const all = await spans(store, projectId, logStreamId);
  const scored = all.filter((s) => s.metrics.bleu !== undefined).map((s) => s.name);
  assert.deepEqual(
    scored.sort(),
    all
      .filter((s) => s.name.startsWith('first-'))
      .map((s) => s.name)
      .sort(),
  );
  assert.equal(all.length, 90);
  for (const s of all.filter((x) => x.name.startsWith('first-'))) assert.equal(s.metrics.bleu, 1);
});

test('a store closed with scoring owed scores every owed record once after a reopen', async (t) => {
  const dir = tempDir(t);
  const { store, projectId, logStreamId } = await openStore(t, { scoring: { online: false } }, dir);
  store.catalog.setRunScorerSettings(projectId, logStreamId, { scorers: [{ name: 'bleu' }] });
  const traces = Array.from({ length: 40 }, (_, i) => trace(`k${i}`, `said ${i}`, 'other words', `said ${i}`));
  await store.logTraces(projectId, { log_stream_id: logStreamId, traces: traces as never });
  await store.close();
  const { TraceStore } = await import('../../src/engine/trace-store.js');
  const again = await TraceStore.open(dir);
  t.after(() => again.close());
  await again.scorers.idle();
  const all = await spans(again, projectId, logStreamId);
  assert.equal(all.length, 120, 'no second live version');
  const llm = all.filter((s) => s.type === 'llm');
  assert.equal(llm.length, 80);
  for (const s of llm) assert.equal(s.metric_info.bleu.status_type, 'success', s.name);
  assert.equal(again.scorers.online.counts['success'], 80, 'each scored once');
  // a second reopen finds nothing left to do
  await again.close();
  const third = await TraceStore.open(dir);
  t.after(() => third.close());
  await third.scorers.idle();
  assert.equal(third.scorers.online.counts['success'] ?? 0, 0);
  assert.equal((await spans(third, projectId, logStreamId)).length, 120);
});

test('a process killed while scoring: after a restart every owed record is scored, one live version each', async (t) => {
  const dir = tempDir(t);
  const setup = await openStore(t, { scoring: { online: false } }, dir);
  const { projectId, logStreamId } = setup;
  setup.store.catalog.setRunScorerSettings(projectId, logStreamId, { scorers: [{ name: 'bleu' }] });
  await setup.store.close();
  const bodies = Array.from({ length: 4 }, (_, b) => ({
    log_stream_id: logStreamId,
    traces: Array.from({ length: 25 }, (_, i) =>
      trace(`c${b}-${i}`, `the answer is ${b} ${i}`, 'other words here', `the answer is ${b} ${i}`),
    ),
  }));
  const { spawnSync } = await import('node:child_process');
  const { nodeEntry } = await import('../support/node-entry.js');
  const child = spawnSync(process.execPath, [...nodeEntry('test/support/score-then-die.ts'), dir, projectId, JSON.stringify(bodies)], {
    encoding: 'utf8',
  });
  assert.equal(child.signal, 'SIGKILL', child.stderr);
  const before = JSON.parse(child.stdout.trim()) as { scored: number; queued: number; scans: number };
  assert.ok(before.scored >= 8 && before.scored < 200, `killed mid-way: ${child.stdout}`);
  assert.ok(before.queued + before.scans > 0, 'work was still owed when the process died');
  const { TraceStore } = await import('../../src/engine/trace-store.js');
  const again = await TraceStore.open(dir);
  t.after(() => again.close());
  await again.scorers.idle();
  const all = await spans(again, projectId, logStreamId);
  assert.equal(all.length, 300, 'no record lost, no second live version');
  assert.equal(new Set(all.map((s) => s.id)).size, 300);
  const llm = all.filter((s) => s.type === 'llm');
  for (const s of llm) assert.equal(s.metric_info.bleu.status_type, 'success', s.name);
  const after = again.scorers.online.counts['success'] ?? 0;
  // What the dead process wrote stays; a batch it wrote without counting (it died between) is not scored again.
  assert.ok(
    after <= 200 - before.scored && after >= 200 - before.scored - 4,
    `scored after the restart: ${after}, before: ${before.scored}`,
  );
  assert.equal(again.scorers.online.counts['already'] ?? 0, 0);
});
