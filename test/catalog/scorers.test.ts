// Guarantees: the 73 presets load valid and stay read-only; registered llm and code scorers are
// created with sensible defaults, versioned (latest vs default), changed, scoped, deprecated and
// deleted, survive a reopen, and every scorer rule (unique names, roll-ups, color pickers, scopes)
// is refused with a 422 pointing at the field.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadPresets } from '../../src/catalog/presets.js';
import { TraceStore } from '../../src/engine/trace-store.js';
import { ConflictError, ForbiddenError, InvalidRequestError, NotFoundError } from '../../src/errors.js';
import { openStore, tempDir } from '../support/helpers.js';
import { internalsOf } from '../../src/engine/internals.js';

function rejectsAt(fn: () => unknown, loc: string, msg?: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof InvalidRequestError, `expected a 422, got ${String(err)}`);
    const issue = err.issues.find((i) => i.loc.join('.') === loc);
    assert.ok(issue, `expected an issue at ${loc}, got ${JSON.stringify(err.issues)}`);
    if (msg) assert.match(issue.msg, msg);
    return true;
  });
}

test('presets: 73 valid, global, versioned, read-only', async (t) => {
  const { store } = await openStore(t);
  const presets = loadPresets().rows;
  assert.equal(presets.length, 73);
  const listed = store.catalog.listScorers(
    { filters: [{ name: 'scorer_type', operator: 'eq', value: 'preset' }] },
    { limit: 1000 },
  ).scorers;
  assert.equal(listed.length, 73);
  for (const s of listed) {
    assert.equal(s.is_global, true);
    assert.equal(s.latest_version?.version, 1);
    assert.equal(s.default_version_id, s.default_version?.id);
    assert.ok(s.metric_name && s.roll_up_config && s.roll_up_config.roll_up_methods.length > 0, s.name);
  }
  const correctness = listed.find((s) => s.name === 'correctness')!;
  assert.throws(() => store.catalog.updateScorer(correctness.id, { label: 'x' }), ForbiddenError);
  assert.throws(
    () => store.catalog.deleteScorer(correctness.id),
    (e: unknown) => e instanceof ForbiddenError && /built-in preset/.test(e.message),
  );
  assert.throws(() => store.catalog.createScorerVersion(correctness.id, {}), ForbiddenError);
  assert.equal(store.catalog.listScorerVersions(correctness.id).length, 1);
  assert.throws(() => store.catalog.getScorer('00000000-0000-4000-8000-000000000000'), NotFoundError);
});

