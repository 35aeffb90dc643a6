// Guarantees a partial search that selects a computed metric reports the same status as a full
// search: a scorer's failure with its message, an explanation and version on a success, not
// applicable with why; never "pending" for a record the scorer already ran on.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openStore } from '../../support/helpers.js';

type Rec = Record<string, any>;

test('partial_search selecting metric columns carries their stored statuses, as search does', async (t) => {
  const { store, projectId, logStreamId } = await openStore(t, { scoring: { online: false } });
  store.scorers.define({
    name: 'brittle',
    scoreableNodeTypes: ['llm'],
    score: (r) => {
      if (String(r.output).includes('boom')) throw new Error('says boom');
      return { value: 1, explanation: 'fine' };
    },
  });
  store.catalog.setRunScorerSettings(projectId, logStreamId, { scorers: [{ name: 'brittle' }, { name: 'bleu' }] });
  const llm = (name: string, output: string) => ({ type: 'llm', name, input: 'q', output });
  await store.logTraces(projectId, {
    log_stream_id: logStreamId,
    traces: [{ type: 'trace', name: 't', input: 'q', output: 'a', spans: [llm('ok', 'all good'), llm('bad', 'boom')] }] as never,
  });
  const job = store.scorers.score({ projectId, runId: logStreamId, scorers: ['brittle', 'bleu'] });
  assert.equal((await store.scorers.wait(job.id)).status, 'completed');

  const full = (await store.search('span', projectId, { log_stream_id: logStreamId, limit: 10 })).records as Rec[];
  const partial = (
    await store.partialSearch('span', projectId, {
      log_stream_id: logStreamId,
      select_columns: { column_ids: ['name', 'metrics/brittle', 'metrics/bleu'] },
      pagination: { starting_token: 0, limit: 10 },
    })
  ).records as Rec[];
  const byName = (rs: Rec[]) => new Map(rs.map((r) => [r['name'], r]));
  const f = byName(full);
  const p = byName(partial);
  assert.equal(p.get('bad')!['metric_info'].brittle.status_type, 'failed');
  assert.match(p.get('bad')!['metric_info'].brittle.message, /says boom/);
  assert.equal(p.get('ok')!['metric_info'].brittle.explanation, 'fine');
  assert.equal(p.get('ok')!['metric_info'].bleu.status_type, 'not_applicable', 'no dataset_output');
  for (const name of ['ok', 'bad'])
    for (const m of ['brittle', 'bleu']) assert.deepEqual(p.get(name)!['metric_info'][m], f.get(name)!['metric_info'][m], `${name} ${m}`);
});
