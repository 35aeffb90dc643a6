// Guarantees: for every operation of the OpenAPI document and every field position of its body,
// query and path (derived from the document, not listed by hand), wrong types, deep nesting, huge
// strings, dropped required fields and unknown fields get a 2xx or a 4xx, never a 5xx; a request the
// document calls invalid gets a 422 whose detail names the field; an unknown field is ignored (never
// named in a 422); every answer also passes the contract check. Fixed seed; in CI two mutations per
// field, for the full set: TRACELAKE_SCHEMA_FUZZ_ALL=1 [TRACELAKE_SCHEMA_FUZZ_SEED=N] node test/run.mjs schema-fuzz
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TraceStore } from '../../src/engine/trace-store.js';
import { buildServer } from '../../src/server/build-server.js';
import { takeViolations } from '../../src/server/openapi/contract.js';
import { Rng } from '../support/fuzz/rng.js';
import { names, SchemaCases, UNKNOWN, type Built, type Case } from '../support/fuzz/schema-cases.js';
import { seedFor, seedTrace, type SeedWorld } from '../support/fuzz/seeds.js';
import { tempDir } from '../support/helpers.js';

const SEED = Number(process.env['TRACELAKE_SCHEMA_FUZZ_SEED'] ?? 20261122);
const ALL = process.env['TRACELAKE_SCHEMA_FUZZ_ALL'] === '1';
const CONCURRENCY = 4;

