// Guarantees: POST /v2/projects/paginated (library form) applies every filter kind and operator and
// every sort the hosted service accepts, pages exactly once through the list with a right total_count,
// counts log streams and experiments from the runs (narrowed by metric_id), lists log streams on
// request, keeps bookmarks per user, and reports permissions per role; the v1 list does the same in its
// shape.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Project, User } from '../../src/catalog/catalog.js';
import type { TraceStore } from '../../src/engine/trace-store.js';
import { InvalidRequestError } from '../../src/errors.js';
import type { ProjectFilter, ProjectFilterV1, ProjectSort, ProjectSortV1 } from '../../src/schemas/projects.js';
import { openStore } from '../support/helpers.js';
import { internalsOf } from '../../src/engine/internals.js';

interface Fixture {
  store: TraceStore;
  users: Record<'alice' | 'bob' | 'carol' | 'admin', User>;
  projects: Record<string, Project>;
  streams: Record<string, string[]>;
}

async function fixture(t: Parameters<typeof openStore>[0]): Promise<Fixture> {
  const fx = await openStore(t);
  const { store } = fx;
  await store.catalog.deleteProject(fx.projectId);
  const users = {
    alice: store.users.create({ email: 'alice@example.com', first_name: 'Alice' }),
    bob: store.users.create({ email: 'bob@example.com' }),
    carol: store.users.create({ email: 'carol@example.com' }),
    admin: store.users.create({ email: 'root@example.com', role: 'admin' }),
  };
  // name, creator, type, created, updated, log streams, experiments, metrics-testing runs
  const specs: [string, User, string, string, string, number, number, number][] = [
    ['Apollo', users.alice, 'gen_ai', '2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z', 2, 1, 0],
    ['beacon', users.bob, 'llm_monitor', '2026-01-02T00:00:00.000Z', '2026-01-03T00:00:00.000Z', 0, 2, 0],
    ['Comet', users.alice, 'prompt_evaluation', '2026-01-03T00:00:00.000Z', '2026-05-01T00:00:00.000Z', 3, 0, 1],
    ['delta', users.carol, 'gen_ai', '2026-01-04T00:00:00.000Z', '2026-01-04T00:00:00.000Z', 1, 0, 0],
  ];
  const projects: Record<string, Project> = {};
  const streams: Record<string, string[]> = {};
  for (const [name, user, type, created, updated, ls, ex, mt] of specs) {
    const p = store.createProject({ name, type, description: `${name} project`, labels: ['sample'] }, user);
    streams[name] = [];
    for (let i = 0; i < ls; i++) streams[name]!.push(store.createLogStream(p.id, `${name}-ls-${i}`, user).id);
    for (let i = 0; i < ex; i++) store.catalog.createExperiment(p.id, `${name}-exp-${i}`, user);
    for (let i = 0; i < mt; i++) store.catalog.createMetricsTestingRun(p.id, `${name}-mt-${i}`, user);
    internalsOf(store).catalog.put('projects', { ...store.catalog.getProject(p.id), created_at: created, updated_at: updated } as never);
    projects[name] = store.catalog.getProject(p.id);
  }
  // Everyone can see every project (a caller with no role in a project sees none of it); the
  // permission test below removes a membership to show what "no role" means.
  for (const p of Object.values(projects)) {
    for (const u of [users.alice, users.bob, users.carol])
      if (store.catalog.projectRole(p.id, u.id) === null) store.catalog.addProjectMember(p.id, u.id, 'viewer');
  }
  store.catalog.bookmarkProject(projects['Apollo']!.id, true, users.alice);
  store.catalog.bookmarkProject(projects['delta']!.id, true, users.alice);
  store.catalog.bookmarkProject(projects['beacon']!.id, true, users.bob);
  return { store, users, projects, streams };
}

const listNames = (store: TraceStore, filters: ProjectFilter[], user: User | null, sort: ProjectSort | null = null) =>
  store.catalog.listProjects({ filters, sort }, {}, user).projects.map((p) => p.name);

