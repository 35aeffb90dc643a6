// Guarantees: GET /openapi.json (bare, /v2, /public/v2, no credentials) is a valid OpenAPI 3.1
// document generated from the route schemas; every route is documented or excluded on purpose (a
// route hidden without being listed fails); every operation has a summary, a tag, a success schema,
// its error answers and the security schemes; the examples validate; /docs serves Swagger UI from local
// files only and, rendered in Chromium, shows every operation; the contract check (on in the whole
// suite) turns an answer that breaks the document into a failure.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { validate } from '@readme/openapi-parser';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../src/server/build-server.js';
import { CONTRACT_ENV, takeViolations } from '../../src/server/openapi/contract.js';
import { SECURITY_SCHEMES } from '../../src/server/openapi/document.js';
import { TAGS } from '../../src/server/openapi/operations.js';
import { documentValidator, operations, pointer, surfaceProblems, type Json } from '../support/openapi.js';
import { browserSkip, chromiumPath } from '../support/browser.js';
import { openStore, tempDir } from '../support/helpers.js';

async function serve(
  t: Parameters<typeof openStore>[0],
  extra?: (app: FastifyInstance) => void,
): Promise<{ app: FastifyInstance; url: string }> {
  const { store } = await openStore(t);
  const app = buildServer({ store, checkContract: true });
  extra?.(app);
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());
  return { app, url };
}

test('the document is valid OpenAPI 3.1, the same under every prefix, without credentials', async (t) => {
  const { url } = await serve(t);
  const texts = await Promise.all(
    ['/openapi.json', '/v2/openapi.json', '/public/v2/openapi.json'].map(async (p) => {
      const r = await fetch(`${url}${p}`);
      assert.equal(r.status, 200, p);
      assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
      return r.text();
    }),
  );
  assert.equal(new Set(texts).size, 1);
  const doc = JSON.parse(texts[0]!) as Json;
  assert.equal(doc['openapi'], '3.1.0');
  const result = await validate(structuredClone(doc) as never);
  assert.equal(result.valid, true, JSON.stringify(result).slice(0, 2000));
  assert.deepEqual(Object.keys(doc['components']['securitySchemes']).sort(), Object.keys(SECURITY_SCHEMES).sort());
  const headers = Object.values(doc['components']['securitySchemes'] as Json).map((s) => s['name'] ?? s['scheme'] ?? s['type']);
  for (const h of ['Galileo-API-Key', 'Service-API-Key', 'Splunk-AO-API-Key', 'basic', 'oauth2']) assert.ok(headers.includes(h), h);
  assert.deepEqual(
    doc['tags'].map((x: Json) => x['name']),
    TAGS.map((x) => x.name),
  );
});

