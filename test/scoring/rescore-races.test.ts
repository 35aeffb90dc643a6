// Guarantees: a job scores records as its scan read them, yet never writes over a newer version: a
// record whose content changed while it was scored keeps its new content (and is scored again as
// that version by the job's pass over what was written meanwhile), and one rewritten without a change
// of content gets its result on the newer version (nothing the rewrite set is lost).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openStore } from '../support/helpers.js';

type Rec = Record<string, any>;

function trace(tag: string): Rec {
  const llm = (name: string) => ({ type: 'llm', name, input: `question ${tag}`, output: `answer ${tag}` });
  return { type: 'trace', name: `trace-${tag}`, input: `question ${tag}`, output: 'x', spans: [llm(`first-${tag}`), llm(`second-${tag}`)] };
}

for (const where of ['sealed', 'in memory'] as const) {
  test(`records rewritten while a job scores them (${where}): new content kept, other changes kept`, async (t) => {
    const { store, projectId, logStreamId } = await openStore(t, { scoring: { online: false } });
    const ls = { log_stream_id: logStreamId };
    const touched = new Set<string>();
    store.scorers.define({
      name: 'slow',
      scoreableNodeTypes: ['llm'],
      // While the job scores these two, each is rewritten: new output for one, new tags for the other.
      score: async (r) => {
        if (r.name === 'first-a' && !touched.has(r.name)) {
          touched.add(r.name);
          await store.records.updateRecord('span', projectId, r.id, { ...ls, output: 'changed' });
        }
        if (r.name === 'second-a' && !touched.has(r.name)) {
          touched.add(r.name);
          await store.records.updateRecord('span', projectId, r.id, { ...ls, tags: ['kept'] });
        }
        return { value: 1, explanation: `saw ${JSON.stringify(r.output)}` };
      },
    });
    await store.logTraces(projectId, { ...ls, traces: [trace('a'), trace('b')] as never });
    if (where === 'sealed') await store.flush();
    const job = await store.scorers.wait(store.scorers.score({ projectId, runId: logStreamId, scorers: ['slow'] }).id);
    assert.equal(job.status, 'completed', job.error_message ?? '');
    assert.equal(job.counts['changed'], 1, 'the result for the old content is dropped');
    const spans = (await store.search('span', projectId, { ...ls, limit: 100 })).records as Rec[];
    assert.equal(spans.length, 4, 'one live version each');
    const by = new Map(spans.map((s) => [s.name, s]));
    const first = by.get('first-a')!;
    assert.equal(first.output, 'changed', 'the new content stays');
    assert.equal(first.metrics.slow, 1, 'the new version is scored by the pass over what was written meanwhile');
    assert.equal(first.metric_info.slow.explanation, 'saw "changed"');
    const second = by.get('second-a')!;
    assert.deepEqual(second.tags, ['kept'], 'the rewrite without new content keeps what it set');
    assert.equal(second.metrics.slow, 1);
    for (const n of ['first-b', 'second-b']) assert.equal(by.get(n)!.metrics.slow, 1, n);
  });
}
