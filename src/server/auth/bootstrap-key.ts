// The key a server admits its first user with. `envKey` (TRACELAKE_API_KEY) is adopted if given;
// otherwise the first start generates one and writes it to <data>/api-key (mode 0600).
import { join } from 'node:path';
import type { ApiKey, User } from '../../catalog/catalog.js';
import { newApiKey } from '../../catalog/secrets.js';
import { internalsOf } from '../../engine/internals.js';
import type { TraceStore } from '../../engine/trace-store.js';
import { writeFileAtomic } from '../../storage/fs-util.js';

/**
 * Returns the key only when it was generated now, so the caller prints it exactly once. An adopted
 * key is checked against the stored ones off the event loop (its slow hash, ~0.1 s, runs beside the
 * server's build: serve.ts awaits this after it), and is then known to this process, so the first
 * request it signs costs no second check.
 */
export async function bootstrapApiKey(store: TraceStore, envKey?: string): Promise<{ generated: string | null; file: string }> {
  const { catalog, guard } = internalsOf(store);
  guard.assertOpen();
  const file = join(store.dir, 'api-key');
  let admin = catalog.table<User>('users').find((u) => u.role === 'admin');
  admin ??= catalog.createUser({ email: 'admin@localhost', first_name: 'Admin', role: 'admin' });
  if (envKey) {
    if (!(await catalog.hasKey(envKey))) catalog.createApiKey(admin.id, 'TRACELAKE_API_KEY', envKey);
    return { generated: null, file };
  }
  const live = catalog.table<ApiKey>('api_keys').filter((k) => k.revoked_at === null);
  if (live.length > 0) return { generated: null, file };
  // The file first, then the commit: a crash between them leaves a file with a key that is not live
  // (replaced on the next start), never a live key whose clear text exists nowhere.
  const key = newApiKey();
  writeFileAtomic(file, `${key}\n`, 0o600);
  catalog.createApiKey(admin.id, 'generated on first start', key);
  return { generated: key, file };
}
