// Guarantees: every scorer filter kind and operator the hosted service accepts selects exactly the
// expected scorers (each one excludes something), every sort orders as documented, paging walks the
// whole catalog once, and permissions follow the caller and the actions asked for.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { User } from '../../src/catalog/catalog.js';
import type { ScorerRow } from '../../src/catalog/scorer-row.js';
import type { TraceStore } from '../../src/engine/trace-store.js';
import { InvalidRequestError } from '../../src/errors.js';
import type { ScorerFilter, ScorerSort } from '../../src/schemas/scorers.js';
import { ROOT } from '../../scripts/binary/config.js';
import { openStore } from '../support/helpers.js';
import { internalsOf } from '../../src/engine/internals.js';

const PRESETS = JSON.parse(readFileSync(join(ROOT, 'data', 'scorers', 'presets.json'), 'utf8')) as {
  name: string;
  model_type: string | null;
  multimodal_capabilities: string[];
}[];
const REGISTERED: ScorerFilter = { name: 'scorer_type', operator: 'ne', value: 'preset' };

interface Fixture {
  store: TraceStore;
  users: Record<'alice' | 'bob' | 'carol' | 'admin', User>;
  ids: Record<string, string>;
  p1: string;
  p2: string;
  runP1: string;
}

/** Five registered scorers that differ in every filtered field, with fixed timestamps. */
async function fixture(t: Parameters<typeof openStore>[0]): Promise<Fixture> {
  const { store } = await openStore(t);
  const users = {
    alice: store.users.create({ email: 'alice@example.com' }),
    bob: store.users.create({ email: 'bob@example.com' }),
    carol: store.users.create({ email: 'carol@example.com' }),
    admin: store.users.create({ email: 'root@example.com', role: 'admin' }),
  };
  const p1 = store.createProject({ name: 'P1' }, users.alice).id;
  const p2 = store.createProject({ name: 'P2' }, users.bob).id;
  const runP1 = store.createLogStream(p1, 'stream').id;
  // Every user may see both projects, so the scoped scorers are visible to all of them.
  for (const p of [p1, p2])
    for (const u of [users.alice, users.bob, users.carol])
      if (store.catalog.projectRole(p, u.id) === null) store.catalog.addProjectMember(p, u.id, 'viewer');
  const specs: [string, Record<string, unknown>, User, string, string][] = [
    [
      'Alpha',
      {
        scorer_type: 'llm',
        model_type: 'llm',
        tags: ['safety', 'Tone'],
        label: 'Brand Tone',
        scoreable_node_types: ['llm', 'chat'],
        multimodal_capabilities: [],
      },
      users.alice,
      '2026-01-01T00:00:00.000Z',
      '2026-03-01T00:00:00.000Z',
    ],
    [
      'beta',
      {
        scorer_type: 'code',
        model_type: 'code',
        tags: ['rag'],
        label: 'beta-score',
        scoreable_node_types: ['retriever'],
        multimodal_capabilities: ['vision'],
        scope_projects: [{ id: p1 }],
      },
      users.bob,
      '2026-01-02T00:00:00.000Z',
      '2026-01-02T00:00:00.000Z',
    ],
    [
      'Gamma',
      {
        scorer_type: 'llm',
        model_type: 'slm',
        tags: ['safety'],
        label: 'Gamma Ray',
        scoreable_node_types: ['llm'],
        multimodal_capabilities: ['audio', 'vision'],
        scope_projects: [{ id: p2 }],
      },
      users.alice,
      '2026-01-03T00:00:00.000Z',
      '2026-02-01T00:00:00.000Z',
    ],
    [
      'delta',
      { scorer_type: 'code', model_type: null, tags: [], label: '', scoreable_node_types: null, multimodal_capabilities: [] },
      users.bob,
      '2026-01-04T00:00:00.000Z',
      '2026-01-05T00:00:00.000Z',
    ],
    [
      'epsilon',
      {
        scorer_type: 'llm',
        model_type: 'llm',
        tags: ['rag', 'safety'],
        label: 'Context-Adhérence',
        scoreable_node_types: ['trace'],
        multimodal_capabilities: [],
        scope_projects: [{ id: p1 }, { id: p2 }],
      },
      users.carol,
      '2026-01-05T00:00:00.000Z',
      '2026-04-01T00:00:00.000Z',
    ],
  ];
  const ids: Record<string, string> = {};
  for (const [name, body, user, created, updated] of specs) {
    const s = store.catalog.createScorer({ name, ...body } as never, user);
    ids[name] = s.id;
    const row = internalsOf(store).catalog.get<ScorerRow>('scorers', s.id)!;
    internalsOf(store).catalog.put('scorers', { ...row, created_at: created, updated_at: updated } as never);
  }
  return { store, users, ids, p1, p2, runP1 };
}

