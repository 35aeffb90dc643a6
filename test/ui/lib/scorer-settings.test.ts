// Guarantees a change to a run's scorers re-sends the other enabled scorers as they were: knobs that
// differ from a scorer's defaults and a pinned version kept, defaults not copied in, sample rates set
// and cleared; and scorers are described by kind and node types.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { currentInputs, kindLabel, nodeTypesOf, percentOf, toggled, withSampleRate } from '../../../src/ui/lib/scorer-settings.js';
import type { ScorerConfig, ScorerItem } from '../../../src/ui/lib/types.js';

const bleu: ScorerItem = {
  id: 'b',
  name: 'bleu',
  scorer_type: 'preset',
  model_type: 'code',
  output_type: 'percentage',
  scoreable_node_types: ['llm', 'chat'],
  default_version_id: 'bv1',
  default_version: { id: 'bv1' },
};
const judge: ScorerItem = {
  id: 'j',
  name: 'correctness',
  scorer_type: 'preset',
  model_type: 'llm',
  output_type: 'percentage',
  scoreable_node_types: ['llm', 'chat'],
  default_version_id: 'jv2',
  default_version: { id: 'jv2', model_name: 'gpt-4o', num_judges: 3 },
};
const byId = new Map([bleu, judge].map((s) => [s.id, s]));

const config = (s: ScorerItem, over: Partial<ScorerConfig> = {}): ScorerConfig => ({
  id: s.id,
  name: s.name,
  scorer_type: s.scorer_type,
  model_name: s.default_version?.model_name ?? null,
  num_judges: s.default_version?.num_judges ?? null,
  filters: null,
  scoreable_node_types: s.scoreable_node_types ?? null,
  cot_enabled: null,
  output_type: s.output_type ?? null,
  input_type: null,
  scorer_version: { id: s.default_version_id! },
  ...over,
});

test('re-sent entries carry only what differs from the defaults, the sample rate and a pinned version', () => {
  assert.deepEqual(currentInputs([config(bleu), config(judge)], byId), [{ id: 'b' }, { id: 'j' }]);
  assert.deepEqual(currentInputs([config(judge, { num_judges: 5, sample_rate: 0.25, scorer_version: { id: 'jv1', version: 1 } })], byId), [
    { id: 'j', num_judges: 5, sample_rate: 0.25, scorer_version: { id: 'jv1' } },
  ]);
  assert.deepEqual(currentInputs([config(bleu, { scoreable_node_types: ['tool'] })], byId), [{ id: 'b', scoreable_node_types: ['tool'] }]);
});

test('enable, disable, sample rates', () => {
  const two = toggled([{ id: 'b', sample_rate: 0.5 }], 'j', true);
  assert.deepEqual(two, [{ id: 'b', sample_rate: 0.5 }, { id: 'j' }]);
  assert.deepEqual(toggled(two, 'b', false), [{ id: 'j' }]);
  assert.deepEqual(withSampleRate(two, 'j', 0.1), [
    { id: 'b', sample_rate: 0.5 },
    { id: 'j', sample_rate: 0.1 },
  ]);
  assert.deepEqual(withSampleRate(two, 'b', 1), [{ id: 'b' }, { id: 'j' }], '100% is the default: not sent');
  assert.equal(percentOf(0.125), 12.5);
  assert.equal(percentOf(undefined), 100);
});

test('kinds and node types', () => {
  assert.equal(kindLabel(bleu), 'code (preset)');
  assert.equal(kindLabel(judge), 'LLM judge (preset)');
  assert.equal(kindLabel({ scorer_type: 'preset', model_type: 'slm' }), 'Luna model (preset)');
  assert.equal(kindLabel({ scorer_type: 'code', model_type: null }), 'code (registered)');
  assert.equal(kindLabel({ scorer_type: 'llm', model_type: 'llm' }), 'LLM judge (registered)');
  assert.deepEqual(nodeTypesOf({ scoreable_node_types: null }), ['llm']);
  assert.deepEqual(nodeTypesOf(bleu), ['llm', 'chat']);
});