test('every route is documented or excluded on purpose; every operation is complete', async (t) => {
  const { app } = await serve(t);
  await app.ready();
  assert.deepEqual(surfaceProblems(app), []);
  const doc = app.apiSurface.document();
  const ops = operations(doc);
  assert.ok(ops.length >= 75, `${ops.length} operations`);
  assert.equal(new Set(ops.map((o) => o.op['operationId'])).size, ops.length, 'operation ids are unique');
  const tags = new Set<string>(TAGS.map((x) => x.name));
  for (const { method, path, op } of ops) {
    const where = `${method} ${path}`;
    assert.ok(
      op['tags'].every((x: string) => tags.has(x)),
      where,
    );
    const publicRoute = Array.isArray(op['security']) && op['security'].length === 0;
    const statuses = Object.keys(op['responses']);
    assert.ok(statuses.includes('500') && statuses.includes('429'), where);
    if (!publicRoute) for (const s of ['401', '403']) assert.ok(statuses.includes(s), `${where} lists ${s}`);
    if (op['requestBody']) for (const s of ['413', '415', '422']) assert.ok(statuses.includes(s), `${where} lists ${s}`);
    if ((op['parameters'] ?? []).some((p: Json) => p['in'] === 'path'))
      for (const s of ['404', '422']) assert.ok(statuses.includes(s), `${where} lists ${s}`);
    // OTLP answers refusals with its own google.rpc.Status (in the request's encoding), the Iceberg
    // catalog with Iceberg's error model: not {detail}.
    const own = path === '/v1/traces' || path === '/otel/traces' || path.startsWith('/iceberg/');
    if (!own)
      for (const [s, r] of Object.entries(op['responses'] as Json))
        if (Number(s) >= 400) assert.match(String(r['$ref']), /^#\/components\/responses\/Error\d{3}$/, `${where} ${s}`);
  }
  // The public ones: health, login, the document, the Iceberg catalog's token exchange.
  const open = ops
    .filter((o) => Array.isArray(o.op['security']) && o.op['security'].length === 0)
    .map((o) => `${o.method} ${o.path}`)
    .sort();
  assert.deepEqual(open, [
    'get /v2/healthcheck',
    'get /v2/openapi.json',
    'post /iceberg/v1/oauth/tokens',
    'post /v2/login',
    'post /v2/login/api_key',
  ]);
  // Every path also answers bare and under /public/v2; the bare v1 listing is its own operation.
  assert.ok(doc['paths']['/projects/paginated']?.post && doc['paths']['/v2/projects/paginated']?.post);
  assert.notDeepEqual(doc['paths']['/projects/paginated'].post.requestBody, doc['paths']['/v2/projects/paginated'].post.requestBody);
});

test('the examples validate against their schemas; error answers have their shapes', async (t) => {
  const { app } = await serve(t);
  await app.ready();
  const doc = app.apiSurface.document();
  const check = documentValidator(doc);
  let examples = 0;
  for (const { method, path, op } of operations(doc)) {
    const media = op['requestBody']?.content?.['application/json'];
    if (media?.example === undefined) continue;
    examples++;
    assert.equal(
      check(pointer('paths', path, method, 'requestBody', 'content', 'application/json', 'schema'), media.example),
      null,
      `${method} ${path} example`,
    );
  }
  assert.ok(examples >= 20, `${examples} examples`);
  for (const [name, r] of Object.entries(doc['components']['responses'] as Json)) {
    assert.equal(
      check(pointer('components', 'responses', name, 'content', 'application/json', 'schema'), r.content['application/json'].example),
      null,
      name,
    );
  }
  assert.notEqual(
    check(pointer('components', 'responses', 'Error422', 'content', 'application/json', 'schema'), { detail: 'text' }),
    null,
    '422 detail is a list',
  );
  assert.notEqual(
    check(pointer('components', 'responses', 'Error404', 'content', 'application/json', 'schema'), { error: 'x' }),
    null,
    '404 needs detail',
  );
});

test('a route hidden from the document without being listed as non-API fails the surface check', async (t) => {
  const { app } = await serve(t, (a) => {
    void a.register(async (s) => {
      s.get('/v2/secret-route', { schema: { hide: true } }, async () => ({ ok: true }));
      s.get('/docs/extra-page', { schema: { hide: true } }, async () => 'page');
    });
  });
  await app.ready();
  assert.deepEqual(surfaceProblems(app), ['GET /v2/secret-route is hidden from the document but not under a NOT_API prefix']);
});

test('a route taking protobuf or JSON is documented with both content types and passes the check', async (t) => {
  const { app, url } = await serve(t, (a) => {
    void a.register(async (s) => {
      s.addContentTypeParser('application/x-protobuf', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
      s.post(
        '/v2/otlp-like',
        {
          config: { public: true },
          schema: {
            summary: 'Ingest in two encodings',
            tags: ['logging'],
            body: {
              content: {
                'application/x-protobuf': { schema: { type: 'string', format: 'binary' } },
                'application/json': { schema: { type: 'object', properties: { n: { type: 'integer' } } } },
              },
            },
            response: { 200: { type: 'object', required: ['bytes'], properties: { bytes: { type: 'integer' } } } },
          },
        },
        async (req) => ({ bytes: Buffer.isBuffer(req.body) ? req.body.length : JSON.stringify(req.body).length }),
      );
    });
  });
  const op = app.apiSurface.document()['paths']['/v2/otlp-like'].post as Json;
  assert.deepEqual(Object.keys(op['requestBody'].content).sort(), ['application/json', 'application/x-protobuf']);
  takeViolations();
  const proto = await fetch(`${url}/v2/otlp-like`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-protobuf' },
    body: new Uint8Array([10, 3, 1, 2, 3]),
  });
  assert.deepEqual([proto.status, await proto.json()], [200, { bytes: 5 }]);
  const json = await fetch(`${url}/v2/otlp-like`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"n": "x"}' });
  assert.equal(json.status, 422);
  assert.deepEqual(takeViolations(), []);
  assert.deepEqual(surfaceProblems(app), []);
});

test('the contract check is on in the suite and turns answers that break the document into failures', async (t) => {
  assert.equal(process.env[CONTRACT_ENV], '1', 'test/run.mjs turns the contract check on for every server');
  const { url } = await serve(t, (a) => {
    void a.register(async (s) => {
      s.get('/v2/hidden', { schema: { hide: true }, config: { public: true } }, async () => ({ ok: true }));
      s.get(
        '/v2/liar',
        {
          config: { public: true },
          schema: { response: { 200: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } } } },
          serializerCompiler: () => JSON.stringify,
        },
        async () => ({ n: 'text' }),
      );
      s.get('/v2/teapot', { config: { public: true }, schema: { response: { 200: { type: 'object' } } } }, async (_q, reply) =>
        reply.code(418 as 200).send({ detail: 'short and stout' }),
      );
    });
  });
  takeViolations();
  const got = async (p: string) => {
    const r = await fetch(`${url}${p}`);
    return { status: r.status, body: (await r.json()) as Json };
  };
  const hidden = await got('/v2/hidden');
  assert.equal(hidden.status, 500);
  assert.match(hidden.body['detail'], /left out of the document/);
  const liar = await got('/v2/liar');
  assert.equal(liar.status, 500);
  assert.match(liar.body['detail'], /\/n must be integer/);
  const teapot = await got('/v2/teapot');
  assert.equal(teapot.status, 500);
  assert.match(teapot.body['detail'], /418, a status the document does not list/);
  assert.equal(takeViolations().length, 3);
  // Ordinary answers pass: documented statuses and bodies.
  for (const [p, s] of [
    ['/v2/healthcheck', 200],
    ['/projects/all', 401],
    ['/no/such/route', 401],
    ['/docs', 200],
  ] as const)
    assert.equal((await fetch(`${url}${p}`)).status, s, p);
  assert.deepEqual(takeViolations(), []);
});

