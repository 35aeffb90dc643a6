// API keys and passwords are stored as scrypt hashes (slow on purpose). A verified key is remembered
// by its SHA-256 for the life of the process, so each request does not pay the slow hash again. The
// server checks off its event loop (verifySecretOffThread): a check is ~0.1 s of CPU, which stalled
// every other request meanwhile.
import { createHash, randomBytes, scrypt, scryptSync, timingSafeEqual } from 'node:crypto';

const SCRYPT = { N: 1 << 14, r: 8, p: 1 } as const;

export interface SecretHash {
  readonly salt: string;
  readonly hash: string;
}

export function hashSecret(secret: string): SecretHash {
  const salt = randomBytes(16);
  return { salt: salt.toString('base64'), hash: scryptSync(secret, salt, 32, SCRYPT).toString('base64') };
}

/** Slow hashes this process ran to check a secret (for tests). */
export const secretChecks = { scrypt: 0 };

export function verifySecret(secret: string, stored: SecretHash): boolean {
  secretChecks.scrypt++;
  return same(scryptSync(secret, Buffer.from(stored.salt, 'base64'), 32, SCRYPT), stored);
}

/** verifySecret on libuv's thread pool. */
export function verifySecretOffThread(secret: string, stored: SecretHash): Promise<boolean> {
  secretChecks.scrypt++;
  return new Promise((resolve, reject) =>
    scrypt(secret, Buffer.from(stored.salt, 'base64'), 32, SCRYPT, (err, actual) => (err ? reject(err) : resolve(same(actual, stored)))),
  );
}

function same(actual: Buffer, stored: SecretHash): boolean {
  const expected = Buffer.from(stored.hash, 'base64');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

export function fingerprint(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** A new API key: a recognisable prefix and 256 random bits. */
export function newApiKey(): string {
  return `tl_${randomBytes(32).toString('base64url')}`;
}

/** The part of a key that is stored in clear to find its record (never enough to use it). */
export function keyPrefix(key: string): string {
  return key.slice(0, 10);
}
