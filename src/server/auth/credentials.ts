// Who a request's credentials name: an API key, a bearer token (signed here, from /login and
// /login/api_key), or an email and password (the OAuth2 password flow and HTTP Basic). Keys and
// passwords are checked against their hashes in the catalog; nothing here is logged.
import type { Catalog, User } from '../../catalog/catalog.js';
import { fingerprint, verifySecret, verifySecretOffThread } from '../../catalog/secrets.js';
import { internalsOf } from '../../engine/internals.js';
import type { TraceStore } from '../../engine/trace-store.js';
import { UnauthorizedError } from '../../errors.js';
import { TokenSigner } from './tokens.js';

export interface Token {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
}

export class Credentials {
  readonly #catalog: Catalog;
  readonly #tokens: TokenSigner;
  /** fingerprint(email, password) -> user id, for pairs verified in this process. */
  readonly #verifiedPasswords = new Map<string, string>();

  constructor(catalog: Catalog, tokens: TokenSigner) {
    this.#catalog = catalog;
    this.#tokens = tokens;
  }

  authenticateApiKey(key: string): User {
    return this.#catalog.authenticateKey(key);
  }

  /** authenticateApiKey with the slow hash off the event loop (the server's requests). */
  async authenticateApiKeyOffThread(key: string): Promise<User> {
    return (await this.#catalog.authenticateKeyWithIdOffThread(key)).user;
  }

  authenticatePassword(email: string, password: string): User {
    const { fp, cached, user } = this.#passwordUser(email, password);
    if (cached) return cached;
    if (!user?.password || !verifySecret(password, user.password)) throw new UnauthorizedError('Incorrect username or password');
    this.#verifiedPasswords.set(fp, user.id);
    return user;
  }

  /** authenticatePassword with the slow hash off the event loop (the server's requests). */
  async authenticatePasswordOffThread(email: string, password: string): Promise<User> {
    const { fp, cached, user } = this.#passwordUser(email, password);
    if (cached) return cached;
    if (!user?.password || !(await verifySecretOffThread(password, user.password)))
      throw new UnauthorizedError('Incorrect username or password');
    this.#verifiedPasswords.set(fp, user.id);
    return user;
  }

  /** The user a pair verified in this process names (cached), or the user the email names (to check). */
  #passwordUser(email: string, password: string): { fp: string; cached: User | undefined; user: User | undefined } {
    // HTTP Basic sends the password on every request: a verified pair is remembered by its SHA-256.
    const fp = fingerprint(`${email.trim().toLowerCase()}\u0000${password}`);
    const known = this.#verifiedPasswords.get(fp);
    const cached = known ? this.#catalog.get<User>('users', known) : undefined;
    const user = cached ? undefined : this.#catalog.table<User>('users').find((u) => u.email === email.trim().toLowerCase());
    return { fp, cached, user };
  }

  authenticateToken(token: string): User {
    const claims = this.#tokens.verify(token);
    const user = this.#catalog.get<User>('users', claims.sub);
    if (!user) throw new UnauthorizedError('Invalid token');
    if (claims.kid !== undefined && !this.#catalog.keyIsLive(claims.kid))
      throw new UnauthorizedError('Token revoked: its API key was revoked');
    return user;
  }

  /** Exchanges an API key for a bearer token (POST /login/api_key); revoking the key revokes the token. */
  loginWithApiKey(key: string): Token {
    const { user, keyId } = this.#catalog.authenticateKeyWithId(key);
    return this.#token(user, keyId);
  }

  /** loginWithApiKey with the slow hash off the event loop (the server's requests). */
  async loginWithApiKeyOffThread(key: string): Promise<Token> {
    const { user, keyId } = await this.#catalog.authenticateKeyWithIdOffThread(key);
    return this.#token(user, keyId);
  }

  /** The OAuth2 password flow: a user's email and password. */
  loginWithPassword(email: string, password: string): Token {
    return this.#token(this.authenticatePassword(email, password));
  }

  /** loginWithPassword with the slow hash off the event loop (the server's requests). */
  async loginWithPasswordOffThread(email: string, password: string): Promise<Token> {
    return this.#token(await this.authenticatePasswordOffThread(email, password));
  }

  #token(user: User, keyId?: string): Token {
    return { access_token: this.#tokens.sign(user.id, keyId), token_type: 'bearer', expires_in: this.#tokens.ttlSeconds };
  }
}

/** Credentials of an open store; tokens are signed with the folder's secret, so any server on it accepts them. */
export function storeCredentials(store: TraceStore, tokenTtlSeconds?: number): Credentials {
  return new Credentials(internalsOf(store).catalog, TokenSigner.forFolder(store.dir, tokenTtlSeconds));
}
