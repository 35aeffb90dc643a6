// API keys are checked by their slow hash once per process: a key this process created is known at
// once, one created by another process costs one check, a revoked one is refused whatever was cached.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Catalog, type User } from '../../src/catalog/catalog.js';
import { secretChecks } from '../../src/catalog/secrets.js';
import { UnauthorizedError } from '../../src/errors.js';
import { tempDir } from '../support/helpers.js';

test('a key created in this process needs no slow check; in another, one; revoked, none admits it', (t) => {
  const dir = tempDir(t);
  const writer = Catalog.open(dir);
  const user: User = writer.createUser({ email: 'a@example.com', first_name: 'A', role: 'admin' });
  const { key, record } = writer.createApiKey(user.id, 'k');
  const before = secretChecks.scrypt;
  assert.equal(writer.authenticateKey(key).id, user.id);
  assert.equal(writer.authenticateKey(key).id, user.id);
  assert.equal(secretChecks.scrypt, before, 'the creating process checks no hash');
  writer.close();

  const next = Catalog.open(dir);
  t.after(() => next.close());
  assert.equal(next.authenticateKey(key).id, user.id);
  assert.equal(next.authenticateKey(key).id, user.id);
  assert.equal(secretChecks.scrypt, before + 1, 'a new process checks it once');
  assert.throws(() => next.authenticateKey(`${key}x`), UnauthorizedError);
  next.revokeApiKey(record.id);
  assert.throws(() => next.authenticateKey(key), UnauthorizedError);
});

test('a key or a password checked off the thread: the event loop turns while the slow hash runs; answers as the blocking check', async (t) => {
  const dir = tempDir(t);
  const writer = Catalog.open(dir);
  const user: User = writer.createUser({ email: 'b@example.com', first_name: 'B', role: 'admin', password: 'correct horse' });
  const { key } = writer.createApiKey(user.id, 'k');
  writer.close();
  const next = Catalog.open(dir);
  t.after(() => next.close());
  // A turn of the loop (setImmediate) comes before the answer: the hash did not run on this thread.
  let turned = false;
  setImmediate(() => {
    turned = true;
  });
  const before = secretChecks.scrypt;
  const got = await next.authenticateKeyWithIdOffThread(key);
  assert.equal(turned, true, 'the loop turned during the check');
  assert.equal(got.user.id, user.id);
  assert.equal(secretChecks.scrypt, before + 1);
  await assert.rejects(next.authenticateKeyWithIdOffThread(`${key}x`), UnauthorizedError);
  assert.equal((await next.authenticateKeyWithIdOffThread(key)).user.id, user.id);
  assert.equal(secretChecks.scrypt, before + 2, 'the wrong key was checked, the right one not again');
});
