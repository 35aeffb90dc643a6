// Guarantees: nothing a client sends names a file. Project, run, record, scorer and user ids in paths
// and bodies are validated as UUIDs (422) or unknown (404) before any handler runs; files are named
// only from catalog-minted ids and counters, so hostile project, run and record names end up as data;
// and the data folder itself (the operator's choice, from the CLI) may hold quotes, spaces, semicolons
// and unicode without breaking sealing or reopening.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { TraceStore } from '../../src/engine/trace-store.js';
import { Uuid } from '../../src/schemas/common.js';
import { issuesOf } from '../../src/schemas/check.js';
import { buildServer } from '../../src/server/build-server.js';
import { send } from '../support/fuzz/client.js';
import { collectRoutes } from '../support/fuzz/fuzzer.js';
import { PATH_PAYLOADS } from '../support/fuzz/values.js';
import { openStore, tempDir } from '../support/helpers.js';
import { nodeEntry } from '../support/node-entry.js';

const TRAVERSALS = [
  ...PATH_PAYLOADS,
  '../../../../../../etc/passwd',
  '..%2F..%2F..%2Fetc%2Fpasswd',
  '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
  '..%252f..%252f',
  '..%c0%af..%c0%af',
  'records',
  'manifest.json',
  '00000000-0000-0000-0000-000000000000/../../x',
];
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
/** Every file a data folder may hold. */
const LAYOUT = new RegExp(
  '^(manifest\\.json|id-filter\\.bin|dead-rows\\.json|catalog\\.log|catalog\\.json|token-secret|api-key|lock\\.duckdb|tmp(/.*)?|' +
    'wal/wal-\\d{9}\\.arrows|wal/rejected\\.ndjson|' +
    `records/project_id=${UUID}/run_id=${UUID}/kind=(span|trace|session)/seg-\\d{9}\\.(parquet|ids|idf|kids|kidrows|top))$`,
);

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(relative(dir, p));
    }
  };
  walk(dir);
  return out;
}

test('ids are validated as UUIDs: traversal strings never pass', () => {
  for (const bad of [
    ...TRAVERSALS,
    '',
    'x',
    `${'a'.repeat(8)}-aaaa-aaaa-aaaa-aaaaaaaaaaa/`,
    '{00000000-0000-0000-0000-000000000000}',
    '00000000-0000-0000-0000-000000000000\n',
    ' 00000000-0000-0000-0000-000000000000',
  ]) {
    assert.ok(issuesOf(Uuid, bad), `${JSON.stringify(bad)} is refused as an id`);
  }
  for (const good of ['00000000-0000-0000-0000-000000000000', 'ABCDEF01-2345-4789-8abc-def012345678', crypto.randomUUID()])
    assert.equal(issuesOf(Uuid, good), null, good);
});

test('traversal in every path parameter of every route answers 4xx', { timeout: 120_000 }, async (t) => {
  const { store, projectId, logStreamId } = await openStore(t);
  const admin = store.users.create({ email: 'trav-admin@test', role: 'admin' });
  const key = store.users.createApiKey(admin.id).key;
  const app = buildServer({ store });
  const routes = collectRoutes(app);
  const address = new URL(await app.listen({ port: 0, host: '127.0.0.1' }));
  t.after(() => app.close());
  const withParams = routes.filter((r) => r.url.includes(':'));
  assert.ok(withParams.length > 50);
  let requests = 0;
  for (const route of withParams) {
    const names = [...route.url.matchAll(/:(\w+)/g)].map((m) => m[1]!);
    // All payloads at the bare paths; the /v2 and /public/v2 copies share the handlers, so a few there.
    const payloads = /^\/(public\/)?v2\//.test(route.url) ? TRAVERSALS.filter((_, i) => i % 6 === 0) : TRAVERSALS;
    for (const target of names) {
      for (const bad of payloads) {
        const path = route.url.replace(/:(\w+)/g, (_m, name: string) =>
          name === target ? bad : name === 'project_id' ? projectId : name === 'run_id' ? logStreamId : crypto.randomUUID(),
        );
        const body = route.method === 'GET' || route.method === 'HEAD' ? '' : '{}';
        const raw = Buffer.from(
          `${route.method} ${path.replace(/\u0000/g, '%00')} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nGalileo-API-Key: ${key}\r\n` +
            `${body ? `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n` : ''}\r\n${body}`,
        );
        const res = await send(address, { method: route.method, path, headers: {}, raw }, 10_000);
        requests++;
        assert.ok(res, `${route.method} ${route.url} with ${target}=${JSON.stringify(bad)}: an answer`);
        assert.ok(
          res.status >= 400 && res.status < 500,
          `${route.method} ${route.url} with ${target}=${JSON.stringify(bad)} answered ${res.status}: ${res.text.slice(0, 200)}`,
        );
      }
    }
  }
  t.diagnostic(`${requests} traversal requests over ${withParams.length} routes with path parameters`);
  const files = filesUnder(store.dir);
  for (const f of files) assert.match(f, LAYOUT, `unexpected file ${f}`);
});