function names(store: TraceStore, filters: ScorerFilter[], sort: ScorerSort | null = null, user: User | null = null): string[] {
  return store.catalog.listScorers({ filters, sort }, { limit: 1000 }, user).scorers.map((s) => s.name);
}

test('every filter kind and operator selects exactly the expected registered scorers', async (t) => {
  const fx = await fixture(t);
  const { alice, bob, carol } = fx.users;
  const all = ['Alpha', 'beta', 'Gamma', 'delta', 'epsilon'];
  const cases: [string, ScorerFilter, string[]][] = [
    ['name eq (case-insensitive by default)', { name: 'name', operator: 'eq', value: 'ALPHA' }, ['Alpha']],
    ['name eq case_sensitive', { name: 'name', operator: 'eq', value: 'alpha', case_sensitive: true }, []],
    ['name ne', { name: 'name', operator: 'ne', value: 'alpha' }, ['beta', 'Gamma', 'delta', 'epsilon']],
    ['name contains', { name: 'name', operator: 'contains', value: 'MM' }, ['Gamma']],
    ['name one_of', { name: 'name', operator: 'one_of', value: ['BETA', 'delta', 'nope'] }, ['beta', 'delta']],
    ['name not_in', { name: 'name', operator: 'not_in', value: ['beta', 'DELTA'] }, ['Alpha', 'Gamma', 'epsilon']],
    ['scorer_type eq', { name: 'scorer_type', operator: 'eq', value: 'code' }, ['beta', 'delta']],
    ['scorer_type ne', { name: 'scorer_type', operator: 'ne', value: 'code' }, ['Alpha', 'Gamma', 'epsilon']],
    ['scorer_type one_of', { name: 'scorer_type', operator: 'one_of', value: ['llm', 'luna'] }, ['Alpha', 'Gamma', 'epsilon']],
    ['scorer_type not_in', { name: 'scorer_type', operator: 'not_in', value: ['llm'] }, ['beta', 'delta']],
    ['model_type eq', { name: 'model_type', operator: 'eq', value: 'slm' }, ['Gamma']],
    ['model_type ne (null is not llm)', { name: 'model_type', operator: 'ne', value: 'llm' }, ['beta', 'Gamma', 'delta']],
    ['model_type one_of', { name: 'model_type', operator: 'one_of', value: ['code', 'slm'] }, ['beta', 'Gamma']],
    ['model_type not_in', { name: 'model_type', operator: 'not_in', value: ['llm', 'code'] }, ['Gamma', 'delta']],
    ['tags eq is set equality', { name: 'tags', operator: 'eq', value: ['safety', 'rag'] }, ['epsilon']],
    ['tags eq one string', { name: 'tags', operator: 'eq', value: 'rag' }, ['beta']],
    ['tags contains', { name: 'tags', operator: 'contains', value: 'safety' }, ['Alpha', 'Gamma', 'epsilon']],
    ['tags contains every listed', { name: 'tags', operator: 'contains', value: ['rag', 'safety'] }, ['epsilon']],
    ['tags one_of (case-sensitive by default)', { name: 'tags', operator: 'one_of', value: ['tone', 'rag'] }, ['beta', 'epsilon']],
    ['tags one_of case-insensitive', { name: 'tags', operator: 'one_of', value: ['tone'], case_sensitive: false }, ['Alpha']],
    ['tags not_in', { name: 'tags', operator: 'not_in', value: ['safety'] }, ['beta', 'delta']],
    ['creator eq (default operator)', { name: 'creator', value: alice.id } as ScorerFilter, ['Alpha', 'Gamma']],
    ['creator ne', { name: 'creator', operator: 'ne', value: alice.id.toUpperCase() }, ['beta', 'delta', 'epsilon']],
    ['creator one_of', { name: 'creator', operator: 'one_of', value: [alice.id, carol.id] }, ['Alpha', 'Gamma', 'epsilon']],
    ['creator not_in', { name: 'creator', operator: 'not_in', value: [bob.id] }, ['Alpha', 'Gamma', 'epsilon']],
    ['creator contains (email)', { name: 'creator', operator: 'contains', value: 'CAROL@' }, ['epsilon']],
    ['creator contains (id)', { name: 'creator', operator: 'contains', value: bob.id.slice(0, 13) }, ['beta', 'delta']],
    ['created_at eq (any offset)', { name: 'created_at', operator: 'eq', value: '2026-01-03T01:00:00+01:00' }, ['Gamma']],
    ['created_at ne', { name: 'created_at', operator: 'ne', value: '2026-01-03T00:00:00Z' }, ['Alpha', 'beta', 'delta', 'epsilon']],
    ['created_at gt', { name: 'created_at', operator: 'gt', value: '2026-01-03T00:00:00Z' }, ['delta', 'epsilon']],
    ['created_at gte', { name: 'created_at', operator: 'gte', value: '2026-01-03T00:00:00Z' }, ['Gamma', 'delta', 'epsilon']],
    ['created_at lt', { name: 'created_at', operator: 'lt', value: '2026-01-03T00:00:00Z' }, ['Alpha', 'beta']],
    ['created_at lte', { name: 'created_at', operator: 'lte', value: '2026-01-03T00:00:00Z' }, ['Alpha', 'beta', 'Gamma']],
    ['updated_at eq', { name: 'updated_at', operator: 'eq', value: '2026-02-01T00:00:00.000Z' }, ['Gamma']],
    ['updated_at ne', { name: 'updated_at', operator: 'ne', value: '2026-02-01T00:00:00.000Z' }, ['Alpha', 'beta', 'delta', 'epsilon']],
    ['updated_at gt', { name: 'updated_at', operator: 'gt', value: '2026-02-01T00:00:00Z' }, ['Alpha', 'epsilon']],
    ['updated_at gte', { name: 'updated_at', operator: 'gte', value: '2026-02-01T00:00:00Z' }, ['Alpha', 'Gamma', 'epsilon']],
    ['updated_at lt', { name: 'updated_at', operator: 'lt', value: '2026-02-01T00:00:00Z' }, ['beta', 'delta']],
    ['updated_at lte', { name: 'updated_at', operator: 'lte', value: '2026-02-01T00:00:00Z' }, ['beta', 'Gamma', 'delta']],
    ['label eq (case-sensitive, strict by default)', { name: 'label', operator: 'eq', value: 'brand tone' }, []],
    ['label eq case-insensitive', { name: 'label', operator: 'eq', value: 'brand tone', case_sensitive: false }, ['Alpha']],
    [
      'label eq not strict ignores case, accents, punctuation',
      { name: 'label', operator: 'eq', value: 'context adherence', strict: false },
      ['epsilon'],
    ],
    ['label ne', { name: 'label', operator: 'ne', value: '' }, ['Alpha', 'beta', 'Gamma', 'epsilon']],
    ['label contains', { name: 'label', operator: 'contains', value: 'Ray' }, ['Gamma']],
    ['label contains not strict', { name: 'label', operator: 'contains', value: 'BETA SCORE', strict: false }, ['beta']],
    ['label one_of', { name: 'label', operator: 'one_of', value: ['Gamma Ray', 'beta-score'] }, ['beta', 'Gamma']],
    ['label not_in', { name: 'label', operator: 'not_in', value: ['', 'Brand Tone'] }, ['beta', 'Gamma', 'epsilon']],
    ['scoreable_node_types eq', { name: 'scoreable_node_types', operator: 'eq', value: 'llm' }, ['Gamma']],
    [
      'scoreable_node_types eq case-insensitive',
      { name: 'scoreable_node_types', operator: 'eq', value: ['LLM', 'Chat'], case_sensitive: false },
      ['Alpha'],
    ],
    ['scoreable_node_types contains', { name: 'scoreable_node_types', operator: 'contains', value: 'llm' }, ['Alpha', 'Gamma']],
    [
      'scoreable_node_types one_of',
      { name: 'scoreable_node_types', operator: 'one_of', value: ['retriever', 'trace'] },
      ['beta', 'epsilon'],
    ],
    ['scoreable_node_types not_in', { name: 'scoreable_node_types', operator: 'not_in', value: ['llm'] }, ['beta', 'delta', 'epsilon']],
    ['multimodal eq', { name: 'multimodal_capabilities', operator: 'eq', value: ['vision', 'audio'] }, ['Gamma']],
    ['multimodal contains', { name: 'multimodal_capabilities', operator: 'contains', value: 'vision' }, ['beta', 'Gamma']],
    [
      'multimodal contains text = text only',
      { name: 'multimodal_capabilities', operator: 'contains', value: 'text' },
      ['Alpha', 'delta', 'epsilon'],
    ],
    [
      'multimodal one_of with text',
      { name: 'multimodal_capabilities', operator: 'one_of', value: ['text', 'audio'] },
      ['Alpha', 'Gamma', 'delta', 'epsilon'],
    ],
    ['multimodal not_in', { name: 'multimodal_capabilities', operator: 'not_in', value: ['vision'] }, ['Alpha', 'delta', 'epsilon']],
    ['id eq (default operator)', { name: 'id', value: fx.ids['beta']! } as ScorerFilter, ['beta']],
    ['id ne', { name: 'id', operator: 'ne', value: fx.ids['beta']! }, ['Alpha', 'Gamma', 'delta', 'epsilon']],
    ['id one_of', { name: 'id', operator: 'one_of', value: [fx.ids['beta']!, fx.ids['delta']!.toUpperCase()] }, ['beta', 'delta']],
    ['id not_in', { name: 'id', operator: 'not_in', value: [fx.ids['beta']!, fx.ids['delta']!] }, ['Alpha', 'Gamma', 'epsilon']],
    ['id contains', { name: 'id', operator: 'contains', value: fx.ids['Gamma']!.slice(9, 23) }, ['Gamma']],
    ['is_global eq', { name: 'is_global', operator: 'eq', value: true }, ['Alpha', 'delta']],
    ['is_global ne', { name: 'is_global', operator: 'ne', value: true }, ['beta', 'Gamma', 'epsilon']],
    ['scope_projects', { name: 'scope_projects', project_ids: [fx.p1] }, ['beta', 'epsilon']],
    [
      'scope_projects include_global',
      { name: 'scope_projects', project_ids: [fx.p2], include_global: true },
      ['Alpha', 'Gamma', 'delta', 'epsilon'],
    ],
    ['exclude_slm_scorers keeps null model_type', { name: 'exclude_slm_scorers' }, ['Alpha', 'beta', 'delta', 'epsilon']],
    ['exclude_multimodal_scorers', { name: 'exclude_multimodal_scorers' }, ['Alpha', 'delta', 'epsilon']],
  ];
  const kinds = new Set(cases.map(([, f]) => f.name));
  assert.equal(kinds.size, 15, 'every filter kind is exercised');
  for (const [label, filter, expected] of cases) {
    const got = names(fx.store, [REGISTERED, filter]);
    assert.deepEqual(new Set(got), new Set(expected), label);
    assert.equal(got.length, expected.length, `${label}: no duplicates`);
    assert.ok(got.length < all.length, `${label}: excludes something`);
  }
});