test('every v2 filter kind and operator selects exactly the expected projects', async (t) => {
  const fx = await fixture(t);
  const { alice, bob, carol } = fx.users;
  const cases: [string, ProjectFilter, string[], User?][] = [
    ['name eq (case-sensitive by default)', { name: 'name', operator: 'eq', value: 'apollo' }, []],
    ['name eq', { name: 'name', operator: 'eq', value: 'Apollo' }, ['Apollo']],
    ['name eq case-insensitive', { name: 'name', operator: 'eq', value: 'apollo', case_sensitive: false }, ['Apollo']],
    ['name ne', { name: 'name', operator: 'ne', value: 'Apollo' }, ['beacon', 'Comet', 'delta']],
    ['name contains', { name: 'name', operator: 'contains', value: 'e' }, ['beacon', 'Comet', 'delta']],
    ['name contains case-insensitive', { name: 'name', operator: 'contains', value: 'C', case_sensitive: false }, ['beacon', 'Comet']],
    ['name one_of', { name: 'name', operator: 'one_of', value: ['Comet', 'delta', 'Delta'] }, ['Comet', 'delta']],
    ['name not_in', { name: 'name', operator: 'not_in', value: ['Comet', 'delta'] }, ['Apollo', 'beacon']],
    ['creator eq (default operator)', { name: 'creator', value: alice.id } as ProjectFilter, ['Apollo', 'Comet']],
    ['creator ne', { name: 'creator', operator: 'ne', value: alice.id }, ['beacon', 'delta']],
    ['creator one_of', { name: 'creator', operator: 'one_of', value: [bob.id, carol.id] }, ['beacon', 'delta']],
    ['creator not_in', { name: 'creator', operator: 'not_in', value: [alice.id] }, ['beacon', 'delta']],
    ['creator contains', { name: 'creator', operator: 'contains', value: 'carol@' }, ['delta']],
    ['created_at eq', { name: 'created_at', operator: 'eq', value: '2026-01-02T00:00:00Z' }, ['beacon']],
    ['created_at ne', { name: 'created_at', operator: 'ne', value: '2026-01-02T00:00:00Z' }, ['Apollo', 'Comet', 'delta']],
    ['created_at gt', { name: 'created_at', operator: 'gt', value: '2026-01-02T00:00:00Z' }, ['Comet', 'delta']],
    ['created_at gte', { name: 'created_at', operator: 'gte', value: '2026-01-02T00:00:00Z' }, ['beacon', 'Comet', 'delta']],
    ['created_at lt', { name: 'created_at', operator: 'lt', value: '2026-01-02T00:00:00Z' }, ['Apollo']],
    ['created_at lte', { name: 'created_at', operator: 'lte', value: '2026-01-02T00:00:00Z' }, ['Apollo', 'beacon']],
    ['updated_at eq', { name: 'updated_at', operator: 'eq', value: '2026-02-01T00:00:00Z' }, ['Apollo']],
    ['updated_at ne', { name: 'updated_at', operator: 'ne', value: '2026-02-01T00:00:00Z' }, ['beacon', 'Comet', 'delta']],
    ['updated_at gt', { name: 'updated_at', operator: 'gt', value: '2026-01-04T00:00:00Z' }, ['Apollo', 'Comet']],
    ['updated_at gte', { name: 'updated_at', operator: 'gte', value: '2026-01-04T00:00:00Z' }, ['Apollo', 'Comet', 'delta']],
    ['updated_at lt', { name: 'updated_at', operator: 'lt', value: '2026-01-04T00:00:00Z' }, ['beacon']],
    ['updated_at lte', { name: 'updated_at', operator: 'lte', value: '2026-01-04T00:00:00Z' }, ['beacon', 'delta']],
    ['num_logstreams eq', { name: 'num_logstreams', operator: 'eq', value: 2 }, ['Apollo']],
    ['num_logstreams ne', { name: 'num_logstreams', operator: 'ne', value: 0 }, ['Apollo', 'Comet', 'delta']],
    ['num_logstreams gt', { name: 'num_logstreams', operator: 'gt', value: 1 }, ['Apollo', 'Comet']],
    ['num_logstreams gte', { name: 'num_logstreams', operator: 'gte', value: 1 }, ['Apollo', 'Comet', 'delta']],
    ['num_logstreams lt', { name: 'num_logstreams', operator: 'lt', value: 2 }, ['beacon', 'delta']],
    ['num_logstreams lte', { name: 'num_logstreams', operator: 'lte', value: 2 }, ['Apollo', 'beacon', 'delta']],
    ['num_logstreams between', { name: 'num_logstreams', operator: 'between', value: [1, 2] }, ['Apollo', 'delta']],
    ['num_experiments eq', { name: 'num_experiments', operator: 'eq', value: 2 }, ['beacon']],
    ['num_experiments ne', { name: 'num_experiments', operator: 'ne', value: 0 }, ['Apollo', 'beacon']],
    ['num_experiments gt', { name: 'num_experiments', operator: 'gt', value: 0.5 }, ['Apollo', 'beacon']],
    ['num_experiments gte', { name: 'num_experiments', operator: 'gte', value: 2 }, ['beacon']],
    ['num_experiments lt', { name: 'num_experiments', operator: 'lt', value: 1 }, ['Comet', 'delta']],
    ['num_experiments lte', { name: 'num_experiments', operator: 'lte', value: 1 }, ['Apollo', 'Comet', 'delta']],
    ['num_experiments between', { name: 'num_experiments', operator: 'between', value: [1, 5] }, ['Apollo', 'beacon']],
    ['bookmark true (alice)', { name: 'bookmark', value: true }, ['Apollo', 'delta']],
    ['bookmark false (alice)', { name: 'bookmark', value: false }, ['beacon', 'Comet']],
    ['bookmark true (bob)', { name: 'bookmark', value: true }, ['beacon'], bob],
  ];
  assert.equal(new Set(cases.map(([, f]) => f.name)).size, 7, 'every filter kind is exercised');
  for (const [label, filter, expected, user] of cases) {
    const page = fx.store.catalog.listProjects({ filters: [filter] }, {}, user ?? alice);
    assert.deepEqual(new Set(page.projects.map((p) => p.name)), new Set(expected), label);
    assert.equal(page.total_count, expected.length, `${label}: total_count`);
    assert.ok(expected.length < 4, `${label}: excludes something`);
  }
  const both = fx.store.catalog.listProjects(
    { filters: [{ name: 'creator', value: alice.id } as ProjectFilter, { name: 'num_logstreams', operator: 'gt', value: 2 }] },
    {},
    alice,
  );
  assert.deepEqual(
    both.projects.map((p) => p.name),
    ['Comet'],
    'filters are ANDed',
  );
});

