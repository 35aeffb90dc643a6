// Rate limiting per API key (@fastify/rate-limit), off unless configured: at most `max` requests per
// `windowMs` for each credential (an API key header, a bearer token or Basic credentials; requests
// without any count per client address). Beyond it: 429 `{detail}` with Retry-After in seconds.
// Credentials are counted by a hash, never kept as given; pages outside the API are not limited.
import rateLimit from '@fastify/rate-limit';
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { TraceLakeError } from '../errors.js';
import { API_KEY_HEADERS } from './auth/request-auth.js';
import { isNotApi } from './openapi/surface.js';

export interface RateLimitOptions {
  /** Requests allowed per window and credential. */
  max: number;
  /** Length of the window in milliseconds (default 60,000). */
  windowMs?: number;
}

class RateLimitedError extends TraceLakeError {
  constructor(seconds: number) {
    super('RATE_LIMITED', 429, `Rate limit exceeded: retry in ${seconds} second${seconds === 1 ? '' : 's'}`);
  }
}

function credentialOf(req: FastifyRequest): string {
  for (const h of API_KEY_HEADERS) {
    const v = req.headers[h];
    if (typeof v === 'string' && v.trim() !== '') return `key:${v.trim()}`;
  }
  const auth = req.headers.authorization;
  if (typeof auth === 'string' && auth.trim() !== '') return `auth:${auth.trim()}`;
  return `ip:${req.ip}`;
}

export function installRateLimit(app: FastifyInstance, options: RateLimitOptions): void {
  if (!Number.isInteger(options.max) || options.max < 1) throw new Error(`rate limit: max must be a positive integer (got ${options.max})`);
  const windowMs = options.windowMs ?? 60_000;
  if (!Number.isInteger(windowMs) || windowMs < 1) throw new Error(`rate limit: windowMs must be a positive integer (got ${windowMs})`);
  void app.register(rateLimit, {
    global: true,
    max: options.max,
    timeWindow: windowMs,
    keyGenerator: (req) => createHash('sha256').update(credentialOf(req)).digest('base64url'),
    allowList: (req) => req.routeOptions.url !== undefined && isNotApi(req.routeOptions.url),
    addHeadersOnExceeding: { 'x-ratelimit-limit': true, 'x-ratelimit-remaining': true, 'x-ratelimit-reset': true },
    addHeaders: { 'x-ratelimit-limit': true, 'x-ratelimit-remaining': true, 'x-ratelimit-reset': true, 'retry-after': true },
    errorResponseBuilder: (_req, ctx) => new RateLimitedError(Math.max(1, Math.ceil(ctx.ttl / 1000))),
  });
}