test('filters over the presets: slm and multimodal exclusions, the text rule, global scope', async (t) => {
  const fx = await fixture(t);
  const presetNames = (pred: (p: (typeof PRESETS)[number]) => boolean) => new Set(PRESETS.filter(pred).map((p) => p.name));
  const only = (filters: ScorerFilter[]) =>
    new Set(names(fx.store, [{ name: 'scorer_type', operator: 'eq', value: 'preset' }, ...filters]));
  assert.equal(only([]).size, PRESETS.length);
  assert.deepEqual(
    only([{ name: 'exclude_slm_scorers' }]),
    presetNames((p) => p.model_type !== 'slm'),
  );
  assert.deepEqual(
    only([{ name: 'exclude_multimodal_scorers' }]),
    presetNames((p) => p.multimodal_capabilities.length === 0),
  );
  assert.deepEqual(
    only([{ name: 'multimodal_capabilities', operator: 'one_of', value: ['text'] }]),
    presetNames((p) => p.multimodal_capabilities.length === 0),
  );
  assert.deepEqual(
    only([{ name: 'multimodal_capabilities', operator: 'contains', value: 'audio' }]),
    presetNames((p) => p.multimodal_capabilities.includes('audio')),
  );
  assert.equal(only([{ name: 'scope_projects', project_ids: [fx.p1] }]).size, 0, 'presets are global, not scoped');
  assert.equal(only([{ name: 'scope_projects', project_ids: [fx.p1], include_global: true }]).size, PRESETS.length);
  // The official client's own request (getScorers({type, names}): a scorer_type eq and a name one_of filter).
  assert.deepEqual(
    names(fx.store, [
      { name: 'scorer_type', value: 'preset', operator: 'eq' },
      { name: 'name', value: ['correctness', 'completeness'], operator: 'one_of' },
    ]),
    ['completeness', 'correctness'],
  );
});

