// Guarantees the viewer is served at /ui/ without credentials, under a strict CSP, with index.html
// for every screen path, long-cached hashed assets, no file outside its folder, GET / redirecting
// there, and its routes hidden from the API schema.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { buildUi, packageRoot } from '../../scripts/build-ui.js';
import { buildServer } from '../../src/server/build-server.js';
import { defaultViewerDir, VIEWER_CSP } from '../../src/server/viewer.js';
import { openStore, tempDir } from '../support/helpers.js';

async function serve(t: import('node:test').TestContext, viewer: Parameters<typeof buildServer>[0]['viewer']) {
  const { store } = await openStore(t);
  const app = buildServer({ store, viewer });
  const routes: { url: string; method: string; hide: boolean; public: boolean }[] = [];
  app.addHook('onRoute', (r) => {
    for (const m of [r.method].flat())
      routes.push({
        url: r.url,
        method: String(m),
        hide: (r.schema as { hide?: boolean } | undefined)?.hide === true,
        public: (r.config as { public?: boolean } | undefined)?.public === true,
      });
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());
  return {
    url,
    routes,
    get: (path: string, headers: Record<string, string> = {}) => fetch(`${url}${path}`, { redirect: 'manual', headers }),
  };
}

test('the page, its assets and every screen path are served without credentials, under a strict CSP', async (t) => {
  const built = await buildUi(join(tempDir(t), 'ui'));
  const s = await serve(t, { dir: built.dir });
  const root = await s.get('/');
  assert.equal(root.status, 302);
  assert.equal(root.headers.get('location'), '/ui/');
  for (const path of ['/ui', '/ui/', '/ui/p/abc/ls/def/traces?sort=name:asc', '/ui/p/abc/traces/xyz', '/ui/not/a/screen']) {
    const res = await s.get(path);
    assert.equal(res.status, 200, path);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal(res.headers.get('content-security-policy'), VIEWER_CSP);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    const html = await res.text();
    assert.ok(html.includes(`src="/ui/${built.script}"`) && html.includes(`href="/ui/${built.stylesheet}"`), path);
  }
  const csp = VIEWER_CSP;
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  const js = await s.get(`/ui/${built.script}`);
  assert.equal(js.status, 200);
  assert.match(js.headers.get('content-type') ?? '', /javascript/);
  assert.match(js.headers.get('cache-control') ?? '', /max-age=31536000.*immutable/);
  assert.ok((await js.text()).length === built.bytes.script);
  const css = await s.get(`/ui/${built.stylesheet}`);
  assert.match(css.headers.get('content-type') ?? '', /text\/css/);
  assert.equal((await s.get('/ui/favicon.svg')).status, 200);
  // A missing asset is a 404, not the page (a stale script name must not load HTML as script).
  const gone = await s.get('/ui/main-ZZZZZZZZ.js');
  assert.equal(gone.status, 404);
  // The API still wants credentials.
  assert.equal((await s.get('/v2/projects/all')).status, 401);
});

test('nothing outside the viewer folder is reachable through /ui/', async (t) => {
  const built = await buildUi(join(tempDir(t), 'ui'));
  const s = await serve(t, { dir: built.dir });
  for (const path of [
    '/ui/../package.json',
    '/ui/..%2fpackage.json',
    '/ui/%2e%2e/%2e%2e/package.json',
    '/ui/....//package.json',
    '/ui/.%2e/index.html',
    '/ui/%00.js',
    '/ui/a%5c..%5cpackage.json',
  ]) {
    const res = await s.get(path);
    const body = await res.text();
    assert.ok(res.status < 500, `${path}: ${res.status}`);
    assert.ok(!body.includes('"name": "tracelake"') && !body.includes('"dependencies"'), `${path} leaked a file`);
  }
});

test('viewer routes are marked as not part of the API, and public', async (t) => {
  const built = await buildUi(join(tempDir(t), 'ui'));
  const s = await serve(t, { dir: built.dir });
  const viewer = s.routes.filter((r) => r.url === '/' || r.url === '/ui' || r.url.startsWith('/ui/'));
  assert.deepEqual(
    viewer
      .filter((r) => r.method === 'GET')
      .map((r) => r.url)
      .sort(),
    ['/', '/ui', '/ui/*'],
  );
  for (const r of viewer) assert.ok(r.hide && r.public, `${r.method} ${r.url}`);
  // Other hidden routes are the API's bare and /public/v2 aliases (the document lists each /v2 path once) and /docs.
  const documented = new Set(s.routes.filter((r) => !r.hide).map((r) => `${r.method} ${r.url}`));
  const alias = (r: { method: string; url: string }) => documented.has(`${r.method} /v2${r.url.replace(/^\/public\/v2/, '')}`);
  const stray = s.routes.filter((r) => r.hide && !viewer.includes(r) && !alias(r) && !r.url.startsWith('/docs'));
  assert.deepEqual(
    stray.map((r) => `${r.method} ${r.url}`),
    [],
    'no API route is hidden',
  );
});

test('without a build the page says how to build it; with the viewer off there is no page', async (t) => {
  const missing = await serve(t, { dir: join(tempDir(t), 'nothing') });
  const res = await missing.get('/ui/');
  assert.equal(res.status, 404);
  assert.match(await res.text(), /npm run build/);
  const off = await serve(t, false);
  assert.notEqual((await off.get('/ui/')).status, 200);
  assert.notEqual((await off.get('/')).status, 302);
});

test('by default the server serves dist/ui of this package, which `npm run build` fills', () => {
  assert.equal(defaultViewerDir(), join(packageRoot(), 'dist', 'ui'));
  // After `npm install` (prepare runs the build) the page is there for `npm start`.
  if (existsSync(join(packageRoot(), 'dist', 'scripts', 'build-ui.js'))) assert.ok(existsSync(join(defaultViewerDir(), 'index.html')));
});