test('every v2 sort, default newest first; paging walks once with a steady total_count', async (t) => {
  const fx = await fixture(t);
  const u = fx.users.alice;
  const sorts: [ProjectSort | null, string[]][] = [
    [null, ['delta', 'Comet', 'beacon', 'Apollo']],
    [{ name: 'name' }, ['Apollo', 'beacon', 'Comet', 'delta']],
    [{ name: 'name', ascending: false, sort_type: 'column' }, ['delta', 'Comet', 'beacon', 'Apollo']],
    [{ name: 'created_at' }, ['Apollo', 'beacon', 'Comet', 'delta']],
    [{ name: 'created_at', ascending: false }, ['delta', 'Comet', 'beacon', 'Apollo']],
    [{ name: 'updated_at' }, ['beacon', 'delta', 'Apollo', 'Comet']],
    [{ name: 'updated_at', ascending: false }, ['Comet', 'Apollo', 'delta', 'beacon']],
    [{ name: 'num_logstreams' }, ['beacon', 'delta', 'Apollo', 'Comet']],
    [{ name: 'num_logstreams', ascending: false }, ['Comet', 'Apollo', 'delta', 'beacon']],
    [{ name: 'num_experiments', ascending: false }, ['beacon', 'Apollo', 'Comet', 'delta']],
    [{ name: 'num_experiments' }, ['Comet', 'delta', 'Apollo', 'beacon']],
  ];
  for (const [sort, want] of sorts) assert.deepEqual(listNames(fx.store, [], u, sort), want, JSON.stringify(sort));
  for (const filters of [[], [{ name: 'num_logstreams', operator: 'gte', value: 1 }]] as ProjectFilter[][]) {
    const seen: string[] = [];
    let token: number | null = 0;
    const totals = new Set<number>();
    while (token !== null) {
      const page = fx.store.catalog.listProjects({ filters, sort: { name: 'name' } }, { starting_token: token, limit: 2 }, u);
      totals.add(page.total_count);
      seen.push(...page.projects.map((p) => p.name));
      token = page.next_starting_token;
    }
    assert.deepEqual([...totals], [filters.length ? 3 : 4]);
    assert.equal(seen.length, new Set(seen).size);
    assert.equal(seen.length, filters.length ? 3 : 4);
  }
});

