// Guarantees each metric on a record reads with its status: a logged or computed value (with the
// scorer's version and explanation), a roll-up, or the reason there is none (failed with its message,
// pending, not applicable, not computed here).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isComputed, metricSource, metricState, metricTitle } from '../../../src/ui/lib/metric-status.js';
import type { RecordRow } from '../../../src/ui/lib/types.js';

const rec: RecordRow = {
  id: 'r',
  type: 'llm',
  metrics: { logged: 0.5, bleu: 0.25 },
  metric_info: {
    logged: { status_type: 'success', value: 0.5 },
    bleu: { status_type: 'success', value: 0.25, scorer_version: 2, explanation: 'two of four words' },
    judge: { status_type: 'success', value: 1, scorer_version: 1, num_judges: 3, model_alias: 'tracelake judge (m)' },
    flaky: { status_type: 'failed', message: 'boom: no output', scorer_version: 1 },
    later: { status_type: 'pending' },
    rouge: { status_type: 'not_applicable', message: 'no dataset_output' },
    correctness: { status_type: 'not_computed', message: 'no judge is configured' },
    tokens: { status_type: 'roll_up', value: 12, roll_up_method: 'sum' },
  },
};

test('values: logged, computed by a scorer (version, explanation, judges), rolled up', () => {
  const logged = metricState(rec, 'logged')!;
  assert.equal(logged.status, 'success');
  assert.equal(isComputed(logged), false);
  assert.equal(metricSource(logged), 'logged');
  assert.equal(metricTitle(logged), 'Logged');
  const bleu = metricState(rec, 'bleu')!;
  assert.deepEqual([bleu.value, bleu.status, bleu.version, bleu.explanation], [0.25, 'success', 2, 'two of four words']);
  assert.equal(metricSource(bleu), 'scorer, v2');
  assert.equal(metricTitle(bleu), 'Computed by a scorer (version 2): two of four words');
  assert.equal(metricSource(metricState(rec, 'judge')!), 'scorer, v1, 3 judges, tracelake judge (m)');
  const tokens = metricState(rec, 'tokens')!;
  assert.deepEqual([tokens.value, tokens.status, tokens.rollUp], [12, 'roll_up', 'sum']);
  assert.equal(metricSource(tokens), 'roll-up (sum of its spans)');
  assert.equal(metricTitle(tokens), 'sum over its spans');
});

test('no value: failed with its message, pending, not applicable, not computed; unknown metrics are null', () => {
  const flaky = metricState(rec, 'flaky')!;
  assert.deepEqual([flaky.value, flaky.status, flaky.message], [null, 'failed', 'boom: no output']);
  assert.equal(metricTitle(flaky), 'The scorer failed on this record: boom: no output');
  assert.equal(metricSource(flaky), 'failed');
  assert.equal(metricState(rec, 'later')!.status, 'pending');
  assert.equal(metricTitle(metricState(rec, 'later')!), 'Waiting to be scored');
  assert.equal(metricState(rec, 'rouge')!.status, 'not_applicable');
  assert.equal(metricTitle(metricState(rec, 'correctness')!), 'The scorer cannot run on this server: no judge is configured');
  assert.equal(metricState(rec, 'nothing'), null);
  assert.equal(metricState({ id: 'x', type: 'llm', metrics: { only: 3 } }, 'only')!.status, 'success', 'a value without metric_info');
});
