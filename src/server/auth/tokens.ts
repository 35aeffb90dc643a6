// Bearer tokens for the OAuth2 password flow and POST /login/api_key: HS256 JSON Web Tokens signed
// with a per-folder secret (created on first open, mode 0600). The official client decodes the token
// without verifying it and only checks `exp`; we verify signature and expiry on every request.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UnauthorizedError } from '../../errors.js';
import { writeFileAtomic } from '../../storage/fs-util.js';

export interface TokenClaims {
  sub: string;
  /** Issued-at and expiry, seconds since the epoch. */
  iat: number;
  exp: number;
  /** The API key the token was exchanged for, so revoking the key revokes its tokens. */
  kid?: string;
}

const b64 = (v: string | Buffer) => Buffer.from(v).toString('base64url');

export class TokenSigner {
  readonly #secret: Buffer;
  readonly ttlSeconds: number;

  constructor(secret: Buffer, ttlSeconds: number) {
    this.#secret = secret;
    this.ttlSeconds = ttlSeconds;
  }

  static forFolder(dir: string, ttlSeconds = 30 * 24 * 3600): TokenSigner {
    const path = join(dir, 'token-secret');
    if (!existsSync(path)) writeFileAtomic(path, randomBytes(32).toString('base64'), 0o600);
    return new TokenSigner(Buffer.from(readFileSync(path, 'utf8'), 'base64'), ttlSeconds);
  }

  // `exp` is rounded up and compared with the fractional clock, so a token lives at least its whole TTL
  // (rounding both down gave a 1-second TTL anywhere between 0 and 1 s).
  sign(sub: string, kid?: string, nowSeconds = Date.now() / 1000): string {
    const claims: TokenClaims = { sub, iat: Math.floor(nowSeconds), exp: Math.ceil(nowSeconds + this.ttlSeconds), ...(kid ? { kid } : {}) };
    const head = `${b64(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64(JSON.stringify(claims))}`;
    return `${head}.${b64(createHmac('sha256', this.#secret).update(head).digest())}`;
  }

  verify(token: string, nowSeconds = Date.now() / 1000): TokenClaims {
    const parts = token.split('.');
    if (parts.length !== 3) throw new UnauthorizedError('Invalid token');
    const expected = createHmac('sha256', this.#secret).update(`${parts[0]}.${parts[1]}`).digest();
    const given = Buffer.from(parts[2]!, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new UnauthorizedError('Invalid token');
    let claims: TokenClaims;
    try {
      claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString()) as TokenClaims;
    } catch {
      throw new UnauthorizedError('Invalid token');
    }
    if (typeof claims.exp !== 'number' || claims.exp <= nowSeconds) throw new UnauthorizedError('Token expired');
    return claims;
  }
}