test('run counts are counted (also after deletes); include_logstreams and metric_id narrow log streams', async (t) => {
  const fx = await fixture(t);
  const { store } = fx;
  const item = (name: string, query = {}) =>
    store.catalog.listProjects({ filters: [{ name: 'name', operator: 'eq', value: name }] }, query).projects[0]!;
  assert.equal(item('Apollo').num_logstreams, 2);
  assert.equal(item('Apollo').num_experiments, 1);
  assert.equal(item('Comet').num_logstreams, 3, 'metrics-testing runs are neither streams nor experiments');
  assert.equal(item('Apollo').log_streams, undefined, 'log streams only on request');
  assert.deepEqual(
    item('Apollo', { include_logstreams: true }).log_streams!.map((s) => s.name),
    ['Apollo-ls-0', 'Apollo-ls-1'],
  );
  await store.catalog.deleteRun(fx.projects['Comet']!.id, fx.streams['Comet']![0]!);
  assert.equal(item('Comet').num_logstreams, 2);
  store.createLogStream(fx.projects['beacon']!.id, 'new');
  assert.equal(item('beacon').num_logstreams, 1);

  const metric = store.catalog.listScorers({ filters: [{ name: 'name', operator: 'eq', value: 'completeness' }] }).scorers[0]!.id;
  store.catalog.setRunScorerSettings(fx.projects['Apollo']!.id, fx.streams['Apollo']![1]!, { scorers: [{ id: metric }] });
  store.catalog.setRunScorerSettings(fx.projects['Comet']!.id, fx.streams['Comet']![1]!, { scorers: [{ name: 'bleu' }, { id: metric }] });
  store.catalog.setRunScorerSettings(fx.projects['Comet']!.id, fx.streams['Comet']![2]!, { scorers: [{ id: metric }] });
  const narrowed = store.catalog.listProjects({ sort: { name: 'name' } }, { metric_id: metric, include_logstreams: true });
  assert.deepEqual(
    narrowed.projects.map((p) => [p.name, p.num_logstreams, p.log_streams!.length]),
    [
      ['Apollo', 1, 1],
      ['beacon', 0, 0],
      ['Comet', 2, 2],
      ['delta', 0, 0],
    ],
  );
  assert.deepEqual(
    narrowed.projects[0]!.log_streams!.map((s) => s.name),
    ['Apollo-ls-1'],
  );
  assert.equal(narrowed.projects[0]!.num_experiments, 1, 'experiments are not narrowed');
  const filtered = store.catalog.listProjects({ filters: [{ name: 'num_logstreams', operator: 'gte', value: 2 }] }, { metric_id: metric });
  assert.deepEqual(
    filtered.projects.map((p) => p.name),
    ['Comet'],
    'the num_logstreams filter sees the narrowed count',
  );
});

