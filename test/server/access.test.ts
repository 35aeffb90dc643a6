// Guarantees: every route on a project is in the access table; every route answers 401 to missing,
// wrong, expired and revoked credentials under every scheme and admits valid ones; users of another
// project get the same 404 as for a project that does not exist and learn nothing of it; roles are
// enforced exactly as the permissions arrays report them.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { TraceStore } from '../../src/engine/trace-store.js';
import { ROUTE_ACCESS, bareUrl } from '../../src/server/access.js';
import { buildServer } from '../../src/server/build-server.js';
import { isNotApi } from '../../src/server/openapi/surface.js';
import { everyKindTrace, openStore, tempDir } from '../support/helpers.js';
import { storeCredentials } from '../../src/server/auth/credentials.js';

async function routesOf(store: TraceStore): Promise<{ method: string; url: string; public: boolean }[]> {
  const app = buildServer({ store });
  const out: { method: string; url: string; public: boolean }[] = [];
  app.addHook('onRoute', (r) => {
    // Pages outside the API (the docs) need no credentials, like the public routes.
    for (const m of ([] as string[]).concat(r.method))
      if (m !== 'HEAD')
        out.push({ method: m, url: r.url, public: Boolean((r.config as { public?: boolean } | undefined)?.public) || isNotApi(r.url) });
  });
  await app.ready();
  await app.close();
  return out;
}

test('the access table covers every route on a project (fail closed otherwise)', async (t) => {
  const { store } = await openStore(t);
  const missing = (await routesOf(store)).filter(
    (r) => r.url.includes(':project_id') && !ROUTE_ACCESS.has(`${r.method} ${bareUrl(r.url)}`),
  );
  assert.deepEqual(missing, []);
});

