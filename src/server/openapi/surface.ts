// Which routes the OpenAPI document describes. Every route is part of the API, and so documented,
// unless it is one of these two kinds, each marked `schema: { hide: true }` (@fastify/swagger leaves
// hidden routes out):
//   1. an alias: the bare and /public/v2 copies of a /v2 route (the document lists the /v2 path once
//      and says every path also answers bare and under /public/v2);
//   2. a route that is not API at all (pages, static files, redirects), under one of NOT_API below.
// A hidden route that is neither fails the surface test (test/server/openapi.test.ts), and so does a
// documented route without a response schema. Non-JSON routes stay documented: declare their bodies
// per content type (`body: { content: { 'application/x-protobuf': { schema: Binary } } }`).
import { PREFIXES } from '../prefixes.js';

/**
 * Path prefixes that are not part of the HTTP API: a route whose URL equals one of them or continues
 * it after a `/` is left out of the document, needs no credentials and is not rate limited.
 * ('/' covers only the root itself.) Add a line here, with the reason, for a new non-API route.
 */
export const NOT_API: readonly { readonly prefix: string; readonly why: string }[] = [
  { prefix: '/docs', why: 'the API reference page (HTML, scripts and styles of Swagger UI)' },
  { prefix: '/ui', why: 'the browser viewer: its page, scripts and styles (src/server/viewer.ts)' },
  { prefix: '/', why: 'the root redirects browsers to the viewer' },
];

export function isNotApi(url: string): boolean {
  return NOT_API.some(({ prefix }) => url === prefix || (prefix !== '/' && url.startsWith(`${prefix}/`)));
}

/** The documented prefix: /v2, which every path of the hosted service's API reference carries. */
export const DOCUMENTED_PREFIX = '/v2';

/** The route without its prefix, and the prefix. */
export function splitPrefix(url: string): { prefix: string; rest: string } {
  for (const prefix of [...PREFIXES].sort((a, b) => b.length - a.length)) {
    if (prefix && url.startsWith(`${prefix}/`)) return { prefix, rest: url.slice(prefix.length) };
  }
  return { prefix: '', rest: url };
}

/** OpenAPI path of a Fastify route URL (`:id` -> `{id}`). */
export function openapiPath(url: string): string {
  return url.replace(/:(\w+)/g, '{$1}');
}
