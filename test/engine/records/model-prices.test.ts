// Computed cost can be turned off: with `modelPrices: false` an llm span keeps exactly the metrics it
// was logged with (the peer benchmark relies on it), while a default store prices the same span.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openStore } from '../../support/helpers.js';

const span = { type: 'llm' as const, name: 'chat', model: 'gpt-4o', metrics: { num_input_tokens: 1000, num_output_tokens: 500 } };

async function costOf(t: Parameters<typeof openStore>[0], modelPrices?: false): Promise<unknown> {
  const fx = await openStore(t, modelPrices === false ? { modelPrices } : {});
  await fx.store.logTraces(fx.projectId, { log_stream_id: fx.logStreamId, traces: [{ name: 'ask', spans: [span] }] });
  const { records } = await fx.store.search('span', fx.projectId, { log_stream_id: fx.logStreamId });
  const metrics = records.find((r) => r['type'] === 'llm')!['metrics'] as Record<string, unknown>;
  return metrics['cost'];
}

test('an llm span with a model and tokens is priced by default, and not with modelPrices: false', async (t) => {
  const priced = await costOf(t);
  assert.equal(typeof priced, 'number');
  assert.ok((priced as number) > 0, 'gpt-4o has a price in the shipped table');
  assert.equal(await costOf(t, false), undefined, 'no computed cost when prices are off');
});
