// Guarantees: rate limiting is off by default; when configured (server option, or the CLI's flag or
// environment variable) each API key gets its own budget, and past it the server answers 429 with
// {detail} and Retry-After in seconds while other keys and the docs page are unaffected.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildServer } from '../../src/server/build-server.js';
import { openStore, tempDir } from '../support/helpers.js';
import { serveChild } from '../support/serve-child.js';
import { storeCredentials } from '../../src/server/auth/credentials.js';

test('off by default: many requests with one key are all answered', async (t) => {
  const { store } = await openStore(t);
  const admin = store.users.create({ email: 'rl0@test', role: 'admin' });
  const key = store.users.createApiKey(admin.id).key;
  const app = buildServer({ store });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());
  const statuses = await Promise.all(
    Array.from({ length: 60 }, async () => (await fetch(`${url}/projects/all`, { headers: { 'Galileo-API-Key': key } })).status),
  );
  assert.deepEqual([...new Set(statuses)], [200]);
});

test('per key: past the budget 429 with Retry-After; other keys and /docs unaffected', async (t) => {
  const { store } = await openStore(t);
  const admin = store.users.create({ email: 'rl1@test', role: 'admin' });
  const [a, b] = [store.users.createApiKey(admin.id).key, store.users.createApiKey(admin.id).key];
  const app = buildServer({ store, rateLimit: { max: 3, windowMs: 60_000 } });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());
  const get = (path: string, key?: string, header = 'Galileo-API-Key') => fetch(`${url}${path}`, { headers: key ? { [header]: key } : {} });
  for (let i = 0; i < 3; i++) assert.equal((await get('/projects/all', a)).status, 200);
  const limited = await get('/v2/projects/all', a, 'Service-API-Key'); // the same key under another header and prefix
  assert.equal(limited.status, 429);
  const retry = Number(limited.headers.get('retry-after'));
  assert.ok(Number.isInteger(retry) && retry > 0 && retry <= 60, `Retry-After ${limited.headers.get('retry-after')}`);
  const body = (await limited.json()) as { detail: string };
  assert.match(body.detail, /^Rate limit exceeded: retry in \d+ seconds?$/);
  assert.doesNotMatch(JSON.stringify(body), new RegExp(a));
  assert.equal((await get('/projects/all', b)).status, 200, 'another key has its own budget');
  for (let i = 0; i < 5; i++) assert.equal((await get('/docs')).status, 200, 'the docs page is not limited');
  const token = storeCredentials(store).loginWithApiKey(b).access_token;
  for (let i = 0; i < 3; i++)
    assert.equal((await fetch(`${url}/current_user`, { headers: { Authorization: `Bearer ${token}` } })).status, 200);
  assert.equal(
    (await fetch(`${url}/current_user`, { headers: { Authorization: `Bearer ${token}` } })).status,
    429,
    'a bearer token is counted as its own credential',
  );
});

test('bad settings are refused', async (t) => {
  const { store } = await openStore(t);
  assert.throws(() => buildServer({ store, rateLimit: { max: 0 } }), /max must be a positive integer/);
  assert.throws(() => buildServer({ store, rateLimit: { max: 5, windowMs: 1.5 } }), /windowMs/);
});

test('the CLI takes the limit from TRACELAKE_RATE_LIMIT (or --rate-limit)', { timeout: 60_000 }, async (t) => {
  const dir = tempDir(t);
  const key = `tl_rate_${Date.now()}`;
  const { url, child, exited } = await serveChild(t, dir, ['--rate-limit-window', '60000'], {
    TRACELAKE_API_KEY: key,
    TRACELAKE_RATE_LIMIT: '2',
  });
  const statuses: number[] = [];
  for (let i = 0; i < 3; i++) statuses.push((await fetch(`${url}/projects/all`, { headers: { 'Galileo-API-Key': key } })).status);
  assert.deepEqual(statuses, [200, 200, 429]);
  child.kill('SIGTERM');
  await exited;
});
