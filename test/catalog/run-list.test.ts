// Guarantees: log stream search applies every filter kind and operator and every sort the hosted
// service accepts to a project's log streams only, pages through the body's starting_token/limit
// exactly once, fills num_spans/num_traces from what was really logged (and deleted) when
// include_counts is set, and reports has_user_created_sessions once a session was created explicitly.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { User } from '../../src/catalog/catalog.js';
import type { LogStreamFilter, LogStreamSort } from '../../src/schemas/log-streams.js';
import { everyKindTrace, openStore } from '../support/helpers.js';
import { internalsOf } from '../../src/engine/internals.js';

async function fixture(t: Parameters<typeof openStore>[0]) {
  const fx = await openStore(t);
  const { store, projectId } = fx;
  const users = {
    alice: store.users.create({ email: 'alice@example.com' }),
    bob: store.users.create({ email: 'bob@example.com' }),
    carol: store.users.create({ email: 'carol@example.com' }),
  };
  const specs: [string, User, string, string][] = [
    ['alpha-stream', users.alice, '2026-01-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z'],
    ['Beta', users.bob, '2026-01-02T00:00:00.000Z', '2026-01-02T00:00:00.000Z'],
    ['gamma', users.alice, '2026-01-03T00:00:00.000Z', '2026-02-01T00:00:00.000Z'],
    ['Delta', users.carol, '2026-01-04T00:00:00.000Z', '2026-01-05T00:00:00.000Z'],
  ];
  await store.catalog.deleteRun(projectId, fx.logStreamId);
  const ids: Record<string, string> = {};
  for (const [name, user, created, updated] of specs) {
    const r = store.createLogStream(projectId, name, user);
    internalsOf(store).catalog.put('runs', { ...r, created_at: created, updated_at: updated } as never);
    ids[name] = r.id;
  }
  store.catalog.createExperiment(projectId, 'an-experiment', users.alice);
  store.createLogStream(store.createProject({ name: 'other' }).id, 'elsewhere');
  return { ...fx, users, ids };
}

test('every filter kind and operator, on log streams of this project only', async (t) => {
  const fx = await fixture(t);
  const { store, projectId, users, ids } = fx;
  const cases: [LogStreamFilter, string[]][] = [
    [{ name: 'id', value: ids['Beta']! } as LogStreamFilter, ['Beta']],
    [{ name: 'id', operator: 'ne', value: ids['Beta']! }, ['alpha-stream', 'gamma', 'Delta']],
    [{ name: 'id', operator: 'one_of', value: [ids['Beta']!, ids['gamma']!.toUpperCase()] }, ['Beta', 'gamma']],
    [{ name: 'id', operator: 'not_in', value: [ids['Beta']!] }, ['alpha-stream', 'gamma', 'Delta']],
    [{ name: 'id', operator: 'contains', value: ids['Delta']!.slice(24) }, ['Delta']],
    [{ name: 'name', operator: 'eq', value: 'beta' }, []],
    [{ name: 'name', operator: 'eq', value: 'beta', case_sensitive: false }, ['Beta']],
    [{ name: 'name', operator: 'ne', value: 'Beta' }, ['alpha-stream', 'gamma', 'Delta']],
    [{ name: 'name', operator: 'contains', value: 'ta' }, ['Beta', 'Delta']],
    [{ name: 'name', operator: 'contains', value: 'A', case_sensitive: false }, ['alpha-stream', 'Beta', 'gamma', 'Delta']],
    [{ name: 'name', operator: 'one_of', value: ['gamma', 'Delta'] }, ['gamma', 'Delta']],
    [{ name: 'name', operator: 'not_in', value: ['gamma', 'delta'] }, ['alpha-stream', 'Beta', 'Delta']],
    [{ name: 'created_by', value: users.alice.id } as LogStreamFilter, ['alpha-stream', 'gamma']],
    [{ name: 'created_by', operator: 'ne', value: users.alice.id }, ['Beta', 'Delta']],
    [{ name: 'created_by', operator: 'one_of', value: [users.bob.id, users.carol.id] }, ['Beta', 'Delta']],
    [{ name: 'created_by', operator: 'not_in', value: [users.bob.id] }, ['alpha-stream', 'gamma', 'Delta']],
    [{ name: 'created_by', operator: 'contains', value: 'bob@' }, ['Beta']],
    [{ name: 'created_at', operator: 'eq', value: '2026-01-03T00:00:00Z' }, ['gamma']],
    [{ name: 'created_at', operator: 'ne', value: '2026-01-03T00:00:00Z' }, ['alpha-stream', 'Beta', 'Delta']],
    [{ name: 'created_at', operator: 'gt', value: '2026-01-02T00:00:00Z' }, ['gamma', 'Delta']],
    [{ name: 'created_at', operator: 'gte', value: '2026-01-02T00:00:00Z' }, ['Beta', 'gamma', 'Delta']],
    [{ name: 'created_at', operator: 'lt', value: '2026-01-02T00:00:00Z' }, ['alpha-stream']],
    [{ name: 'created_at', operator: 'lte', value: '2026-01-02T00:00:00Z' }, ['alpha-stream', 'Beta']],
    [{ name: 'updated_at', operator: 'eq', value: '2026-01-05T00:00:00Z' }, ['Delta']],
    [{ name: 'updated_at', operator: 'ne', value: '2026-01-05T00:00:00Z' }, ['alpha-stream', 'Beta', 'gamma']],
    [{ name: 'updated_at', operator: 'gt', value: '2026-01-05T00:00:00Z' }, ['alpha-stream', 'gamma']],
    [{ name: 'updated_at', operator: 'gte', value: '2026-01-05T00:00:00Z' }, ['alpha-stream', 'gamma', 'Delta']],
    [{ name: 'updated_at', operator: 'lt', value: '2026-02-01T00:00:00Z' }, ['Beta', 'Delta']],
    [{ name: 'updated_at', operator: 'lte', value: '2026-02-01T00:00:00Z' }, ['Beta', 'gamma', 'Delta']],
  ];
  assert.equal(new Set(cases.map(([f]) => f.name)).size, 5);
  for (const [f, want] of cases) {
    const got = (await store.catalog.searchLogStreams(projectId, { filters: [f] })).log_streams.map((s) => s.name);
    assert.deepEqual(new Set(got), new Set(want), JSON.stringify(f));
  }
  const all = (await store.catalog.searchLogStreams(projectId)).log_streams;
  assert.equal(all.length, 4, 'experiments and other projects are not listed');
  assert.equal(all[0]!.created_by_user?.email, 'carol@example.com');
});

