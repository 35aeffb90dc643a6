// A request's API key or password is checked off the event loop (the slow hash stalled every other
// request): a turn of the loop comes before the answer, which is the blocking check's.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FastifyRequest } from 'fastify';
import { TraceStore } from '../../../src/engine/trace-store.js';
import { UnauthorizedError } from '../../../src/errors.js';
import { storeCredentials } from '../../../src/server/auth/credentials.js';
import { authenticate } from '../../../src/server/auth/request-auth.js';
import { tempDir } from '../../support/helpers.js';

const request = (headers: Record<string, string>) => ({ headers }) as unknown as FastifyRequest;

async function turnsDuring<T>(work: () => Promise<T>): Promise<{ turned: boolean; value: T }> {
  let turned = false;
  setImmediate(() => {
    turned = true;
  });
  const value = await work();
  return { turned, value };
}

test('API keys and HTTP Basic passwords new to this process are checked while the event loop turns', async (t) => {
  const dir = tempDir(t);
  let store = await TraceStore.open(dir);
  const admin = store.users.create({ email: 'admin@example.com', first_name: 'A', role: 'admin', password: 'pw-123456' });
  const { key } = store.users.createApiKey(admin.id);
  await store.close();
  // A new process's store: neither secret verified yet.
  store = await TraceStore.open(dir);
  t.after(() => store.close());
  const credentials = storeCredentials(store);
  const byKey = await turnsDuring(() => authenticate(request({ 'galileo-api-key': key }), credentials));
  assert.equal(byKey.turned, true);
  assert.equal(byKey.value.id, admin.id);
  const basic = `Basic ${Buffer.from('admin@example.com:pw-123456').toString('base64')}`;
  const byPassword = await turnsDuring(() => authenticate(request({ authorization: basic }), credentials));
  assert.equal(byPassword.turned, true);
  assert.equal(byPassword.value.id, admin.id);
  const wrong = `Basic ${Buffer.from('admin@example.com:wrong').toString('base64')}`;
  await assert.rejects(authenticate(request({ authorization: wrong }), credentials), UnauthorizedError);
  await assert.rejects(authenticate(request({ 'galileo-api-key': `${key}x` }), credentials), UnauthorizedError);
  // The blocking check answers the same (the library's synchronous methods).
  assert.equal(credentials.authenticateApiKey(key).id, admin.id);
  assert.equal(credentials.authenticatePassword('admin@example.com', 'pw-123456').id, admin.id);
});