test('permissions change with the role of the caller and with the actions asked', async (t) => {
  const fx = await fixture(t);
  const { store, users } = fx;
  const apollo = fx.projects['Apollo']!.id;
  const actions = ['delete', 'share', 'update', 'log_data', 'record_human_feedback'] as const;
  const allowed = (user: User, asked: readonly (typeof actions)[number][] = actions) => {
    const p = store.catalog.listProjects({ filters: [{ name: 'name', operator: 'eq', value: 'Apollo' }] }, { actions: asked }, user)
      .projects[0]!;
    return p.permissions.filter((x) => x.allowed).map((x) => x.action);
  };
  assert.deepEqual(allowed(users.alice), [...actions], 'the creator owns the project');
  assert.equal(store.catalog.projectRole(apollo, users.alice.id), 'owner');
  store.catalog.removeProjectMember(apollo, users.bob.id);
  assert.equal(
    store.catalog.listProjects({ filters: [{ name: 'name', operator: 'eq', value: 'Apollo' }] }, {}, users.bob).projects.length,
    0,
    'no role: the project is not even listed',
  );
  const msg = store.catalog.projectPermissions(apollo, users.bob, ['log_data'])[0]!;
  assert.match(msg.message!, /no role in project "Apollo"/);
  store.catalog.addProjectMember(apollo, users.bob.id, 'viewer');
  assert.deepEqual(allowed(users.bob), []);
  assert.match(store.catalog.projectPermissions(apollo, users.bob, ['log_data'])[0]!.message!, /needs the editor role.*you are a viewer/);
  store.catalog.addProjectMember(apollo, users.bob.id, 'annotator');
  assert.deepEqual(allowed(users.bob), ['record_human_feedback']);
  store.catalog.addProjectMember(apollo, users.bob.id, 'editor');
  assert.deepEqual(allowed(users.bob), ['update', 'log_data', 'record_human_feedback']);
  assert.match(store.catalog.projectPermissions(apollo, users.bob, ['delete'])[0]!.message!, /needs the owner role.*you are an editor/);
  store.catalog.addProjectMember(apollo, users.bob.id, 'owner');
  assert.deepEqual(allowed(users.bob), [...actions]);
  store.catalog.removeProjectMember(apollo, users.bob.id);
  assert.equal(
    store.catalog.listProjects({}, {}, users.bob).projects.some((p) => p.name === 'Apollo'),
    false,
    'out again',
  );
  assert.deepEqual(allowed(users.admin), [...actions], 'admins may do everything');
  assert.deepEqual(allowed(users.alice, ['share']), ['share'], 'only the actions asked are evaluated');
  assert.deepEqual(
    store.catalog
      .listProjectMembers(apollo)
      .map((m) => [m.email, m.role])
      .sort(),
    [
      ['alice@example.com', 'owner'],
      ['carol@example.com', 'viewer'],
    ],
  );
  assert.throws(() => store.catalog.authorize(apollo, 'delete', users.carol), /needs the owner role/);
  store.catalog.removeProjectMember(apollo, users.carol.id);
  assert.throws(() => store.catalog.authorize(apollo, 'delete', users.carol), /no role/);
  assert.doesNotThrow(() => store.catalog.authorize(apollo, 'delete', users.alice));
});

test('project changes: rename, describe, label, bookmark per user, delete with everything in it', async (t) => {
  const fx = await fixture(t);
  const { store, users } = fx;
  const apollo = fx.projects['Apollo']!;
  const renamed = store.catalog.updateProject(apollo.id, { name: 'Apollo 11', description: 'moon', labels: ['sample', 'x'] }, users.alice);
  assert.equal(renamed.name, 'Apollo 11');
  assert.ok(renamed.updated_at > apollo.updated_at);
  assert.throws(() => store.catalog.renameProject(apollo.id, 'beacon'), /already exists/);
  assert.equal(store.catalog.describeProject(apollo.id, users.alice).bookmark, true);
  assert.equal(store.catalog.describeProject(apollo.id, users.bob).bookmark, false, 'bookmarks are per user');
  store.catalog.updateProject(apollo.id, { bookmark: false }, users.alice);
  assert.equal(store.catalog.describeProject(apollo.id, users.alice).bookmark, false);

  const [ls0, ls1] = fx.streams['Apollo']!;
  const trace = {
    name: 't',
    input: 'q',
    output: 'a',
    spans: [{ type: 'llm', input: [{ role: 'user', content: 'hi' }], output: { role: 'assistant', content: 'yo' } }],
  };
  await store.logTraces(apollo.id, { log_stream_id: ls0!, traces: [trace, trace] } as never);
  await store.logTraces(apollo.id, { log_stream_id: ls1!, traces: [trace] } as never);
  const comet = fx.projects['Comet']!;
  await store.logTraces(comet.id, { log_stream_id: fx.streams['Comet']![0]!, traces: [trace] } as never);
  store.catalog.addProjectMember(apollo.id, users.bob.id, 'editor');
  const scoped = store.catalog.createScorer({ name: 'apollo-only', scope_projects: [{ id: apollo.id }, { id: comet.id }] });
  store.catalog.setRunScorerSettings(apollo.id, ls0!, { scorers: [{ name: 'bleu' }] });

  const { records_deleted } = await store.catalog.deleteProject(apollo.id);
  assert.equal(records_deleted, 9, '3 sessions, 3 traces, 3 spans');
  assert.throws(() => store.catalog.getProject(apollo.id), /not found/);
  assert.deepEqual(
    store.catalog.listProjects({ sort: { name: 'name' } }).projects.map((p) => p.name),
    ['beacon', 'Comet', 'delta'],
  );
  assert.equal(
    internalsOf(store)
      .catalog.table('runs')
      .filter((r: any) => r.project_id === apollo.id).length,
    0,
  );
  assert.equal(
    internalsOf(store)
      .catalog.table('project_members')
      .filter((m: any) => m.project_id === apollo.id).length,
    0,
  );
  assert.equal(
    internalsOf(store)
      .catalog.table('bookmarks')
      .filter((b: any) => b.project_id === apollo.id).length,
    0,
  );
  assert.equal(internalsOf(store).catalog.get('run_scorer_settings', ls0!), undefined);
  assert.deepEqual(
    store.catalog.getScorer(scoped.id).scope_projects.map((p) => p.name),
    ['Comet'],
  );
  const other = await store.count('span', comet.id, { log_stream_id: fx.streams['Comet']![0]! });
  assert.equal(other.total_count, 1, 'other projects keep their records');
  const again = store.createProject({ name: 'Apollo 11' });
  assert.equal(store.listRuns(again.id).length, 0, 'the name is free and the new project starts empty');
});