test('every sort orders as documented and changes the order', async (t) => {
  const fx = await fixture(t);
  fx.store.catalog.setRunScorerSettings(fx.p1, fx.runP1, { scorers: [{ id: fx.ids['epsilon']! }, { name: 'beta' }] });
  const sorted = (sort: ScorerSort | null) => names(fx.store, [REGISTERED], sort);
  const byDefault = sorted(null);
  const expected: [ScorerSort | null, string[]][] = [
    [null, ['Alpha', 'beta', 'delta', 'epsilon', 'Gamma']],
    [{ name: 'name' }, ['Alpha', 'beta', 'delta', 'epsilon', 'Gamma']],
    [{ name: 'name', ascending: false }, ['Gamma', 'epsilon', 'delta', 'beta', 'Alpha']],
    [{ name: 'updated_at', sort_type: 'column' }, ['beta', 'delta', 'Gamma', 'Alpha', 'epsilon']],
    [{ name: 'updated_at', ascending: false }, ['epsilon', 'Alpha', 'Gamma', 'delta', 'beta']],
    [{ name: 'enabled_in_run', value: fx.runP1 }, ['Alpha', 'delta', 'Gamma', 'beta', 'epsilon']],
    [
      { name: 'enabled_in_run', value: fx.runP1, ascending: false, sort_type: 'custom_uuid' },
      ['beta', 'epsilon', 'Alpha', 'delta', 'Gamma'],
    ],
    [{ name: 'enabled_in_playground', value: fx.runP1, ascending: false }, ['beta', 'epsilon', 'Alpha', 'delta', 'Gamma']],
  ];
  for (const [sort, want] of expected) {
    const got = sorted(sort);
    assert.deepEqual(got, want, JSON.stringify(sort));
    if (sort !== null && !(sort.name === 'name' && sort.ascending !== false))
      assert.notDeepEqual(got, byDefault, `${JSON.stringify(sort)} changes the order`);
  }
});