test(`schema-driven fuzzing of every operation and field (seed ${SEED}${ALL ? ', every mutation' : ''})`, {
  timeout: 600_000,
}, async (t) => {
  const store = await TraceStore.open(tempDir(t, 'tracelake-schema-fuzz-'), { sealRows: 5_000 });
  t.after(() => store.close());
  const admin = store.users.create({ email: 'schema-fuzz@test', role: 'admin', password: 'schema-fuzz-password' });
  const key = store.users.createApiKey(admin.id).key;
  const app = buildServer({ store });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());
  const doc = (await (await fetch(`${url}/openapi.json`)).json()) as Record<string, any>;
  const cases = new SchemaCases(doc);
  const rng = new Rng(SEED);

  // The world the requests name: rebuilt before each operation where a request deleted part of it.
  let world: SeedWorld & { keyId: string; memberId: string } = null as never;
  const refresh = async (needsRecords: boolean) => {
    const alive =
      world &&
      store.findProjects().some((p) => p.id === world.projectId) &&
      Object.values(world.runs).every((id) => store.listRuns(world.projectId).some((r) => r.id === id));
    if (!alive) {
      const project = store.createProject({ name: `schema-fuzz-${rng.int(0, 1e9)}` });
      const runs = {
        log_stream: store.catalog.createRun(project.id, 'log_stream', 'ls').id,
        experiment: store.catalog.createRun(project.id, 'experiment', 'exp').id,
        metrics_testing: store.catalog.createRun(project.id, 'metrics_testing', 'mt').id,
      };
      const member = store.users.create({ email: `member-${rng.int(0, 1e9)}@test` });
      store.catalog.addProjectMember(project.id, member.id, 'viewer');
      world = {
        projectId: project.id,
        runs,
        traceIds: [],
        spanIds: [],
        sessionIds: [],
        scorerIds: [],
        scorerNames: [],
        userIds: [member.id],
        apiKey: key,
        email: admin.email,
        password: 'schema-fuzz-password',
        keyId: '',
        memberId: member.id,
      };
    }
    if (alive && !needsRecords && world.spanIds.length > 0) return;
    const ids = async (level: 'span' | 'trace' | 'session') =>
      (await store.search(level, world.projectId, { log_stream_id: world.runs.log_stream, limit: 5 })).records.map((r) => String(r['id']));
    if ((await ids('span')).length < 3)
      await store.logTraces(world.projectId, { log_stream_id: world.runs.log_stream, traces: [seedTrace(rng), seedTrace(rng)] as never });
    world.traceIds = await ids('trace');
    world.spanIds = await ids('span');
    world.sessionIds = await ids('session');
    const scorers = store.catalog.listScorers({}, { limit: 100 }).scorers.filter((s) => s.scorer_type !== 'preset');
    if (scorers.length === 0)
      scorers.push(store.catalog.createScorer({ name: `fuzz-scorer-${rng.int(0, 1e9)}`, metric_name: 'custom_score' } as never) as never);
    world.scorerIds = scorers.map((s) => s.id);
    world.scorerNames = scorers.map((s) => s.name);
    if (!world.keyId || needsRecords) world.keyId = store.users.createApiKey(admin.id).id; // a key the revoke route may take
  };

  const param = (name: string, path: string): string => {
    switch (name) {
      case 'project_id':
        return world.projectId;
      case 'run_id':
        return path.includes('/experiments/')
          ? world.runs.experiment
          : path.includes('/metrics_testing/')
            ? world.runs.metrics_testing
            : world.runs.log_stream;
      case 'trace_id':
        return world.traceIds[0]!;
      case 'span_id':
        return world.spanIds[0]!;
      case 'session_id':
        return world.sessionIds[0]!;
      case 'scorer_id':
        return world.scorerIds[0]!;
      case 'user_id':
        return path.includes('/api_keys') ? admin.id : world.memberId;
      case 'key_id':
        return world.keyId;
      default:
        return rng.uuid();
    }
  };

  const send = async (c: Case): Promise<{ status: number; body: any }> => {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(c.req.query)) for (const x of [v].flat()) q.append(k, x);
    const path = c.req.path.replace(/\{(\w+)\}/g, (_m, n: string) => param(n, c.req.path));
    const res = await fetch(`${url}${path}${q.size ? `?${q}` : ''}`, {
      method: c.req.method,
      headers: { 'Galileo-API-Key': key, ...(c.req.body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(c.req.body !== undefined ? { body: JSON.stringify(c.req.body) } : {}),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // kept as text
    }
    return { status: res.status, body };
  };

  /** `trusted`: the unmutated request was not refused, so a 422 must come from the mutation. */
  const judge = (c: Case, r: { status: number; body: any }, trusted = true): string | null => {
    if (r.status >= 500) return `answered ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`;
    if (r.status >= 400 && (typeof r.body !== 'object' || r.body === null || !('detail' in r.body))) return `${r.status} without detail`;
    const locs: (string | number)[][] =
      r.status === 422 && Array.isArray(r.body.detail) ? r.body.detail.map((d: { loc: (string | number)[] }) => d.loc) : [];
    if (c.kind === 'unknown field' && !c.invalid)
      return locs.some((l) => l.includes(UNKNOWN)) ? `422 names the unknown field: ${JSON.stringify(r.body)}` : null;
    if (c.invalid) {
      // Paths too long for the router are refused before any route: 414.
      if (c.kind === 'path: junk' && r.status === 414) return null;
      if (r.status !== 422) return `the document calls it invalid, the server answered ${r.status}`;
      if (!locs.some((l) => names(l, c.at))) return `422 does not name ${c.at.join('.')}: ${JSON.stringify(locs).slice(0, 300)}`;
      return null;
    }
    if (trusted && r.status === 422 && !locs.some((l) => names(l, c.at)))
      return `a valid request answered 422 naming other fields: ${JSON.stringify(r.body).slice(0, 300)}`;
    return null;
  };

  const failures: string[] = [];
  const stats = { requests: 0, operations: 0, invalid: 0, byStatus: new Map<number, number>(), baselineOk: 0, noValidBase: [] as string[] };
  const started = Date.now();
  // Deleting operations last, so they do not empty the world under the others.
  const ops = cases
    .operations()
    .sort((a, b) => Number(/delete/i.test(`${a.method}${a.path}`)) - Number(/delete/i.test(`${b.method}${b.path}`)));
  for (const { method, path, op } of ops) {
    // Record ids are looked up again only for the routes that name a record (or a key) in their path.
    await refresh(/\{(trace|span|session|key)_id\}/.test(path));
    stats.operations++;
    const bare = path.replace(/^\/v2(?=\/)/, '').replace(/\{(\w+)\}/g, ':$1');
    // A valid request to mutate: the first of a few seeds, the document's example or a minimal body
    // that the server does not refuse with a 422 (seeds are random, some depend on state).
    const media = op['requestBody']?.content?.['application/json'];
    const candidates = (): Built[] => {
      const out: Built[] = [];
      for (let i = 0; i < 4; i++) {
        const seed = seedFor(`${method.toUpperCase()} ${bare}`, undefined, world, rng);
        out.push({
          path,
          query: (seed.query as Record<string, string | string[]> | undefined) ?? {},
          ...(media ? { body: seed.body ?? media.example ?? cases.minimal(media.schema) } : {}),
        });
      }
      if (media?.example !== undefined) out.push({ path, query: {}, body: media.example });
      out.push({ path, query: {}, ...(media ? { body: cases.minimal(media.schema) } : {}) });
      for (const b of out)
        for (const p of op['parameters'] ?? [])
          if (p.in === 'query' && p.required && b.query[p.name] === undefined) b.query[p.name] = String(cases.minimal(p.schema));
      return out;
    };
    // The first candidate answered 2xx, else the first answered another 4xx than 422.
    let base: Built | null = null;
    let _baseline: Case | null = null;
    let fallback: [Built, Case] | null = null;
    let answered2xx = false;
    for (const b of candidates()) {
      const c: Case = {
        op: `${method.toUpperCase()} ${path}`,
        kind: 'valid',
        at: [],
        req: { ...b, method: method.toUpperCase() },
        invalid: false,
      };
      const r = await send(c);
      stats.requests++;
      const problem = judge(c, r);
      if (problem && r.status !== 422) failures.push(`${c.op} [valid request]: ${problem}`);
      if (r.status < 300) {
        [base, _baseline] = [b, c];
        answered2xx = true;
        stats.baselineOk++;
        break;
      }
      if (r.status !== 422) fallback ??= [b, c];
    }
    if (!base && fallback) [base, _baseline] = fallback;
    if (!base) {
      stats.noValidBase.push(`${method.toUpperCase()} ${path}`);
      base = candidates().at(-1)!;
    }
    const list = cases.casesFor(method, path, base, rng, ALL);
    // Only a base the server accepted makes a 422 on a schema-valid mutation the mutation's doing.
    const trusted = answered2xx;
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < list.length) {
          const c = list[next++]!;
          const r = await send(c);
          stats.requests++;
          if (c.invalid) stats.invalid++;
          stats.byStatus.set(r.status, (stats.byStatus.get(r.status) ?? 0) + 1);
          const problem = judge(c, r, trusted);
          if (problem)
            failures.push(
              `${c.op} [${c.kind} at ${c.at.join('.')}${c.kind.startsWith('query') ? ` ${JSON.stringify(c.req.query).slice(0, 80)}` : ''}]: ${problem}`,
            );
        }
      }),
    );
  }
  const seconds = (Date.now() - started) / 1000;
  const statuses = [...stats.byStatus]
    .sort((a, b) => a[0] - b[0])
    .map(([s, n]) => `${s}:${n}`)
    .join(' ');
  t.diagnostic(
    `${stats.requests} requests over ${stats.operations} operations in ${seconds.toFixed(1)} s; ${stats.invalid} invalid by the document; ` +
      `statuses ${statuses}; ${stats.baselineOk} valid requests answered 2xx`,
  );
  if (stats.noValidBase.length)
    t.diagnostic(`operations whose every seed was refused (mutations judged without a valid base): ${stats.noValidBase.join(', ')}`);
  assert.ok(stats.operations >= 75, `${stats.operations} operations`);
  assert.deepEqual(failures.slice(0, 25), [], `${failures.length} failures`);
  assert.deepEqual(takeViolations(), [], 'every answer matched the document');
});
