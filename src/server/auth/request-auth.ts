// Who is calling. Any one of these schemes admits a request: an API key header (Galileo-API-Key,
// Service-API-Key, Splunk-AO-API-Key), a bearer token from /login or /login/api_key, or HTTP Basic
// (email and password). Routes marked `config.public` (healthcheck, login) need nothing.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { User } from '../../catalog/catalog.js';
import { UnauthorizedError } from '../../errors.js';
import { isNotApi } from '../openapi/surface.js';
import type { Credentials } from './credentials.js';

declare module 'fastify' {
  interface FastifyRequest {
    user: User | null;
  }
  interface FastifyContextConfig {
    public?: boolean;
  }
}

export const API_KEY_HEADERS = ['galileo-api-key', 'service-api-key', 'splunk-ao-api-key'] as const;

export function installAuth(app: FastifyInstance, credentials: Credentials): void {
  app.decorateRequest('user', null);
  app.addHook('onRequest', async (request) => {
    // Pages and files outside the API (openapi/surface.ts) need no credentials either.
    if (request.routeOptions.config?.public || (request.routeOptions.url !== undefined && isNotApi(request.routeOptions.url))) return;
    request.user = await authenticate(request, credentials);
  });
}

/** Keys and passwords are checked off the event loop: a check is ~0.1 s of CPU, which stalled every other request. */
export async function authenticate(request: FastifyRequest, credentials: Credentials): Promise<User> {
  for (const h of API_KEY_HEADERS) {
    const v = request.headers[h];
    if (typeof v === 'string' && v !== '') return credentials.authenticateApiKeyOffThread(v.trim());
  }
  const auth = request.headers.authorization;
  if (typeof auth === 'string') {
    const [scheme, value = ''] = auth.trim().split(/\s+/, 2);
    if (scheme?.toLowerCase() === 'bearer' && value) return credentials.authenticateToken(value);
    if (scheme?.toLowerCase() === 'basic' && value) {
      const decoded = Buffer.from(value, 'base64').toString('utf8');
      const sep = decoded.indexOf(':');
      if (sep > 0) return credentials.authenticatePasswordOffThread(decoded.slice(0, sep), decoded.slice(sep + 1));
    }
  }
  throw new UnauthorizedError('Not authenticated: send an API key in the Galileo-API-Key header, or a bearer token');
}
