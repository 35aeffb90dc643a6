// Guarantees: the catalog routes answer on a real server under every prefix (bare projects/paginated
// in the v1 shape), record who created what, keep bookmarks per caller, report permissions for the
// calling user's role, reject bad lists and scorer definitions with 422 at the field, refuse changes
// to presets with 403, and serve the official client's scorer loop.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Value } from '../../src/vendor/typebox.js';
import { Scorer } from '../../src/schemas/scorers.js';
import { everyKindTrace, startServer, type ServerFixture } from '../support/helpers.js';

async function asUser(s: ServerFixture, email: string, role: 'admin' | 'user' = 'user') {
  const user = s.store.users.create({ email, role });
  const key = s.store.users.createApiKey(user.id).key;
  return { user, call: (method: string, path: string, body?: unknown) => s.call(method, path, body, { 'Galileo-API-Key': key }) };
}

function issueAt(r: { status: number; body: any }, loc: string, msg?: RegExp): void {
  assert.equal(r.status, 422, JSON.stringify(r.body));
  const issue = r.body.detail.find((d: any) => d.loc.join('.') === loc);
  assert.ok(issue, `expected loc ${loc}, got ${JSON.stringify(r.body.detail)}`);
  if (msg) assert.match(issue.msg, msg);
}

test('scorers/list under every prefix, with the official client loop until next_starting_token is null', async (t) => {
  const s = await startServer(t);
  const body = {
    filters: [
      { name: 'scorer_type', value: 'preset', operator: 'eq' },
      { name: 'name', value: ['correctness', 'completeness', 'bleu'], operator: 'one_of' },
    ],
  };
  for (const prefix of ['', '/v2', '/public/v2']) {
    const r = await s.call('POST', `${prefix}/scorers/list?starting_token=0&limit=100`, body);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(
      r.body.scorers.map((x: any) => x.name),
      ['bleu', 'completeness', 'correctness'],
    );
    assert.equal(r.body.next_starting_token, null);
  }
  const seen = new Set<string>();
  let token: number | null = 0;
  while (token !== null) {
    const r = await s.call('POST', `/scorers/list?starting_token=${token}&limit=10`, {});
    for (const x of r.body.scorers) seen.add(x.id);
    token = r.body.next_starting_token;
  }
  assert.equal(seen.size, 73);
  const sorted = await s.call('POST', '/v2/scorers/list?limit=3', { filters: [], sort: { name: 'name', ascending: false } });
  assert.deepEqual(
    sorted.body.scorers.map((x: any) => x.name),
    ['visual_quality', 'visual_fidelity', 'user_intent_change_vision'],
  );
  const noBody = await s.call('POST', '/v2/scorers/list?limit=1', undefined);
  assert.equal(noBody.status, 200, 'a missing body means no filters');
});

test('listed scorers match the Scorer schema exactly (the list is serialized without stripping)', async (t) => {
  const s = await startServer(t);
  await s.call('POST', '/scorers', { name: 'code-one', scorer_type: 'code', version: { code: 'secret_sauce = 1' }, tags: ['t'] });
  const r = await s.call('POST', '/scorers/list?limit=1000&actions=update', {});
  const allowed = new Set(Object.keys(Scorer.properties));
  for (const item of r.body.scorers) {
    assert.ok(Value.Check(Scorer, item), `${item.name}: ${JSON.stringify([...Value.Errors(Scorer, item)][0])}`);
    for (const k of Object.keys(item)) assert.ok(allowed.has(k), `${item.name}: unexpected field ${k}`);
  }
  assert.ok(!JSON.stringify(r.body).includes('secret_sauce'), 'no code in lists');
});