test('the v1 list: its filters, sorts and ProjectDB items', async (t) => {
  const fx = await fixture(t);
  const { store, users } = fx;
  const v1 = (filters: ProjectFilterV1[], sort: ProjectSortV1 | null = null) =>
    store.catalog.listProjectsV1({ filters, sort }, {}, users.alice).projects.map((p) => p.name);
  const cases: [ProjectFilterV1, string[]][] = [
    [{ name: 'id', value: fx.projects['beacon']!.id } as ProjectFilterV1, ['beacon']],
    [{ name: 'id', operator: 'not_in', value: [fx.projects['beacon']!.id] }, ['Apollo', 'Comet', 'delta']],
    [{ name: 'name', operator: 'contains', value: 'o' }, ['Apollo', 'beacon', 'Comet']],
    [{ name: 'type', operator: 'eq', value: 'gen_ai' }, ['Apollo', 'delta']],
    [{ name: 'type', operator: 'ne', value: 'gen_ai' }, ['beacon', 'Comet']],
    [{ name: 'type', operator: 'one_of', value: ['llm_monitor', 'protect'] }, ['beacon']],
    [{ name: 'type', operator: 'not_in', value: ['llm_monitor'] }, ['Apollo', 'Comet', 'delta']],
    [{ name: 'creator', operator: 'eq', value: users.carol.id }, ['delta']],
    [{ name: 'created_at', operator: 'gte', value: '2026-01-03T00:00:00Z' }, ['Comet', 'delta']],
    [{ name: 'updated_at', operator: 'lt', value: '2026-02-01T00:00:00Z' }, ['beacon', 'delta']],
    [{ name: 'runs', operator: 'eq', value: 4 }, ['Comet']],
    [{ name: 'runs', operator: 'between', value: [2, 3] }, ['Apollo', 'beacon']],
    [{ name: 'bookmark', value: true }, ['Apollo', 'delta']],
  ];
  for (const [f, want] of cases) assert.deepEqual(new Set(v1([f])), new Set(want), JSON.stringify(f));
  assert.deepEqual(v1([], { name: 'type' }), ['Apollo', 'delta', 'beacon', 'Comet']);
  assert.deepEqual(v1([], { name: 'runs', ascending: false, sort_type: 'custom' }), ['Comet', 'Apollo', 'beacon', 'delta']);
  assert.deepEqual(v1([], { name: 'bookmark', ascending: false }), ['Apollo', 'delta', 'beacon', 'Comet']);
  assert.deepEqual(v1([], { name: 'updated_at' }), ['beacon', 'delta', 'Apollo', 'Comet']);
  const page = store.catalog.listProjectsV1({}, { limit: 3, actions: ['delete'] }, users.alice);
  assert.equal(page.next_starting_token, 3);
  assert.equal('total_count' in page, false, 'v1 has no total_count');
  const comet = page.projects.find((p) => p.name === 'Comet')!;
  assert.equal(comet.runs.length, 4);
  assert.equal(comet.type, 'prompt_evaluation');
  assert.deepEqual(comet.permissions, [{ action: 'delete', allowed: true, message: null }]);
  assert.throws(
    () => store.catalog.listProjectsV1({ filters: [{ name: 'num_logstreams', operator: 'eq', value: 1 } as never] }),
    InvalidRequestError,
    'v2 filters are not v1 filters',
  );
});
