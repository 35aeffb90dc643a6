// Guarantees: a bearer token lives at least its TTL (never a fraction of it) and is refused when forged.
import { mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { TokenSigner } from '../../../src/server/auth/tokens.js';

test('a token lives at least its whole TTL and less than one second more, wherever in a second it was signed', () => {
  const signer = new TokenSigner(randomBytes(32), 1);
  for (const atMs of [1_000_000, 1_000_001, 1_000_500, 1_000_999]) {
    mock.timers.enable({ apis: ['Date'], now: atMs });
    try {
      const token = signer.sign('u');
      mock.timers.tick(999);
      assert.equal(signer.verify(token).sub, 'u', `signed at ${atMs} ms`);
      mock.timers.tick(1001);
      assert.throws(() => signer.verify(token), /expired/, `signed at ${atMs} ms`);
    } finally {
      mock.timers.reset();
    }
  }
});

test('a token signed with another secret or altered is refused', () => {
  const signer = new TokenSigner(randomBytes(32), 60);
  const token = signer.sign('u');
  assert.throws(() => new TokenSigner(randomBytes(32), 60).verify(token), /Invalid token/);
  const [h, , s] = token.split('.');
  const forged = `${h}.${Buffer.from(JSON.stringify({ sub: 'admin', iat: 0, exp: 9e9 })).toString('base64url')}.${s}`;
  assert.throws(() => signer.verify(forged), /Invalid token/);
});