test('bad list requests answer 422 with loc at the field and the allowed choices', async (t) => {
  const s = await startServer(t);
  const p = s.projectId;
  const ids = (n: number) => Array.from({ length: n }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
  issueAt(
    await s.call('POST', '/v2/scorers/list', { filters: [{ name: 'lable', operator: 'eq', value: 'x' }] }),
    'body.filters.0.name',
    /'label'/,
  );
  issueAt(
    await s.call('POST', '/v2/scorers/list', { filters: [{ name: 'tags', operator: 'ne', value: 'x' }] }),
    'body.filters.0.operator',
    /'eq', 'contains', 'one_of', 'not_in'/,
  );
  const untagged = await s.call('POST', '/v2/scorers/list', {
    filters: [
      { name: 'name', operator: 'eq', value: 'x' },
      { operator: 'eq', value: 'x' },
    ],
  });
  issueAt(untagged, 'body.filters.1.name', /required/);
  assert.equal(untagged.body.detail.length, 1, 'only the missing tag is reported, not every branch');
  issueAt(await s.call('POST', '/v2/scorers/list', { filters: [{ name: 'is_global', value: 'yes' }] }), 'body.filters.0.value', /boolean/);
  issueAt(
    await s.call('POST', '/v2/scorers/list', { filters: [{ name: 'scope_projects', project_ids: [] }] }),
    'body.filters.0.project_ids',
    /at least 1/,
  );
  issueAt(
    await s.call('POST', '/v2/scorers/list', { filters: [{ name: 'scope_projects', project_ids: ids(1001) }] }),
    'body.filters.0.project_ids',
    /at most 1000/,
  );
  assert.equal(
    (await s.call('POST', '/v2/scorers/list', { filters: [{ name: 'scope_projects', project_ids: ids(1000) }] })).status,
    200,
    '1000 ids are fine',
  );
  issueAt(await s.call('POST', '/v2/scorers/list', { sort: { name: 'enabled_in_run' } }), 'body.sort.value', /required/);
  issueAt(await s.call('POST', '/v2/scorers/list', { sort: { name: 'created_at' } }), 'body.sort.name', /'updated_at'/);
  issueAt(await s.call('POST', '/v2/scorers/list?limit=0', {}), 'query.limit');
  issueAt(await s.call('POST', '/v2/scorers/list?actions=fly', {}), 'query.actions.0', /'autotune_apply'/);
  issueAt(
    await s.call('POST', '/v2/projects/paginated', { filters: [{ name: 'num_logstreams', operator: 'contains', value: 1 }] }),
    'body.filters.0.operator',
    /'between'/,
  );
  issueAt(
    await s.call('POST', '/v2/projects/paginated', { filters: [{ name: 'runs', operator: 'eq', value: 1 }] }),
    'body.filters.0.name',
    /'num_logstreams'/,
  );
  issueAt(
    await s.call('POST', '/projects/paginated', { filters: [{ name: 'num_logstreams', operator: 'eq', value: 1 }] }),
    'body.filters.0.name',
    /'runs'/,
  );
  issueAt(
    await s.call('POST', '/v2/projects/paginated', { filters: [{ name: 'num_experiments', operator: 'between', value: [3, 1] }] }),
    'body.filters.0.value',
    /low <= high/,
  );
  issueAt(
    await s.call('POST', `/v2/projects/${p}/log_streams/search`, { filters: [{ name: 'created_by', operator: 'gt', value: 'x' }] }),
    'body.filters.0.operator',
  );
  issueAt(
    await s.call('POST', `/v2/projects/${p}/log_streams/search`, { filters: [{ name: 'creator', value: 'x' }] }),
    'body.filters.0.name',
    /'created_by'/,
  );
  issueAt(await s.call('POST', `/v2/projects/${p}/log_streams/search`, { limit: 0 }), 'body.limit');
});

test('bad scorer definitions answer 422 at the field; presets answer 403', async (t) => {
  const s = await startServer(t);
  issueAt(
    await s.call('POST', '/scorers', { name: 'x', roll_up_config: { roll_up_methods: [] } }),
    'body.roll_up_config.roll_up_methods',
    /at least 1/,
  );
  issueAt(
    await s.call('POST', '/scorers', {
      name: 'x',
      metric_color_picker_config: {
        type: 'categorical',
        constraints: [
          { color: 'red', operator: 'one_of', value: ['a', 'b'] },
          { color: 'green', operator: 'eq', value: 'b' },
        ],
      },
    }),
    'body.metric_color_picker_config.constraints.1.value',
    /'b' already has a color in constraint 0/,
  );
  issueAt(
    await s.call('POST', '/scorers', { name: 'x', metric_color_picker_config: { type: 'boolean', constraints: [] } }),
    'body.metric_color_picker_config.constraints',
  );
  issueAt(
    await s.call('POST', '/scorers', { name: 'x', metric_color_picker_config: { type: 'rainbow', constraints: [] } }),
    'body.metric_color_picker_config.type',
    /'numeric'/,
  );
  issueAt(
    await s.call('POST', '/scorers', {
      name: 'x',
      metric_color_picker_config: { type: 'boolean', constraints: [{ color: 'red', operator: 'gt', value: true }] },
    }),
    'body.metric_color_picker_config.constraints.0.operator',
  );
  issueAt(await s.call('POST', '/scorers', { name: 'x', scorer_type: 'preset' }), 'body.scorer_type', /'llm', 'code'/);
  issueAt(await s.call('POST', '/scorers', { name: 'x', scope_projects: [{ id: 'nope' }] }), 'body.scope_projects.0.id', /UUID/);
  const preset = (await s.call('POST', '/scorers/list', { filters: [{ name: 'name', operator: 'eq', value: 'correctness' }] })).body
    .scorers[0];
  for (const [method, path, body] of [
    ['PATCH', `/scorers/${preset.id}`, { label: 'mine' }],
    ['DELETE', `/scorers/${preset.id}`, undefined],
    ['POST', `/v2/scorers/${preset.id}/versions`, {}],
  ] as const) {
    const r = await s.call(method, path, body);
    assert.equal(r.status, 403, `${method} ${path}`);
    assert.match(r.body.detail, /built-in preset scorer and is read-only/);
  }
  assert.equal((await s.call('GET', `/scorers/${preset.id}`)).body.label, 'Correctness');
});

test('scorer lifecycle and run scorer settings over HTTP', async (t) => {
  const s = await startServer(t);
  const created = await s.call('POST', '/v2/scorers', {
    name: 'helpfulness',
    output_type: 'percentage',
    tags: ['custom'],
    user_prompt: 'Was it helpful?',
    scope_projects: [{ id: s.projectId }],
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const id = created.body.id;
  assert.equal(created.body.is_global, false);
  assert.deepEqual(created.body.scope_projects, [{ id: s.projectId, name: 'test-project' }]);
  assert.ok(created.body.created_by_user.email.endsWith('@test'));
  const v2 = await s.call('POST', `/scorers/${id}/versions`, { user_prompt: 'Was it really helpful?', set_as_default: true });
  assert.equal(v2.body.version, 2);
  const got = await s.call('GET', `/public/v2/scorers/${id}?actions=update&actions=autotune_apply`);
  assert.equal(got.body.default_version.version, 2);
  assert.deepEqual(
    got.body.permissions.map((p: any) => p.allowed),
    [true, true],
    'the creator may update and autotune',
  );
  assert.equal((await s.call('PATCH', `/scorers/${id}`, { deprecated: true, label: 'Helpfulness' })).body.deprecated, true);
  assert.equal((await s.call('GET', `/scorers/${id}/versions`)).body.length, 2);

  const settings = await s.call('PATCH', `/projects/${s.projectId}/runs/${s.logStreamId}/scorer-settings`, {
    run_id: s.logStreamId,
    scorers: [{ id }, { name: 'toxicity' }],
  });
  issueAt(settings, 'body.scorers.1.name', /no scorer named "toxicity"/);
  const ok = await s.call('PATCH', `/projects/${s.projectId}/runs/${s.logStreamId}/scorer-settings`, {
    run_id: s.logStreamId,
    scorers: [{ id }, { name: 'output_toxicity' }],
  });
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.deepEqual(
    ok.body.scorers.map((x: any) => x.name),
    ['helpfulness', 'output_toxicity'],
  );
  assert.deepEqual(
    (await s.call('GET', `/v2/projects/${s.projectId}/runs/${s.logStreamId}/scorer-settings`)).body.scorers.map((x: any) => x.id),
    ok.body.scorers.map((x: any) => x.id),
  );
  const enabledFirst = await s.call('POST', '/scorers/list?limit=2', {
    sort: { name: 'enabled_in_run', value: s.logStreamId, ascending: false },
  });
  assert.deepEqual(
    enabledFirst.body.scorers.map((x: any) => x.name),
    ['helpfulness', 'output_toxicity'],
  );
  const withMetric = await s.call('POST', `/v2/projects/paginated?metric_id=${id}&include_logstreams=true`, {});
  assert.deepEqual(
    withMetric.body.projects[0].log_streams.map((l: any) => l.id),
    [s.logStreamId],
  );

  assert.equal((await s.call('DELETE', `/scorers/${id}`)).status, 200);
  assert.equal((await s.call('GET', `/scorers/${id}`)).status, 404);
  assert.deepEqual(
    (await s.call('GET', `/projects/${s.projectId}/runs/${s.logStreamId}/scorer-settings`)).body.scorers.map((x: any) => x.name),
    ['output_toxicity'],
  );
});

test('projects over HTTP: v1 and v2 lists, bookmarks per caller, rename, delete with records', async (t) => {
  const s = await startServer(t);
  const bob = await asUser(s, 'bob@test');
  const made = await s.call('POST', '/projects', { name: 'mine', description: 'd' });
  assert.equal(made.body.created_by_user.email.endsWith('@test'), true);
  const pid = made.body.id;
  const v2 = await s.call('POST', '/v2/projects/paginated?actions=delete&actions=log_data', { sort: { name: 'name' } });
  assert.deepEqual(Object.keys(v2.body).sort(), ['limit', 'next_starting_token', 'paginated', 'projects', 'starting_token', 'total_count']);
  assert.equal(v2.body.total_count, 2);
  const mine = v2.body.projects.find((p: any) => p.id === pid);
  assert.deepEqual(
    mine.permissions.map((p: any) => p.allowed),
    [true, true],
    'the creator owns it',
  );
  const v1 = await s.call('POST', '/projects/paginated?limit=1', undefined);
  assert.equal(v1.status, 200);
  assert.equal(v1.body.total_count, undefined, 'the bare path answers the v1 shape');
  assert.ok(Array.isArray(v1.body.projects[0].runs));
  assert.equal(v1.body.next_starting_token, 1);
  const hidden = await bob.call('POST', '/public/v2/projects/paginated?actions=delete', {
    filters: [{ name: 'name', operator: 'eq', value: 'mine' }],
  });
  assert.equal(hidden.body.total_count, 0, 'a project where bob has no role is not listed');
  assert.equal((await bob.call('GET', `/projects/${pid}`)).status, 404, 'nor found');
  assert.equal((await s.call('POST', `/projects/${pid}/users`, [{ user_id: bob.user.id, role: 'viewer' }])).status, 200);
  const forBob = await bob.call('POST', '/public/v2/projects/paginated?actions=delete', {
    filters: [{ name: 'name', operator: 'eq', value: 'mine' }],
  });
  assert.equal(forBob.body.projects[0].permissions[0].allowed, false);
  assert.match(forBob.body.projects[0].permissions[0].message, /needs the owner role/);

  assert.equal((await s.call('PUT', `/projects/${pid}/bookmark`)).body.bookmark, true);
  assert.equal((await s.call('GET', `/projects/${pid}`)).body.bookmark, true);
  assert.equal((await bob.call('GET', `/projects/${pid}`)).body.bookmark, false, 'bookmarks are per user');
  const bobsBookmarks = await bob.call('POST', '/v2/projects/paginated', { filters: [{ name: 'bookmark', value: true }] });
  assert.equal(bobsBookmarks.body.total_count, 0);
  await s.call('DELETE', `/projects/${pid}/bookmark`);
  assert.equal((await s.call('GET', `/projects/${pid}`)).body.bookmark, false);

  const renamed = await s.call('PATCH', `/v2/projects/${pid}`, { name: 'ours', labels: ['sample'] });
  assert.equal(renamed.body.name, 'ours');
  assert.equal((await s.call('PUT', `/projects/${pid}`, { name: 'test-project' })).status, 409);
  assert.equal((await s.call('GET', '/projects?project_name=ours')).body[0].id, pid);

  const ls = await s.call('POST', `/projects/${pid}/log_streams`, { name: 'ls' });
  const lsId = ls.body.id;
  await s.call('POST', `/projects/${pid}/traces`, { log_stream_id: lsId, traces: [everyKindTrace('x')] });
  const search = await s.call('POST', `/v2/projects/${pid}/log_streams/search`, { include_counts: true });
  assert.deepEqual([search.body.log_streams[0].num_spans, search.body.log_streams[0].num_traces], [6, 1]);
  assert.equal((await s.call('PUT', `/projects/${pid}/log_streams/${lsId}`, { name: 'renamed' })).body.name, 'renamed');
  assert.equal((await s.call('GET', `/projects/${pid}/experiments/${lsId}`)).status, 404, 'a log stream is not an experiment');
  const del = await s.call('DELETE', `/projects/${pid}`);
  assert.equal(del.status, 200);
  assert.equal(del.body.records_deleted, 8);
  assert.equal((await s.call('GET', `/projects/${pid}`)).status, 404);
  assert.equal((await s.call('POST', `/projects/${pid}/spans/count`, { log_stream_id: lsId })).status, 404);
});

test('project members: owners share, others get 403 with the reason; permissions follow the role', async (t) => {
  const s = await startServer(t);
  const owner = await asUser(s, 'owner@test');
  const viewer = await asUser(s, 'viewer@test');
  const admin = await asUser(s, 'admin@test', 'admin');
  const pid = (await owner.call('POST', '/projects', { name: 'shared' })).body.id;
  const perms = async (who: typeof owner) =>
    (await who.call('GET', `/projects/${pid}?actions=share&actions=log_data&actions=record_human_feedback`)).body.permissions.map(
      (p: any) => `${p.action}:${p.allowed}`,
    );
  assert.equal((await viewer.call('GET', `/projects/${pid}`)).status, 404, 'no role: the project does not exist for them');
  const denied = await viewer.call('POST', `/projects/${pid}/users`, [{ user_id: viewer.user.id, role: 'owner' }]);
  assert.equal(denied.status, 404);
  assert.match(denied.body.detail, /not found/);
  const added = await owner.call('POST', `/projects/${pid}/users`, [{ user_id: viewer.user.id, role: 'viewer' }]);
  assert.equal(added.status, 200, JSON.stringify(added.body));
  assert.deepEqual(await perms(viewer), ['share:false', 'log_data:false', 'record_human_feedback:false']);
  const refused = await viewer.call('DELETE', `/projects/${pid}/users/${owner.user.id}`);
  assert.equal(refused.status, 403);
  assert.match(refused.body.detail, /needs the owner role/);
  assert.equal((await owner.call('PATCH', `/projects/${pid}/users/${viewer.user.id}`, { role: 'annotator' })).body.role, 'annotator');
  assert.deepEqual(await perms(viewer), ['share:false', 'log_data:false', 'record_human_feedback:true']);
  assert.equal(
    (await admin.call('PATCH', `/projects/${pid}/users/${viewer.user.id}`, { role: 'editor' })).status,
    200,
    'admins manage any project',
  );
  assert.deepEqual(await perms(viewer), ['share:false', 'log_data:true', 'record_human_feedback:true']);
  const list = await viewer.call('GET', `/projects/${pid}/users`);
  assert.deepEqual(
    list.body.map((m: any) => `${m.email}:${m.role}`),
    ['owner@test:owner', 'viewer@test:editor'],
  );
  issueAt(await owner.call('PATCH', `/projects/${pid}/users/${viewer.user.id}`, { role: 'boss' }), 'body.role', /'owner'/);
  assert.equal((await owner.call('DELETE', `/projects/${pid}/users/${viewer.user.id}`)).status, 200);
  assert.equal((await viewer.call('GET', `/projects/${pid}`)).status, 404, 'out again');
});
