// store.users: the people who may use a served store and their API keys (the CLI's admin commands
// and the server's user routes). Keys are stored only as hashes: the clear key is returned once, when
// it is made. Signing in with them is the server's business (src/server/auth).
import type { ApiKey, Catalog, User } from '../catalog/catalog.js';
import type { OpenGuard } from './open-guard.js';

/** A user as lists show it: never the password hash. */
export interface UserView {
  id: string;
  email: string;
  first_name: string;
  last_name: string;
  role: string;
  created_at: string;
}

/** An API key as lists show it: the first characters, never the key or its hash. */
export interface ApiKeyView {
  id: string;
  user_id: string;
  prefix: string;
  description: string;
  created_at: string;
  revoked_at: string | null;
}

export function publicUser(u: User): UserView {
  return { id: u.id, email: u.email, first_name: u.first_name, last_name: u.last_name, role: u.role, created_at: u.created_at };
}

export class Users {
  readonly #guard: OpenGuard;
  readonly #catalog: Catalog;

  constructor(guard: OpenGuard, catalog: Catalog) {
    this.#guard = guard;
    this.#catalog = catalog;
  }

  create(input: { email: string; first_name?: string; last_name?: string; role?: 'admin' | 'user'; password?: string }): User {
    this.#guard.assertOpen();
    return this.#catalog.createUser(input);
  }

  list(): UserView[] {
    return this.#catalog.table<User>('users').map(publicUser);
  }

  byEmail(email: string): User | undefined {
    return this.#catalog.table<User>('users').find((u) => u.email === email.trim().toLowerCase());
  }

  /** A new API key for a user: the clear key is returned here once and stored only as a hash. */
  createApiKey(userId: string, description = ''): { key: string; id: string } {
    this.#guard.assertOpen();
    const { key, record } = this.#catalog.createApiKey(userId, description);
    return { key, id: record.id };
  }

  /** A user's API keys (every user's, without `userId`). */
  listApiKeys(userId?: string): ApiKeyView[] {
    return this.#catalog
      .table<ApiKey>('api_keys')
      .filter((k) => userId === undefined || k.user_id === userId)
      .map((k) => ({
        id: k.id,
        user_id: k.user_id,
        prefix: k.prefix,
        description: k.description,
        created_at: k.created_at,
        revoked_at: k.revoked_at,
      }));
  }

  revokeApiKey(id: string): void {
    this.#guard.assertOpen();
    this.#catalog.revokeApiKey(id);
  }
}