test('every route times every scheme: valid, missing, wrong, expired, revoked', { timeout: 300_000 }, async (t) => {
  const dir = tempDir(t);
  const store = await TraceStore.open(dir);
  t.after(() => store.close());
  const user = store.users.create({ email: 'm@test', password: 'correct horse battery', role: 'admin' });
  const { key, id: keyId } = store.users.createApiKey(user.id);
  const revoked = store.users.createApiKey(user.id);
  const app = buildServer({ store });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) =>
    (
      await fetch(`${url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      })
    ).json() as Promise<any>;
  const token = (await post('/login/api_key', { api_key: key })).access_token as string;
  const passwordToken = (await post('/login', { username: 'm@test', password: 'correct horse battery' })).access_token as string;
  const revokedToken = (await post('/login/api_key', { api_key: revoked.key })).access_token as string;
  store.users.revokeApiKey(revoked.id);
  const basic = `Basic ${Buffer.from('m@test:correct horse battery').toString('base64')}`;
  const schemes: [string, Record<string, string>, 'ok' | 401][] = [
    ['Galileo-API-Key', { 'Galileo-API-Key': key }, 'ok'],
    ['Service-API-Key', { 'Service-API-Key': key }, 'ok'],
    ['Splunk-AO-API-Key', { 'Splunk-AO-API-Key': key }, 'ok'],
    ['Bearer (api key login)', { Authorization: `Bearer ${token}` }, 'ok'],
    ['Bearer (password login)', { Authorization: `Bearer ${passwordToken}` }, 'ok'],
    ['Basic', { Authorization: basic }, 'ok'],
    ['missing', {}, 401],
    ['wrong Galileo-API-Key', { 'Galileo-API-Key': 'tl_not_a_key' }, 401],
    ['wrong Splunk-AO-API-Key', { 'Splunk-AO-API-Key': `${key}x` }, 401],
    ['wrong bearer', { Authorization: `Bearer ${token.slice(0, -2)}xx` }, 401],
    ['wrong basic', { Authorization: `Basic ${Buffer.from('m@test:nope').toString('base64')}` }, 401],
    ['revoked key', { 'Galileo-API-Key': revoked.key }, 401],
    ['token of a revoked key', { Authorization: `Bearer ${revokedToken}` }, 401],
  ];
  const routes = (await routesOf(store)).filter((r) => !r.url.startsWith('/public'));
  const fill = (u: string) => u.replace(/:[a-z_]+/g, () => randomUUID());
  let checked = 0;
  for (const r of routes) {
    for (const [name, headers, expect] of schemes) {
      const res = await fetch(`${url}${fill(r.url)}`, {
        method: r.method,
        headers: { ...headers, ...(r.method === 'GET' || r.method === 'DELETE' ? {} : { 'content-type': 'application/json' }) },
        ...(r.method === 'GET' || r.method === 'DELETE' ? {} : { body: '{}' }),
      });
      await res.arrayBuffer();
      checked++;
      if (r.public || expect === 'ok') assert.notEqual(res.status, 401, `${r.method} ${r.url} with ${name}`);
      else assert.equal(res.status, 401, `${r.method} ${r.url} with ${name}`);
      assert.ok(res.status < 500, `${r.method} ${r.url} with ${name}: ${res.status}`);
    }
  }
  assert.ok(checked > 300, `${checked} route x scheme checks`);
  assert.ok(keyId);
});

test('an expired bearer token is refused on every route; the key it came from still works', async (t) => {
  // Two seconds, so a loaded machine still makes the first request in time; the token lives under 3 s.
  const store = await TraceStore.open(tempDir(t));
  t.after(() => store.close());
  const user = store.users.create({ email: 'e@test', role: 'admin' });
  const { key } = store.users.createApiKey(user.id);
  const app = buildServer({ store, tokenTtlSeconds: 2 });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());
  const token = storeCredentials(store, 2).loginWithApiKey(key).access_token;
  assert.equal((await fetch(`${url}/projects/all`, { headers: { Authorization: `Bearer ${token}` } })).status, 200);
  await new Promise((r) => setTimeout(r, 3100));
  const routes = (await routesOf(store)).filter((r) => !r.public && !r.url.startsWith('/public'));
  for (const r of routes) {
    const res = await fetch(`${url}${r.url.replace(/:[a-z_]+/g, () => randomUUID())}`, {
      method: r.method,
      headers: { Authorization: `Bearer ${token}` },
    });
    await res.arrayBuffer();
    assert.equal(res.status, 401, `${r.method} ${r.url}`);
  }
  const expired = await fetch(`${url}/projects/all`, { headers: { Authorization: `Bearer ${token}` } });
  assert.match(((await expired.json()) as { detail: string }).detail, /expired/);
  assert.equal((await fetch(`${url}/projects/all`, { headers: { 'Galileo-API-Key': key } })).status, 200);
});

test('another project answers exactly like no project: 404, same body shape, nothing leaks', async (t) => {
  const dir = tempDir(t);
  const store = await TraceStore.open(dir);
  t.after(() => store.close());
  const app = buildServer({ store });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());
  const alice = store.users.create({ email: 'alice@test' });
  const bob = store.users.create({ email: 'bob@test' });
  const aliceKey = store.users.createApiKey(alice.id).key;
  const bobKey = store.users.createApiKey(bob.id).key;
  const pa = store.createProject({ name: 'alice-secret' }, alice);
  const la = store.createLogStream(pa.id, 'ls', alice);
  const logged = await store.logTraces(pa.id, { log_stream_id: la.id, traces: [everyKindTrace('s') as any] });
  const scorer = store.catalog.createScorer({ name: 'alice-only', scorer_type: 'code', scope_projects: [{ id: pa.id }] } as never, alice);
  const call = async (key: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { 'Galileo-API-Key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const nowhere = randomUUID();
  const probes: [string, (p: string) => string, unknown?][] = [
    ['GET', (p) => `/projects/${p}`],
    ['GET', (p) => `/projects/${p}/log_streams`],
    ['POST', (p) => `/projects/${p}/log_streams/search`, {}],
    ['POST', (p) => `/projects/${p}/spans/search`, {}],
    ['POST', (p) => `/projects/${p}/spans/count`, { log_stream_id: la.id }],
    ['POST', (p) => `/projects/${p}/traces/partial_search`, { log_stream_id: la.id }],
    ['POST', (p) => `/projects/${p}/spans/available_columns`, { log_stream_id: la.id }],
    ['POST', (p) => `/projects/${p}/spans/delete`, { log_stream_id: la.id }],
    ['GET', (p) => `/projects/${p}/traces/${logged.trace_ids[0]}`],
    ['POST', (p) => `/projects/${p}/traces`, { log_stream_id: la.id, traces: [{ name: 'x' }] }],
    ['GET', (p) => `/projects/${p}/runs/${la.id}/scorer-settings`],
    ['GET', (p) => `/projects/${p}/users`],
    ['DELETE', (p) => `/projects/${p}`],
  ];
  for (const [method, path, body] of probes) {
    const theirs = await call(bobKey, method, path(pa.id), body);
    const none = await call(bobKey, method, path(nowhere), body);
    assert.equal(theirs.status, 404, `${method} ${path('{alice}')}`);
    assert.equal(none.status, 404);
    assert.equal(theirs.body.detail.replace(pa.id, 'X'), none.body.detail.replace(nowhere, 'X'), 'same message as for no project');
    assert.ok(!JSON.stringify(theirs.body).includes('alice-secret'));
  }
  const lists = [
    await call(bobKey, 'GET', '/projects/all'),
    await call(bobKey, 'GET', '/projects?project_name=alice-secret'),
    await call(bobKey, 'POST', '/v2/projects/paginated', {}),
  ];
  for (const l of lists) assert.ok(!JSON.stringify(l.body).includes(pa.id), 'not listed');
  assert.equal(
    (await call(bobKey, 'POST', '/scorers/list', { filters: [{ name: 'name', operator: 'eq', value: 'alice-only' }] })).body.scorers.length,
    0,
  );
  assert.equal((await call(bobKey, 'GET', `/scorers/${scorer.id}`)).status, 404);
  // Alice still has everything.
  assert.equal((await call(aliceKey, 'POST', `/projects/${pa.id}/spans/count`, { log_stream_id: la.id })).body.total_count, 6);
});

test('roles: viewers read, annotators cannot log, editors log but cannot delete the project, owners can', async (t) => {
  const dir = tempDir(t);
  const store = await TraceStore.open(dir);
  t.after(() => store.close());
  const app = buildServer({ store });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());
  const owner = store.users.create({ email: 'o@test' });
  const p = store.createProject({ name: 'shared' }, owner);
  const ls = store.createLogStream(p.id, 'ls', owner);
  const keys: Record<string, string> = { owner: store.users.createApiKey(owner.id).key };
  for (const role of ['viewer', 'annotator', 'editor'] as const) {
    const u = store.users.create({ email: `${role}@test` });
    store.catalog.addProjectMember(p.id, u.id, role);
    keys[role] = store.users.createApiKey(u.id).key;
  }
  const call = async (who: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { 'Galileo-API-Key': keys[who]!, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const log = { log_stream_id: ls.id, traces: [everyKindTrace('r')] };
  assert.equal((await call('viewer', 'POST', `/projects/${p.id}/spans/search`, { log_stream_id: ls.id })).status, 200);
  const denied = await call('viewer', 'POST', `/projects/${p.id}/traces`, log);
  assert.equal(denied.status, 403);
  assert.match(denied.body.detail, /log_data needs the editor role.*you are a viewer/);
  assert.equal((await call('annotator', 'POST', `/projects/${p.id}/traces`, log)).status, 403);
  assert.equal((await call('editor', 'POST', `/projects/${p.id}/traces`, log)).status, 200);
  assert.equal((await call('viewer', 'POST', `/projects/${p.id}/spans/delete`, { log_stream_id: ls.id })).status, 403);
  assert.equal((await call('editor', 'DELETE', `/projects/${p.id}`)).status, 403);
  const perms = await call('editor', 'GET', `/projects/${p.id}?actions=delete&actions=log_data`);
  assert.deepEqual(
    perms.body.permissions.map((x: any) => x.allowed),
    [false, true],
    'what is reported is what is enforced',
  );
  assert.equal((await call('owner', 'DELETE', `/projects/${p.id}`)).status, 200);
});
