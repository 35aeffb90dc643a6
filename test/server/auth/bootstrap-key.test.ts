// The key generated on first start must never be live without its clear text on disk: a crash (here,
// a failed write of <data>/api-key) between the two steps must not leave a key nobody can use.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { TraceStore } from '../../../src/engine/trace-store.js';
import { tempDir } from '../../support/helpers.js';
import { bootstrapApiKey } from '../../../src/server/auth/bootstrap-key.js';
import { storeCredentials } from '../../../src/server/auth/credentials.js';
import { secretChecks } from '../../../src/catalog/secrets.js';

function liveKeys(store: TraceStore): number {
  return store.users.listApiKeys().filter((k) => k.revoked_at === null).length;
}

test('a failed write of the api-key file leaves no live key, and the next start generates a usable one', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'api-key');
  {
    const store = await TraceStore.open(dir);
    // A folder where the temporary file must go makes the atomic write fail, as a crash or full disk would.
    const squat = `${file}.tmp-${process.pid}`;
    mkdirSync(squat);
    await assert.rejects(bootstrapApiKey(store));
    rmSync(squat, { recursive: true });
    assert.equal(existsSync(file), false);
    assert.equal(liveKeys(store), 0, 'no key is live whose clear text was not written');
    await store.close();
  }
  const store = await TraceStore.open(dir);
  try {
    const { generated } = await bootstrapApiKey(store);
    assert.ok(generated, 'the next start generates a key');
    assert.equal(readFileSync(file, 'utf8').trim(), generated);
    assert.equal(storeCredentials(store).authenticateApiKey(generated).role, 'admin');
  } finally {
    await store.close();
  }
});

test('an api-key file whose key never reached the catalog is replaced by a working one', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'api-key');
  writeFileSync(join(dir, 'api-key'), 'tl-never-committed\n'); // the file was written, the commit was not
  const store = await TraceStore.open(dir);
  try {
    const { generated } = await bootstrapApiKey(store);
    assert.ok(generated);
    assert.equal(readFileSync(file, 'utf8').trim(), generated);
    assert.equal(storeCredentials(store).authenticateApiKey(generated).role, 'admin');
    assert.equal(liveKeys(store), 1);
    assert.deepEqual(await bootstrapApiKey(store), { generated: null, file }, 'later starts keep it');
  } finally {
    await store.close();
  }
});

test('an adopted TRACELAKE_API_KEY is checked off the event loop once at start; its first request checks no hash', async (t) => {
  const dir = tempDir(t);
  const envKey = 'tl-adopted-key-0123456789abcdefghijklmnop';
  {
    const store = await TraceStore.open(dir);
    assert.deepEqual(await bootstrapApiKey(store, envKey), { generated: null, file: join(dir, 'api-key') });
    await store.close();
  }
  const store = await TraceStore.open(dir);
  try {
    const before = secretChecks.scrypt;
    let turned = false;
    setImmediate(() => {
      turned = true;
    });
    const adopting = bootstrapApiKey(store, envKey);
    assert.equal(turned, false);
    await adopting;
    assert.equal(turned, true, 'the loop turned while the stored key was checked');
    assert.equal(secretChecks.scrypt, before + 1, 'one check, of the stored key');
    assert.equal(liveKeys(store), 1, 'adopted, not stored again');
    assert.equal(storeCredentials(store).authenticateApiKey(envKey).role, 'admin');
    assert.equal(secretChecks.scrypt, before + 1, 'the first request needs no second check');
  } finally {
    await store.close();
  }
});