test('traversal in body ids answers 422 at the field; hostile names stay data', async (t) => {
  const { dir, store, projectId, logStreamId } = await openStore(t);
  const trace = crypto.randomUUID();
  const fields: [string, (bad: string) => unknown][] = [
    ['log_stream_id', (bad) => store.logTraces(projectId, { log_stream_id: bad, traces: [{ name: 't' }] })],
    ['experiment_id', (bad) => store.logTraces(projectId, { experiment_id: bad, traces: [{ name: 't' }] })],
    ['session_id', (bad) => store.logTraces(projectId, { log_stream_id: logStreamId, session_id: bad, traces: [{ name: 't' }] })],
    ['traces.0.id', (bad) => store.logTraces(projectId, { log_stream_id: logStreamId, traces: [{ id: bad, name: 't' }] })],
    [
      'traces.0.spans.0.id',
      (bad) => store.logTraces(projectId, { log_stream_id: logStreamId, traces: [{ name: 't', spans: [{ type: 'tool', id: bad }] }] }),
    ],
    [
      'trace_id',
      (bad) =>
        store.records.logSpans(projectId, { log_stream_id: logStreamId, trace_id: bad, parent_id: trace, spans: [{ type: 'tool' }] }),
    ],
    [
      'parent_id',
      (bad) =>
        store.records.logSpans(projectId, { log_stream_id: logStreamId, trace_id: trace, parent_id: bad, spans: [{ type: 'tool' }] }),
    ],
    ['metrics_testing_id', (bad) => store.count('span', projectId, { metrics_testing_id: bad })],
  ];
  for (const [field, call] of fields) {
    for (const bad of TRAVERSALS) {
      await assert.rejects(
        async () => call(bad),
        (err: { statusCode?: number; issues?: { loc: (string | number)[] }[] }) => {
          assert.equal(err.statusCode, 422, `${field}=${JSON.stringify(bad)}`);
          assert.ok(
            err.issues?.some((i) => i.loc.join('.') === `body.${field}`),
            `${field}=${JSON.stringify(bad)}: ${JSON.stringify(err.issues)}`,
          );
          return true;
        },
      );
    }
  }
  for (const bad of TRAVERSALS.slice(0, 6)) {
    await assert.rejects(
      async () => store.count('span', bad, {}),
      (err: { statusCode?: number }) => err.statusCode === 404,
      `project ${JSON.stringify(bad)}`,
    );
  }
  // Hostile names are data; an upper-case run id still resolves to the catalog's own id.
  const p = store.createProject({ name: '../../../../etc/passwd' });
  const run = store.createLogStream(p.id, '..\\..\\windows');
  await store.logTraces(p.id, {
    log_stream_id: run.id.toUpperCase(),
    traces: TRAVERSALS.map((name) => ({
      name,
      input: name,
      tags: [name],
      spans: [{ type: 'tool', name, metrics: { [name || 'empty']: 1 } }],
    })),
  });
  await store.flush();
  await store.logTraces(projectId, { log_stream_id: logStreamId, traces: [{ name: '../x' }] });
  const files = filesUnder(dir);
  for (const f of files) assert.match(f, LAYOUT, `unexpected file ${f}`);
  assert.ok(
    files.some((f) => f.includes(`project_id=${p.id}/run_id=${run.id}/`)),
    'segments are named by catalog ids',
  );
  assert.equal((await store.count('trace', p.id, {})).total_count, TRAVERSALS.length);
});

test('a data folder named with quotes, semicolons, spaces and unicode: log, seal, reopen (library and CLI)', {
  timeout: 120_000,
}, async (t) => {
  const base = tempDir(t);
  for (const name of [
    "it's here",
    "'; DROP TABLE mem; --",
    'semi;colon $HOME `x` "q"',
    'ünï cødé 日本 🚀',
    'back\\slash',
    '100% _under_',
  ]) {
    const dir = join(base, name);
    const store = await TraceStore.open(dir);
    const p = store.createProject({ name: 'p' });
    const ls = store.createLogStream(p.id, 's');
    await store.logTraces(p.id, { log_stream_id: ls.id, traces: [{ name: 't', spans: [{ type: 'tool', name: 's', metrics: { m: 1 } }] }] });
    await store.flush();
    await store.logTraces(p.id, { log_stream_id: ls.id, traces: [{ name: 't2' }] });
    await store.close();
    const again = await TraceStore.open(dir);
    try {
      assert.equal((await again.count('trace', p.id, {})).total_count, 2, `folder ${JSON.stringify(name)}`);
      assert.equal((await again.count('span', p.id, {})).total_count, 1, `folder ${JSON.stringify(name)}`);
    } finally {
      await again.close();
    }
  }
  // The CLI with such a folder: serve, log over HTTP, SIGTERM, reopen and seal.
  const dir = join(base, "cli's; folder");
  const child = spawn(process.execPath, [...nodeEntry('src/cli.ts'), 'serve', '--data', dir, '--port', '0', '--quiet'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, TRACELAKE_API_KEY: '' },
  });
  t.after(() => child.kill('SIGKILL'));
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const address = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = / at (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`cli exited ${code}: ${err}`)));
  });
  const key = readFileSync(join(dir, 'api-key'), 'utf8').trim();
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${address}${path}`, {
      method,
      headers: { 'Galileo-API-Key': key, 'Content-Type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: r.status, body: (await r.json()) as any };
  };
  const project = await call('POST', '/v2/projects', { name: "o'brien" });
  assert.equal(project.status, 200, JSON.stringify(project.body));
  const stream = await call('POST', `/v2/projects/${project.body.id}/log_streams`, { name: 'default' });
  const logged = await call('POST', `/v2/projects/${project.body.id}/traces`, {
    log_stream_id: stream.body.id,
    traces: [{ name: 't', spans: [{ type: 'tool', name: 's' }] }],
  });
  assert.equal(logged.status, 200, JSON.stringify(logged.body));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  assert.equal(await exited, 0, `clean shutdown: ${err}`);
  // The stop leaves unsealed rows in the log; the next open replays them, and a seal writes them there.
  const again = await TraceStore.open(dir);
  try {
    assert.equal((await again.count('span', project.body.id, {})).total_count, 1);
    await again.flush();
    assert.ok(
      filesUnder(dir).some((f) => f.endsWith('.parquet')),
      'sealed into Parquet under the folder',
    );
  } finally {
    await again.close();
  }
  assert.ok(statSync(dir).isDirectory());
});