test('every sort, default newest first, and paging in the body', async (t) => {
  const fx = await fixture(t);
  const { store, projectId } = fx;
  const sorts: [LogStreamSort | null, string[]][] = [
    [null, ['Delta', 'gamma', 'Beta', 'alpha-stream']],
    [{ name: 'name' }, ['alpha-stream', 'Beta', 'Delta', 'gamma']],
    [{ name: 'name', ascending: false }, ['gamma', 'Delta', 'Beta', 'alpha-stream']],
    [{ name: 'created_at', sort_type: 'column' }, ['alpha-stream', 'Beta', 'gamma', 'Delta']],
    [{ name: 'created_at', ascending: false }, ['Delta', 'gamma', 'Beta', 'alpha-stream']],
    [{ name: 'updated_at' }, ['Beta', 'Delta', 'gamma', 'alpha-stream']],
    [{ name: 'updated_at', ascending: false }, ['alpha-stream', 'gamma', 'Delta', 'Beta']],
  ];
  for (const [sort, want] of sorts)
    assert.deepEqual(
      (await store.catalog.searchLogStreams(projectId, { sort })).log_streams.map((s) => s.name),
      want,
      JSON.stringify(sort),
    );
  const seen: string[] = [];
  let token: number | null = 0;
  while (token !== null) {
    const page = await store.catalog.searchLogStreams(projectId, { starting_token: token, limit: 3, sort: { name: 'name' } });
    seen.push(...page.log_streams.map((s) => s.name));
    token = page.next_starting_token;
  }
  assert.deepEqual(seen, ['alpha-stream', 'Beta', 'Delta', 'gamma']);
});

test('include_counts reports what was logged and deleted; explicit sessions are flagged', async (t) => {
  const fx = await fixture(t);
  const { store, projectId, ids } = fx;
  await store.logTraces(projectId, { log_stream_id: ids['Beta']!, traces: [everyKindTrace('a'), everyKindTrace('b')] } as never);
  await store.logTraces(projectId, { log_stream_id: ids['gamma']!, traces: [everyKindTrace('c')] } as never);
  const counts = async () =>
    Object.fromEntries(
      (await store.catalog.searchLogStreams(projectId, { include_counts: true })).log_streams.map((s) => [
        s.name,
        [s.num_spans, s.num_traces],
      ]),
    );
  assert.deepEqual(await counts(), { 'alpha-stream': [0, 0], Beta: [12, 2], gamma: [6, 1], Delta: [0, 0] });
  const without = (await store.catalog.searchLogStreams(projectId)).log_streams[0]!;
  assert.equal(without.num_spans, null, 'counts only when asked');
  await store.catalog.deleteRun(projectId, ids['gamma']!);
  assert.deepEqual(await counts(), { 'alpha-stream': [0, 0], Beta: [12, 2], Delta: [0, 0] });
  const again = store.createLogStream(projectId, 'gamma');
  assert.deepEqual(
    (
      await store.catalog.searchLogStreams(projectId, {
        include_counts: true,
        filters: [{ name: 'id', value: again.id } as LogStreamFilter],
      })
    ).log_streams.map((s) => s.num_spans),
    [0],
    'a re-created stream starts empty',
  );

  const flag = async (id: string) =>
    (await store.catalog.searchLogStreams(projectId, { filters: [{ name: 'id', value: id } as LogStreamFilter] })).log_streams[0]!
      .has_user_created_sessions;
  assert.equal(await flag(ids['Beta']!), false, 'implicit sessions do not count');
  internalsOf(store).catalog.markUserCreatedSession(ids['Beta']!);
  assert.equal(await flag(ids['Beta']!), true);
  assert.equal(await flag(ids['Delta']!), false);
  assert.throws(() => internalsOf(store).catalog.markUserCreatedSession('00000000-0000-4000-8000-000000000000'), /not found/);
});

test('rename a run: unique per kind, updated_at moves', async (t) => {
  const fx = await fixture(t);
  const { store, projectId, ids } = fx;
  const r = store.catalog.renameRun(projectId, ids['Beta']!, 'Bravo');
  assert.equal(r.name, 'Bravo');
  assert.ok(r.updated_at > '2026-01-02T00:00:00.000Z');
  assert.throws(() => store.catalog.renameRun(projectId, ids['Beta']!, 'gamma'), /already exists/);
  assert.doesNotThrow(() => store.catalog.renameRun(projectId, ids['Beta']!, 'an-experiment'), 'names are unique per run kind');
});