test('register an llm scorer: defaults, versions, default version, changes, deprecation, deletion', async (t) => {
  const { store, projectId } = await openStore(t);
  const user = store.users.create({ email: 'maker@example.com', first_name: 'Mia' });
  const s = store.catalog.createScorer(
    {
      name: 'brand-tone',
      output_type: 'boolean',
      tags: ['brand'],
      user_prompt: 'Is the tone on brand?',
      defaults: { model_name: 'gpt-4.1-mini', num_judges: 3 },
    },
    user,
  );
  assert.equal(s.scorer_type, 'llm');
  assert.equal(s.model_type, 'llm');
  assert.equal(s.label, '');
  assert.equal(s.metric_name, 'brand-tone');
  assert.equal(s.is_global, true);
  assert.equal(s.roll_up_method, 'percentage_true', 'the roll-up follows the output type');
  assert.deepEqual(s.roll_up_config, { roll_up_methods: ['percentage_true', 'percentage_false'] });
  assert.equal(s.created_by, user.id);
  assert.equal(s.created_by_user?.email, 'maker@example.com');
  assert.equal(s.latest_version?.version, 1);
  assert.equal(s.latest_version?.model_name, 'gpt-4.1-mini');
  assert.equal(s.latest_version?.generated_scorer?.user_prompt, 'Is the tone on brand?');
  assert.equal(s.default_version_id, s.latest_version?.id);

  assert.throws(() => store.catalog.createScorer({ name: 'BRAND-TONE' }), ConflictError, 'names are unique ignoring case');
  assert.throws(() => store.catalog.createScorer({ name: 'Correctness' }), ConflictError, 'preset names are taken too');

  const v2 = store.catalog.createScorerVersion(s.id, { user_prompt: 'v2 prompt', num_judges: 5 }, user);
  assert.equal(v2.version, 2);
  let now = store.catalog.getScorer(s.id);
  assert.equal(now.latest_version?.id, v2.id);
  assert.equal(now.default_version?.version, 1, 'a new version does not move the default');
  const v3 = store.catalog.createScorerVersion(s.id, { set_as_default: true });
  now = store.catalog.getScorer(s.id);
  assert.equal(now.default_version_id, v3.id);
  now = store.catalog.updateScorer(s.id, { default_version: 2 });
  assert.equal(now.default_version?.id, v2.id);
  now = store.catalog.updateScorer(s.id, { default_version_id: v3.id });
  assert.equal(now.default_version?.version, 3);
  const other = store.catalog.createScorer({ name: 'other' });
  rejectsAt(() => store.catalog.updateScorer(s.id, { default_version_id: other.default_version_id! }), 'body.default_version_id');
  rejectsAt(() => store.catalog.updateScorer(s.id, { default_version: 9 }), 'body.default_version');
  assert.deepEqual(
    store.catalog.listScorerVersions(s.id).map((v) => v.version),
    [1, 2, 3],
  );

  const before = now.updated_at!;
  await new Promise((r) => setTimeout(r, 5));
  now = store.catalog.updateScorer(s.id, {
    name: 'brand-voice',
    label: 'Brand voice',
    deprecated: true,
    scope_projects: [{ id: projectId }],
  });
  assert.equal(now.name, 'brand-voice');
  assert.equal(now.metric_name, 'brand-tone', 'the metric key stays: recorded values keep their column');
  assert.equal(now.deprecated, true);
  assert.equal(now.is_global, false, 'scoping to projects makes it project-scoped');
  assert.deepEqual(now.scope_projects, [{ id: projectId, name: 'test-project' }]);
  assert.ok(now.updated_at! > before);
  assert.throws(() => store.catalog.updateScorer(other.id, { name: 'Brand-Voice' }), ConflictError);
  rejectsAt(() => store.catalog.updateScorer(s.id, { is_global: true, scope_projects: [{ id: projectId }] }), 'body.is_global');
  now = store.catalog.updateScorer(s.id, { is_global: true });
  assert.deepEqual(now.scope_projects, [], 'making it global clears the scope');

  store.catalog.deleteScorer(s.id);
  assert.throws(() => store.catalog.getScorer(s.id), NotFoundError);
  assert.equal(
    internalsOf(store)
      .catalog.table('scorer_versions')
      .filter((v: any) => v.scorer_id === s.id).length,
    0,
  );
  assert.doesNotThrow(() => store.catalog.createScorer({ name: 'brand-voice' }), 'the name is free again');
});

test('code scorers keep their code in versions, never in lists', async (t) => {
  const { store } = await openStore(t);
  const code = 'def scorer_fn(*, response, **kw):\n    return len(response) < 200\n';
  const s = store.catalog.createScorer({ name: 'short-answer', scorer_type: 'code', output_type: 'boolean', version: { code } });
  assert.equal(s.model_type, 'code');
  assert.equal(s.latest_version?.generated_scorer, null);
  assert.equal(s.latest_version?.registered_scorer?.code_length, code.length);
  assert.match(s.latest_version?.registered_scorer?.code_sha256 ?? '', /^[0-9a-f]{64}$/);
  assert.ok(
    !JSON.stringify(store.catalog.listScorers({ filters: [{ name: 'id', value: s.id }] })).includes('scorer_fn'),
    'lists carry no code',
  );
  assert.equal(store.catalog.listScorerVersions(s.id)[0]?.code, code);
});

