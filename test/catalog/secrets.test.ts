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