test('paging from the query string walks every scorer exactly once', async (t) => {
  const fx = await fixture(t);
  const total = PRESETS.length + 5;
  for (const sort of [
    null,
    { name: 'updated_at', ascending: false },
    { name: 'enabled_in_run', value: fx.runP1 },
  ] as (ScorerSort | null)[]) {
    const seen: string[] = [];
    let token: number | null = 0;
    let pages = 0;
    while (token !== null) {
      const page = fx.store.catalog.listScorers({ sort }, { starting_token: token, limit: 7 });
      assert.equal(page.starting_token, token);
      assert.equal(page.limit, 7);
      assert.equal(page.paginated, page.next_starting_token !== null);
      seen.push(...page.scorers.map((s) => s.id));
      token = page.next_starting_token;
      pages++;
    }
    assert.equal(seen.length, total);
    assert.equal(new Set(seen).size, total, 'no scorer twice');
    assert.equal(pages, Math.ceil(total / 7));
  }
  const last = fx.store.catalog.listScorers({}, { starting_token: total - 1, limit: 7 });
  assert.equal(last.scorers.length, 1);
  assert.equal(last.next_starting_token, null);
  assert.equal(fx.store.catalog.listScorers({}, { starting_token: total + 10 }).scorers.length, 0);
});

test('permissions follow the caller and the actions asked for', async (t) => {
  const fx = await fixture(t);
  const actions = ['update', 'delete', 'share', 'export', 'autotune_apply'] as const;
  const perms = (user: User, name: string, asked: readonly (typeof actions)[number][] = actions) =>
    fx.store.catalog.listScorers({ filters: [{ name: 'name', operator: 'eq', value: name }] }, { actions: asked }, user).scorers[0]!
      .permissions;
  const allowed = (ps: { action: string; allowed: boolean }[]) => ps.filter((p) => p.allowed).map((p) => p.action);
  assert.deepEqual(allowed(perms(fx.users.alice, 'Alpha')), [...actions], 'the creator may do everything with an llm scorer');
  assert.deepEqual(allowed(perms(fx.users.bob, 'Alpha')), ['export'], 'another user may only export');
  const denied = perms(fx.users.bob, 'Alpha').find((p) => p.action === 'update')!;
  assert.match(denied.message!, /creator of "Alpha" or an admin/);
  assert.deepEqual(allowed(perms(fx.users.bob, 'beta')), ['update', 'delete', 'share', 'export'], 'autotune applies only to llm scorers');
  assert.match(perms(fx.users.bob, 'beta').find((p) => p.action === 'autotune_apply')!.message!, /only to llm scorers/);
  assert.deepEqual(allowed(perms(fx.users.admin, 'Alpha')), [...actions], 'admins may do everything');
  assert.deepEqual(allowed(perms(fx.users.admin, 'correctness')), ['export'], 'presets are read-only even for admins');
  assert.deepEqual(
    perms(fx.users.alice, 'Alpha', ['export', 'delete', 'export']).map((p) => p.action),
    ['export', 'delete'],
    'in the order asked, without repeats',
  );
  assert.deepEqual(perms(fx.users.alice, 'Alpha', []), [], 'no actions asked, no permissions');
});

test('library callers get typed 422 errors for malformed filters and sorts', async (t) => {
  const fx = await fixture(t);
  const rejects = (filters: unknown[], loc: string, sort: unknown = null) => {
    assert.throws(
      () => fx.store.catalog.listScorers({ filters, sort } as never),
      (err: unknown) => err instanceof InvalidRequestError && err.issues.some((i) => i.loc.join('.') === loc),
      loc,
    );
  };
  rejects([{ name: 'bogus' }], 'body.filters.0.name');
  rejects([REGISTERED, { name: 'tags', operator: 'ne', value: 'x' }], 'body.filters.1.operator');
  rejects([{ name: 'name', operator: 'eq', value: ['a', 'b'] }], 'body.filters.0.value');
  rejects([{ name: 'scope_projects', project_ids: [] }], 'body.filters.0.project_ids');
  rejects([{ name: 'created_at', operator: 'gt', value: 'yesterday' }], 'body.filters.0.value');
  rejects([], 'body.sort.value', { name: 'enabled_in_run' });
  assert.throws(() => fx.store.catalog.listScorers({}, { limit: 0 }), InvalidRequestError);
});
