// Guarantees: enabling scorers in a run (by id or name) stores exactly the given set with its knobs,
// enabledScorers returns them with their metric names for the query engine, and impossible settings
// (unknown, out-of-scope, duplicated or clashing scorers) are refused with the entry's path.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidRequestError, NotFoundError } from '../../src/errors.js';
import { openStore } from '../support/helpers.js';
import { internalsOf } from '../../src/engine/internals.js';

function rejectsAt(fn: () => unknown, loc: string): void {
  assert.throws(fn, (err: unknown) => err instanceof InvalidRequestError && err.issues.some((i) => i.loc.join('.') === loc), loc);
}

test('enable, read back, replace and clear the scorers of a run', async (t) => {
  const { store, projectId, logStreamId } = await openStore(t);
  assert.deepEqual(store.catalog.getRunScorerSettings(projectId, logStreamId), { run_id: logStreamId, scorers: [], segment_filters: null });
  const mine = store.catalog.createScorer({ name: 'mine', output_type: 'percentage', defaults: { model_name: 'm1', num_judges: 3 } });
  const v2 = store.catalog.createScorerVersion(mine.id, { model_name: 'm2' });
  const set = store.catalog.setRunScorerSettings(projectId, logStreamId, {
    run_id: logStreamId,
    scorers: [
      { name: 'correctness', num_judges: 1 },
      { id: mine.id, scorer_version: { version: 2 } },
    ],
  });
  assert.deepEqual(
    set.scorers.map((s) => [s.name, s.num_judges, s.model_name, s.scorer_version?.version]),
    [
      ['correctness', 1, 'gpt-4.1-mini', 1],
      ['mine', 3, 'm2', 2],
    ],
  );
  assert.equal(set.scorers[1]!.scorer_version?.id, v2.id);
  const enabled = store.catalog.enabledScorers(logStreamId);
  assert.deepEqual(
    enabled.map((s) => s.metric_name),
    ['correctness', 'mine'],
  );
  assert.equal(enabled[1]!.output_type, 'percentage');
  assert.deepEqual(
    store.catalog.enabledScorers(logStreamId).map((s) => s.id),
    enabled.map((s) => s.id),
  );
  store.catalog.setRunScorerSettings(projectId, logStreamId, { scorers: [{ name: 'mine' }] });
  assert.deepEqual(
    store.catalog.enabledScorers(logStreamId).map((s) => s.name),
    ['mine'],
    'writing replaces the set',
  );
  store.catalog.deleteScorer(mine.id);
  assert.deepEqual(store.catalog.enabledScorers(logStreamId), [], 'a deleted scorer leaves the settings');
  const exp = store.catalog.createExperiment(projectId, 'exp');
  store.catalog.setRunScorerSettings(projectId, exp.id, { scorers: [{ name: 'bleu' }] });
  assert.deepEqual(
    store.catalog.enabledScorers(exp.id).map((s) => s.name),
    ['bleu'],
    'every run kind has settings',
  );
  await store.catalog.deleteRun(projectId, exp.id);
  assert.deepEqual(store.catalog.enabledScorers(exp.id), []);
  assert.equal(internalsOf(store).catalog.get('run_scorer_settings', exp.id), undefined, 'deleting a run deletes its settings');
});

test('impossible settings are refused with the path of the entry', async (t) => {
  const { store, projectId, logStreamId } = await openStore(t);
  const elsewhere = store.createProject({ name: 'elsewhere' });
  const scoped = store.catalog.createScorer({ name: 'scoped', scope_projects: [{ id: elsewhere.id }] });
  store.catalog.createScorer({ name: 'shadow', metric_name: 'correctness' });
  const bad = (scorers: unknown[], loc: string) =>
    rejectsAt(() => store.catalog.setRunScorerSettings(projectId, logStreamId, { scorers } as never), loc);
  bad([{}], 'body.scorers.0');
  bad([{ id: '00000000-0000-4000-8000-000000000000' }], 'body.scorers.0.id');
  bad([{ name: 'bleu' }, { name: 'nope' }], 'body.scorers.1.name');
  bad([{ id: scoped.id }], 'body.scorers.0.id');
  bad([{ name: 'bleu' }, { name: 'BLEU' }], 'body.scorers.1');
  bad([{ name: 'correctness' }, { name: 'shadow' }], 'body.scorers.1');
  bad([{ name: 'bleu', scorer_version: { version: 4 } }], 'body.scorers.0.scorer_version');
  const preset = store.catalog.listScorers({ filters: [{ name: 'name', operator: 'eq', value: 'rouge' }] }).scorers[0]!;
  bad([{ id: preset.id, name: 'bleu' }], 'body.scorers.0.name');
  rejectsAt(() => store.catalog.setRunScorerSettings(projectId, logStreamId, { run_id: elsewhere.id, scorers: [] }), 'body.run_id');
  assert.throws(
    () => store.catalog.setRunScorerSettings(elsewhere.id, logStreamId, { scorers: [] }),
    NotFoundError,
    'the run must belong to the project',
  );
  assert.deepEqual(store.catalog.enabledScorers(logStreamId), [], 'nothing was written');
  assert.doesNotThrow(() =>
    store.catalog.setRunScorerSettings(elsewhere.id, store.createLogStream(elsewhere.id, 'x').id, { scorers: [{ id: scoped.id }] }),
  );
});
