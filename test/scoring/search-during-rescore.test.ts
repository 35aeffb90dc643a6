// Guarantee: a record being rescored is never missing nor doubled in an answer. While recompute jobs
// rewrite every llm span of a run (sealed and in memory), searches (whole rows, and a filter with a
// sort by the metric being rewritten) and counts made in a loop see every span exactly once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TraceStore } from '../../src/engine/trace-store.js';
import { openStore } from '../support/helpers.js';

type Rec = Record<string, any>;

function trace(tag: string): Rec {
  const llm = (name: string, output: string) => ({
    type: 'llm',
    name,
    input: [{ role: 'user', content: `question ${tag}` }],
    output: { role: 'assistant', content: output },
    dataset_output: `the answer is ${tag}`,
  });
  return {
    type: 'trace',
    name: `trace-${tag}`,
    input: `question ${tag}`,
    output: 'x',
    spans: [llm(`first-${tag}`, `the answer is ${tag}`), llm(`second-${tag}`, `maybe ${tag}`), { type: 'tool', name: `tool-${tag}` }],
  };
}

function once(ids: readonly string[], expected: ReadonlySet<string>, what: string): void {
  const seen = new Map<string, number>();
  for (const id of ids) seen.set(id, (seen.get(id) ?? 0) + 1);
  const missing = [...expected].filter((id) => !seen.has(id));
  const doubled = [...seen].filter(([, n]) => n > 1).map(([id]) => id);
  const strangers = [...seen.keys()].filter((id) => !expected.has(id));
  assert.deepEqual({ missing, doubled, strangers }, { missing: [], doubled: [], strangers: [] }, what);
}

async function readLoop(store: TraceStore, projectId: string, runId: string, expected: ReadonlySet<string>, busy: () => boolean) {
  let rounds = 0;
  const llm = expected.size * (2 / 3);
  do {
    const all = await store.search('span', projectId, { log_stream_id: runId, limit: 1000 });
    once(
      (all.records as Rec[]).map((r) => r.id),
      expected,
      `search, round ${rounds}`,
    );
    const sorted = await store.search('span', projectId, {
      log_stream_id: runId,
      limit: 1000,
      filters: [{ type: 'text', column_id: 'type', operator: 'eq', value: 'llm' }],
      sort: { column_id: 'metrics/bleu', ascending: false },
    } as never);
    assert.equal(sorted.records.length, llm, `llm spans sorted by bleu, round ${rounds}`);
    assert.equal(new Set((sorted.records as Rec[]).map((r) => r.id)).size, llm);
    const n = await store.count('span', projectId, { log_stream_id: runId });
    assert.equal(n.total_count, expected.size, `count, round ${rounds}`);
    rounds++;
  } while (busy());
  return rounds;
}

test('searches and counts during recompute jobs see every record exactly once (sealed and in memory)', async (t) => {
  // Small batches: many rewrites, each a separate write that a read can meet half-way.
  const { store, projectId, logStreamId } = await openStore(t, { scoring: { online: false, batchSize: 16 } });
  await store.logTraces(projectId, { log_stream_id: logStreamId, traces: Array.from({ length: 60 }, (_, i) => trace(`s${i}`)) as never });
  await store.flush(); // these sealed
  for (let b = 0; b < 4; b++) {
    await store.logTraces(projectId, {
      log_stream_id: logStreamId,
      traces: Array.from({ length: 10 }, (_, i) => trace(`m${b}-${i}`)) as never,
    });
  }
  const expected = new Set(
    ((await store.search('span', projectId, { log_stream_id: logStreamId, limit: 1000 })).records as Rec[]).map((r) => r.id),
  );
  assert.equal(expected.size, 300);
  let rounds = 0;
  for (let j = 0; j < 6; j++) {
    const job = store.scorers.score({ projectId, runId: logStreamId, scorers: ['bleu'] });
    let done = false;
    const finished = store.scorers.wait(job.id).then((r) => {
      done = true;
      return r;
    });
    rounds += await readLoop(store, projectId, logStreamId, expected, () => !done);
    const result = await finished;
    assert.equal(result.status, 'completed', result.error_message ?? '');
    assert.equal(result.counts['success'], 200);
    // Every other job seals what the last one wrote to memory, so later jobs rewrite sealed records again.
    if (j % 2 === 1) await store.flush();
  }
  assert.ok(rounds >= 6, `reads made while jobs ran: ${rounds}`);
});