test('/docs serves Swagger UI from local files only and renders every operation', { timeout: 120_000 }, async (t) => {
  const { app, url } = await serve(t);
  const html = await (await fetch(`${url}/docs`)).text();
  const init = await (await fetch(`${url}/docs/static/swagger-initializer.js`)).text();
  for (const text of [html, init]) assert.doesNotMatch(text, /(?:src|href)="(?:https?:)?\/\//, 'no asset from another host');
  for (const asset of [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!)) {
    const r = await fetch(new URL(asset, `${url}/docs/`));
    assert.equal(r.status, 200, asset);
    await r.arrayBuffer();
  }
  const ops = operations(app.apiSurface.document())
    .map((o) => `${o.method.toUpperCase()} ${o.path}`)
    .sort();
  // The browser tests' lookup: without Chromium this skips, or fails where a browser is required (CI).
  const noBrowser = browserSkip();
  if (noBrowser) {
    t.skip(noBrowser);
    return;
  }
  const profile = tempDir(t, 'tracelake-chromium-');
  const dom = await new Promise<string>((resolve, reject) => {
    // The flags keep a headless Chromium from reaching out (closed network here) and from waiting on it.
    const child = spawn(
      chromiumPath!,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--disable-dev-shm-usage',
        `--user-data-dir=${profile}`,
        '--virtual-time-budget=30000',
        '--dump-dom',
        `${url}/docs`,
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
  });
  const shown = [...dom.matchAll(/<span class="opblock-summary-method">(\w+)<\/span>[\s\S]*?data-path="([^"]+)"/g)]
    .map((m) => `${m[1]} ${m[2]!.replace(/&amp;/g, '&')}`)
    .sort();
  assert.deepEqual(shown, ops, 'the page shows every operation of the document, once');
});
