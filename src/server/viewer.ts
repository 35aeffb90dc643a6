// The browser viewer: static files built into dist/ui (scripts/build-ui.ts), served at /ui/ with a
// strict Content-Security-Policy; every other path under /ui/ answers index.html, so a copied URL
// of any screen loads the app, which reads its state from the URL. GET / redirects there. These are
// not API routes: they need no credentials (the page signs in through the API) and are hidden from
// the API's schema (`schema.hide`).
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifySchema } from 'fastify';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { assetPath } from '../assets.js';

export const VIEWER_PREFIX = '/ui/';

/**
 * Trace content is untrusted: scripts and styles only from our own files, no inline code, no
 * plugins, no framing, and data only from this origin.
 */
export const VIEWER_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': VIEWER_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
};

/** An asset name: one path segment of plain characters with an extension (the build is flat). */
const ASSET = /^[A-Za-z0-9_-][A-Za-z0-9._-]*\.(js|css|svg|png|map|txt|json)$/;
/** Built names carry an 8-character content hash (esbuild's [name]-[hash]); those never change. */
const HASHED = /-[A-Z0-9]{8}\.(js|css)$/;

/** dist/ui of this package (or of the single binary's unpacked files). */
export function defaultViewerDir(): string {
  return assetPath('dist/ui/');
}

function secure(reply: FastifyReply): FastifyReply {
  return reply.headers(SECURITY_HEADERS);
}

export async function installViewer(app: FastifyInstance, dir: string): Promise<void> {
  await app.register(fastifyStatic, { root: dir, serve: false });
  // `hide` is the schema keyword OpenAPI generators read to leave a route out.
  const route = { config: { public: true }, schema: { hide: true } as FastifySchema };
  const index = (reply: FastifyReply) => {
    secure(reply).header('cache-control', 'no-cache');
    if (!existsSync(join(dir, 'index.html'))) {
      return reply
        .code(404)
        .type('text/plain; charset=utf-8')
        .send(`The viewer is not built (no ${join(dir, 'index.html')}): run \`npm run build\`.\n`);
    }
    return reply.sendFile('index.html', { cacheControl: false });
  };
  app.get('/', route, async (_req, reply) => reply.redirect(VIEWER_PREFIX, 302));
  // /ui and /ui/ (one route: the router ignores trailing slashes); the wildcard does not match them.
  app.get('/ui', route, async (_req, reply) => index(reply));
  app.get(`${VIEWER_PREFIX}*`, route, async (req, reply) => {
    const rest = (req.params as { '*': string })['*'];
    if (!ASSET.test(rest)) return index(reply);
    const file = join(dir, rest);
    if (!existsSync(file) || !statSync(file).isFile()) {
      return secure(reply).code(404).type('text/plain; charset=utf-8').send(`No such viewer file: ${rest}\n`);
    }
    secure(reply);
    if (HASHED.test(rest)) return reply.sendFile(rest, { cacheControl: true, maxAge: 365 * 24 * 3600 * 1000, immutable: true });
    return reply.header('cache-control', 'no-cache').sendFile(rest, { cacheControl: false });
  });
}