test('scorer rules are refused with the field path', async (t) => {
  const { store } = await openStore(t);
  rejectsAt(
    () => store.catalog.createScorer({ name: 'r1', roll_up_config: { roll_up_methods: [] } }),
    'body.roll_up_config.roll_up_methods',
    /at least 1/,
  );
  rejectsAt(
    () => store.catalog.createScorer({ name: 'r2', roll_up_config: { roll_up_methods: ['average', 'category_count'] } }),
    'body.roll_up_config.roll_up_methods',
    /all be numeric/,
  );
  rejectsAt(
    () => store.catalog.createScorer({ name: 'r3', roll_up_method: 'sum', roll_up_config: { roll_up_methods: ['average'] } }),
    'body.roll_up_method',
  );
  rejectsAt(
    () =>
      store.catalog.createScorer({
        name: 'c1',
        metric_color_picker_config: {
          type: 'categorical',
          constraints: [
            { color: 'red', operator: 'eq', value: 'anger' },
            { color: 'green', operator: 'one_of', value: ['joy', 'anger'] },
          ],
        },
      }),
    'body.metric_color_picker_config.constraints.1.value.1',
    /'anger' already has a color in constraint 0/,
  );
  rejectsAt(
    () =>
      store.catalog.createScorer({
        name: 'c2',
        metric_color_picker_config: {
          type: 'multi_label',
          constraints: [
            { color: 'red', operator: 'eq', value: 'ssn' },
            { color: 'red', operator: 'eq', value: 'ssn' },
          ],
        },
      }),
    'body.metric_color_picker_config.constraints.1.value',
  );
  rejectsAt(
    () => store.catalog.createScorer({ name: 'c3', metric_color_picker_config: { type: 'numeric', constraints: [] } }),
    'body.metric_color_picker_config.constraints',
  );
  rejectsAt(
    () =>
      store.catalog.createScorer({
        name: 'c4',
        color_threshold_config: { type: 'numeric', constraints: [{ color: 'red', operator: 'between', value: [0.8, 0.2] }] },
      }),
    'body.color_threshold_config.constraints.0.value',
  );
  rejectsAt(
    () => store.catalog.createScorer({ name: 's1', scope_projects: [{ id: '00000000-0000-4000-8000-000000000000' }] }),
    'body.scope_projects.0.id',
    /not found/,
  );
  rejectsAt(() => store.catalog.createScorer({ name: 'q1', required_scorers: ['no-such-scorer'] }), 'body.required_scorers.0');
  rejectsAt(() => store.catalog.createScorer({ name: '   ' }), 'body.name');
  assert.equal(
    store.catalog.listScorers({ filters: [{ name: 'scorer_type', operator: 'ne', value: 'preset' }] }).scorers.length,
    0,
    'nothing was written',
  );
  const ok = store.catalog.createScorer({
    name: 'ok',
    required_scorers: ['chunk_relevance'],
    metric_color_picker_config: {
      type: 'categorical',
      constraints: [
        { color: 'red', operator: 'one_of', value: ['a', 'b'] },
        { color: 'green', operator: 'eq', value: 'c' },
      ],
    },
  });
  assert.deepEqual(ok.required_metric_ids, [
    store.catalog.listScorers({ filters: [{ name: 'name', operator: 'eq', value: 'chunk_relevance' }] }).scorers[0]!.id,
  ]);
});

test('deleting a project takes it out of scorer scopes without making them global', async (t) => {
  const { store, projectId } = await openStore(t);
  const other = store.createProject({ name: 'other' });
  const both = store.catalog.createScorer({ name: 'both', scope_projects: [{ id: projectId }, { id: other.id }] });
  const one = store.catalog.createScorer({ name: 'one', scope_projects: [{ id: projectId }] });
  await store.catalog.deleteProject(projectId);
  assert.deepEqual(store.catalog.getScorer(both.id).scope_projects, [{ id: other.id, name: 'other' }]);
  const orphan = store.catalog.getScorer(one.id);
  assert.deepEqual(orphan.scope_projects, []);
  assert.equal(orphan.is_global, false);
});

test('registered scorers, versions and settings survive a reopen', async (t) => {
  const dir = tempDir(t);
  let store = await TraceStore.open(dir);
  const project = store.createProject({ name: 'p' });
  const run = store.createLogStream(project.id, 'ls');
  const s = store.catalog.createScorer({ name: 'kept', tags: ['a'] });
  store.catalog.createScorerVersion(s.id, { set_as_default: true });
  store.catalog.setRunScorerSettings(project.id, run.id, { scorers: [{ id: s.id }] });
  await store.close();
  store = await TraceStore.open(dir);
  t.after(() => store.close());
  const again = store.catalog.getScorer(s.id);
  assert.equal(again.name, 'kept');
  assert.equal(again.default_version?.version, 2);
  assert.deepEqual(
    store.catalog.enabledScorers(run.id).map((x) => x.name),
    ['kept'],
  );
  assert.throws(() => store.catalog.createScorer({ name: 'KEPT' }), ConflictError, 'the name index is rebuilt');
});
