// The HTTP fuzzer: every route of a real server (enumerated from the Fastify instance, so a new route is
// fuzzed without anyone listing it) gets valid bodies mutated into hostile ones, random query strings,
// junk credentials, wrong content types, malformed JSON and raw malformed HTTP. Each answer is judged:
// never a 5xx, never silence (a per-request deadline), every 4xx carries `detail`, nothing internal
// (database errors, stack traces, the data folder) leaks. Alongside, a ledger client logs valid traces
// into a project the fuzzer cannot name, so the store's counts can be checked exactly afterwards.
import { createHmac, randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { TraceStore } from '../../../src/engine/trace-store.js';
import type { Level } from '../../../src/query/columns.js';
import { send, type FuzzRequest, type FuzzResponse } from './client.js';
import { cloneFuzz, toJsonText, TooBigError } from './json-text.js';
import { mutate } from './mutate.js';
import { Rng } from './rng.js';
import { seedFor, seedTrace, takesBody, type Seed, type SeedWorld } from './seeds.js';
import { HOSTILE_STRINGS, PATH_PAYLOADS, SQL_PAYLOADS } from './values.js';
import { internalsOf } from '../../../src/engine/internals.js';

export interface RouteInfo {
  method: string;
  url: string;
  schema: { body?: unknown; querystring?: unknown; params?: unknown } | undefined;
}

/** Call before `ready()`/`listen()`: fills the list with every route as it is registered. */
export function collectRoutes(app: FastifyInstance): RouteInfo[] {
  const routes: RouteInfo[] = [];
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) routes.push({ method: String(method), url: r.url, schema: r.schema as RouteInfo['schema'] });
  });
  return routes;
}

export const PREFIX_RE = /^\/(?:public\/)?v2(?=\/)/;
export const routeKey = (r: { method: string; url: string }) => `${r.method} ${r.url.replace(PREFIX_RE, '')}`;

export interface Credentials {
  adminKey: string;
  adminId: string;
  adminEmail: string;
  adminPassword: string;
  adminToken: string;
  userKey: string;
  userId: string;
}

export interface FuzzOptions {
  seed: number;
  iterations: number;
  seconds: number;
  concurrency: number;
  timeoutMs: number;
  /** Largest body sent (serialized); bigger mutations are cut back to their seed. */
  maxBodyBytes: number;
}

export interface Failure {
  iteration: number;
  route: string;
  problem: string;
  request: { method: string; path: string; headers: Record<string, string>; body?: string; raw?: string };
  response?: { status: number; text: string };
}

export interface FuzzStats {
  requests: number;
  byStatus: Map<number, number>;
  byRoute: Map<string, { total: number; ok: number; ms: number }>;
  buildMs: number;
  noAnswer: number;
  slowest: { ms: number; route: string };
  ledger: { requests: number; traces: number; spans: number; sessions: number; unacked: number };
}

const LEAKS = new RegExp(
  'Binder Error|Parser Error|Catalog Error|Conversion Error|Invalid Input Error|INTERNAL Error|Constraint Error|' +
    String.raw`duckdb|node_modules|\bat [\w.<>]+ \(|\.ts:\d+:\d+`,
  'i',
);

/** Everything the fuzzer needs to know about the server under test. */
export interface FuzzTarget {
  base: URL;
  store: TraceStore;
  routes: RouteInfo[];
  creds: Credentials;
  dataDir: string;
  /** Ids the fuzzer must never name (the ledger project and its run). */
  hidden: Set<string>;
  ledger: { projectId: string; logStreamId: string };
}

// ------------------------------------------------------------------ the world the requests refer to

interface ProjectPool {
  traceIds: string[];
  spanIds: string[];
  sessionIds: string[];
}

const EMPTY_POOL: ProjectPool = { traceIds: [], spanIds: [], sessionIds: [] };

/**
 * The live ids requests refer to. Picking is synchronous (catalog reads); record ids of the two main
 * projects are refreshed in the background (and the projects replenished with traces when the fuzzer
 * has deleted most of them), so building a request never waits on a query.
 */
class World {
  readonly #t: FuzzTarget;
  readonly #main: string[] = [];
  readonly #pools = new Map<string, ProjectPool>();
  #scorers: { ids: string[]; names: string[]; at: number } = { ids: [], names: [], at: -1e9 };
  #stopped = false;
  #loop: Promise<void> = Promise.resolve();

  constructor(target: FuzzTarget) {
    this.#t = target;
  }

  #ensureRuns(projectId: string, rng: Rng): void {
    const runs = this.#t.store.listRuns(projectId);
    for (const kind of ['log_stream', 'experiment', 'metrics_testing'] as const) {
      if (!runs.some((r) => r.kind === kind)) this.#t.store.catalog.createRun(projectId, kind, `${kind}-${rng.int(0, 1e9)}`);
    }
  }

  #ensureProject(index: number, rng: Rng): string {
    const store = this.#t.store;
    let id = this.#main[index];
    if (id === undefined || !store.findProjects().some((p) => p.id === id)) {
      id = store.createProject({ name: `fuzz-main-${index}-${rng.int(0, 1e9)}` }).id;
      this.#main[index] = id;
      this.#pools.delete(id);
    }
    this.#ensureRuns(id, rng);
    return id;
  }

  async #refreshPool(projectId: string, rng: Rng): Promise<void> {
    const store = this.#t.store;
    const ids = async (level: Level) => (await store.search(level, projectId, { limit: 40 })).records.map((r) => String(r['id']));
    let spanIds = await ids('span');
    if (spanIds.length < 5) {
      const stream = store.listRuns(projectId, 'log_stream')[0];
      if (stream)
        await store.logTraces(projectId, { log_stream_id: stream.id, traces: Array.from({ length: 3 }, () => seedTrace(rng)) as never });
      spanIds = await ids('span');
    }
    this.#pools.set(projectId, { traceIds: await ids('trace'), spanIds, sessionIds: await ids('session') });
  }

  start(rng: Rng): void {
    this.#ensureProject(0, rng);
    this.#ensureProject(1, rng);
    this.#loop = (async () => {
      while (!this.#stopped) {
        for (const index of [0, 1]) {
          try {
            await this.#refreshPool(this.#ensureProject(index, rng), rng);
          } catch {
            // Deleted under our feet by a fuzz request: the next round recreates it.
          }
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#loop;
  }

  /** A world for one request: a live project (usually one of the two main ones) with its runs and records. */
  pick(iteration: number, rng: Rng): SeedWorld {
    for (let attempt = 0; ; attempt++) {
      try {
        return this.#pick(iteration, rng);
      } catch (err) {
        if (attempt >= 5) throw err;
      }
    }
  }

  #pick(iteration: number, rng: Rng): SeedWorld {
    const store = this.#t.store;
    let projectId: string;
    if (rng.chance(0.85)) projectId = this.#ensureProject(rng.int(0, 1), rng);
    else {
      const others = store.findProjects().filter((p) => !this.#t.hidden.has(p.id));
      projectId = others.length ? rng.pick(others).id : this.#ensureProject(0, rng);
      this.#ensureRuns(projectId, rng);
    }
    const pool = this.#pools.get(projectId) ?? this.#pools.get(this.#main[0]!) ?? EMPTY_POOL;
    if (iteration - this.#scorers.at >= 50) {
      let list = store.catalog.listScorers({}, { limit: 100 }).scorers;
      if (list.filter((s) => s.scorer_type !== 'preset').length < 2) {
        store.catalog.createScorer({ name: `fuzz-scorer-${rng.int(0, 1e9)}`, metric_name: 'custom_score' } as never);
        list = store.catalog.listScorers({}, { limit: 100 }).scorers;
      }
      this.#scorers = { ids: list.map((s) => s.id), names: list.map((s) => s.name), at: iteration };
    }
    const runs = store.listRuns(projectId);
    const runOf = (kind: string) => rng.pick(runs.filter((r) => r.kind === kind)).id;
    const users = internalsOf(store)
      .catalog.table<{ id: string }>('users')
      .map((u) => u.id);
    return {
      projectId,
      runs: { log_stream: runOf('log_stream'), experiment: runOf('experiment'), metrics_testing: runOf('metrics_testing') },
      traceIds: pool.traceIds,
      spanIds: pool.spanIds,
      sessionIds: pool.sessionIds,
      scorerIds: this.#scorers.ids,
      scorerNames: this.#scorers.names,
      userIds: users,
      apiKey: this.#t.creds.adminKey,
      email: this.#t.creds.adminEmail,
      password: this.#t.creds.adminPassword,
    };
  }
}

// ------------------------------------------------------------------ building one request

const KEY_HEADERS = ['Galileo-API-Key', 'Service-API-Key', 'Splunk-AO-API-Key'];
const b64u = (s: string) => Buffer.from(s).toString('base64url');

function forgedTokens(c: Credentials): string[] {
  const now = Math.floor(Date.now() / 1000);
  const claims = b64u(JSON.stringify({ sub: c.adminId, iat: now, exp: now + 3600 }));
  const [h, p, s] = c.adminToken.split('.') as [string, string, string];
  const otherSecret = createHmac('sha256', randomBytes(32)).update(`${h}.${claims}`).digest('base64url');
  return [
    `${b64u('{"alg":"none","typ":"JWT"}')}.${claims}.`,
    `${b64u('{"alg":"none","typ":"JWT"}')}.${claims}`,
    `${h}.${claims}.${otherSecret}`,
    `${h}.${claims}.${s}`,
    `${h}.${b64u(JSON.stringify({ sub: c.adminId, iat: now, exp: 1 }))}.${s}`,
    `${h}.${p}.${s}x`,
    `${h}.${p}.${s.slice(0, -2)}`,
    `${h}.${p}`,
    `${h}.${p}.${s}.${s}`,
    `${h}.${b64u('not json')}.${s}`,
    `${c.adminToken} ${c.adminToken}`,
    'a.b.c',
    '...',
    'x'.repeat(10_000),
  ];
}

function authHeaders(rng: Rng, c: Credentials): Record<string, string> {
  const r = rng.next();
  if (r < 0.7) return { [rng.pick(KEY_HEADERS)]: c.adminKey };
  if (r < 0.77) return { [rng.pick(KEY_HEADERS)]: c.userKey };
  if (r < 0.81) return { Authorization: `${rng.pick(['Bearer', 'bearer', 'BEARER'])} ${c.adminToken}` };
  if (r < 0.83) return { Authorization: `Basic ${Buffer.from(`${c.adminEmail}:${c.adminPassword}`).toString('base64')}` };
  const junk: Record<string, string>[] = [
    {},
    { [rng.pick(KEY_HEADERS)]: '' },
    { [rng.pick(KEY_HEADERS)]: ' ' },
    { [rng.pick(KEY_HEADERS)]: 'junk' },
    { [rng.pick(KEY_HEADERS)]: `${c.adminKey}x` },
    { [rng.pick(KEY_HEADERS)]: c.adminKey.slice(0, -1) },
    { [rng.pick(KEY_HEADERS)]: c.adminKey.toUpperCase() },
    { [rng.pick(KEY_HEADERS)]: `${c.adminKey}, ${c.adminKey}` },
    { [rng.pick(KEY_HEADERS)]: 'k'.repeat(8_000) },
    { [rng.pick(KEY_HEADERS)]: rng.pick(SQL_PAYLOADS) },
    { 'Galileo-API-Key': 'junk', 'Service-API-Key': c.adminKey },
    { Authorization: 'Bearer' },
    { Authorization: 'Bearer ' },
    { Authorization: `Bearer ${rng.pick(forgedTokens(c))}` },
    { Authorization: `Bearer ${rng.pick(forgedTokens(c))}` },
    { Authorization: 'Basic' },
    { Authorization: 'Basic !!!not-base64!!!' },
    { Authorization: `Basic ${Buffer.from('no-colon').toString('base64')}` },
    { Authorization: `Basic ${Buffer.from(':').toString('base64')}` },
    { Authorization: `Basic ${Buffer.from(`${c.adminEmail}:`).toString('base64')}` },
    { Authorization: `Basic ${Buffer.from(`${c.adminEmail}:wrong`).toString('base64')}` },
    { Authorization: `Basic ${Buffer.from(`${c.adminEmail}:${'p'.repeat(20_000)}`).toString('base64')}` },
    { Authorization: `Basic ${Buffer.from(`'; DROP TABLE users; --:x`).toString('base64')}` },
    { Authorization: 'Digest username="admin"' },
    { Authorization: `Bearer ${c.adminKey}` },
    { Authorization: `Basic ${c.adminKey}` },
  ];
  return rng.pick(junk);
}

const CONTENT_TYPES = [
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/json;;;',
  'application/json, text/plain',
  'application/vnd.api+json',
  'application/merge-patch+json',
  'text/plain',
  'text/json',
  'application/xml',
  'multipart/form-data; boundary=xyz',
  'application/x-www-form-urlencoded',
  'application/octet-stream',
  '*/*',
  'json',
];

function malformedJson(text: string, rng: Rng): string {
  switch (rng.int(0, 13)) {
    case 0:
      return text.slice(0, rng.int(0, Math.max(0, text.length - 1)));
    case 1:
      return `${text}${rng.pick(['}', ']', ',', 'garbage', '\u0000', ' {}'])}`;
    case 2:
      return `\uFEFF${text}`;
    case 3:
      return rng.pick([
        '',
        ' ',
        'undefined',
        'NaN',
        '{',
        '[',
        '"',
        'nul',
        'tru',
        '{}}',
        '[]]',
        '{"a":}',
        '{"a" 1}',
        "{'a': 1}",
        '{a: 1}',
        '{"a":1,}',
        '[1,]',
        '/* c */ {}',
        '{"a":1}{"b":2}',
        '0x1F',
        '01',
        '-',
        '.5',
        '1.',
        '"\\x41"',
        '"\\uD800"',
        '"\\u12"',
      ]);
    case 4: {
      const at = rng.int(0, text.length);
      return `${text.slice(0, at)}${rng.pick(['\\', '"', '\u0001', '\n', '\u2028', '}'])}${text.slice(at)}`;
    }
    case 5:
      return text.replace(/"/g, "'");
    case 6:
      return `${text}\n${text}`;
    default:
      return text;
  }
}

function junkQuery(rng: Rng): string[] {
  return rng.pick([
    ['limit=-1'],
    ['limit=0'],
    ['limit=1e999'],
    ['limit=99999999999999999999'],
    ['limit=abc'],
    ['starting_token=-5'],
    ['starting_token=1.5'],
    ['actions=__proto__'],
    ['actions=update&actions=update&actions=nope'],
    ['include_logstreams=maybe'],
    ['include_logstreams=true&include_logstreams=false'],
    ['project_name=%00'],
    ['project_name=%ZZ'],
    [`project_name=${encodeLoose(rng.pick(HOSTILE_STRINGS).slice(0, 2000))}`],
    ['__proto__=1'],
    ['__proto__[polluted]=1'],
    ['constructor[prototype][polluted]=1'],
    ['a[b][c]=d'],
    [`${'q'.repeat(3000)}=1`],
    ['&&&=&='],
    ['metric_id=not-a-uuid'],
    [`metric_id=${rng.uuid()}`],
    ['type=gen_ai&project_type=%27%3B+DROP+TABLE+mem%3B--'],
  ]);
}

/** encodeURIComponent that also takes lone surrogates (written as the bytes of their 3-byte CESU-8 form: invalid UTF-8). */
export function encodeLoose(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return s
      .replace(/[\uD800-\uDFFF]/g, (c) => `\u0000${c.charCodeAt(0).toString(16)}`)
      .split(/\u0000([0-9a-f]{4})/)
      .map((part, i) =>
        i % 2
          ? `%ED%${(0x80 | ((parseInt(part, 16) >> 6) & 0x3f)).toString(16).toUpperCase()}%${(0x80 | (parseInt(part, 16) & 0x3f)).toString(16).toUpperCase()}`
          : encodeURIComponent(part),
      )
      .join('');
  }
}

function encodeQuery(q: Record<string, string | string[]>): string[] {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(q)) for (const x of [v].flat()) parts.push(`${encodeLoose(k)}=${encodeLoose(x)}`);
  return parts;
}

function paramValue(name: string, url: string, w: SeedWorld, rng: Rng): string {
  const any = (list: string[]) => (list.length ? rng.pick(list) : rng.uuid());
  switch (name) {
    case 'project_id':
      return w.projectId;
    case 'run_id':
      if (url.includes('/experiments/')) return w.runs.experiment;
      if (url.includes('/metrics_testing/')) return w.runs.metrics_testing;
      if (url.includes('/log_streams/')) return w.runs.log_stream;
      return rng.pick(Object.values(w.runs));
    case 'trace_id':
      return any(w.traceIds);
    case 'span_id':
      return any(w.spanIds);
    case 'session_id':
      return any(w.sessionIds);
    case 'scorer_id':
      return any(w.scorerIds);
    case 'user_id':
      return any(w.userIds);
    default:
      return rng.uuid();
  }
}

function junkParam(valid: string, rng: Rng): string {
  return rng.pick([
    rng.uuid(),
    valid.toUpperCase(),
    `{${valid}}`,
    valid.replace(/-/g, ''),
    `${valid}x`,
    valid.slice(1),
    '00000000-0000-0000-0000-000000000000',
    encodeLoose(rng.pick(PATH_PAYLOADS)),
    encodeLoose(rng.pick(SQL_PAYLOADS)),
    encodeLoose(rng.pick(HOSTILE_STRINGS).slice(0, 500)),
    'x'.repeat(5000),
    '%00',
    '%2e%2e',
    '%252e%252e%252f',
  ]);
}

function rawRequest(
  rng: Rng,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: string,
  host: string,
  plain = false,
): { raw: Buffer; mayGetNoAnswer: boolean } {
  const auth = Object.entries(headers)
    .filter(([k]) => !/^content-(type|length)$/i.test(k))
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  const bytes = Buffer.from(body);
  const head = (extra: string, m = method, p = path, version = 'HTTP/1.1') =>
    `${m} ${p} ${version}\r\nHost: ${host}\r\nConnection: close\r\n${auth}${extra}`;
  if (plain)
    return {
      raw: Buffer.concat([
        Buffer.from(head(`Content-Type: ${headers['Content-Type'] ?? 'application/json'}\r\nContent-Length: ${bytes.length}\r\n\r\n`)),
        bytes,
      ]),
      mayGetNoAnswer: false,
    };
  const kind = rng.int(0, 11);
  switch (kind) {
    case 0: // Content-Length shorter than the body: the rest is a second, garbage request
      return {
        raw: Buffer.concat([
          Buffer.from(head(`Content-Type: application/json\r\nContent-Length: ${Math.max(0, bytes.length - rng.int(1, 10))}\r\n\r\n`)),
          bytes,
        ]),
        mayGetNoAnswer: false,
      };
    case 1: // Content-Length longer than the body, and the client gives up
      return {
        raw: Buffer.concat([
          Buffer.from(head(`Content-Type: application/json\r\nContent-Length: ${bytes.length + rng.int(1, 1000)}\r\n\r\n`)),
          bytes,
        ]),
        mayGetNoAnswer: true,
      };
    case 2: // broken chunked encoding
      return {
        raw: Buffer.from(
          `${head('Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n')}zz\r\n${body.slice(0, 10)}\r\n0\r\n\r\n`,
        ),
        mayGetNoAnswer: true,
      };
    case 3: // control characters and non-latin1 bytes in a header
      return {
        raw: Buffer.concat([
          Buffer.from(head(`Content-Type: application/json\r\nX-Junk: a\u0001b\r\nGalileo-API-Key: `)),
          Buffer.from([0xff, 0xfe, 0x00, 0x80]),
          Buffer.from(`\r\nContent-Length: ${bytes.length}\r\n\r\n`),
          bytes,
        ]),
        mayGetNoAnswer: false,
      };
    case 4: // an unnormalised path
      return {
        raw: Buffer.from(
          `${head(
            `Content-Type: application/json\r\nContent-Length: ${bytes.length}\r\n\r\n`,
            method,
            rng.pick([
              '/projects/../../etc/passwd',
              '/v2/projects/..%2f..%2fetc%2fpasswd/spans/count',
              '/projects/./././all',
              '//projects//all',
              '/projects/%2e%2e/%2e%2e/spans/count',
              '/public/v2/../../etc/passwd',
              `${path}/../../..`,
              `${path}%00`,
              `${path}\\..\\..`,
            ]),
          )}${body}`,
        ),
        mayGetNoAnswer: false,
      };
    case 5: // an unknown or lowercase method
      return {
        raw: Buffer.from(
          `${head(`Content-Length: ${bytes.length}\r\n\r\n`, rng.pick(['FOO', 'post', 'PROPFIND', 'TRACE', 'CONNECT', 'OPTIONS']))}${body}`,
        ),
        mayGetNoAnswer: true,
      };
    case 6: // HTTP/1.0 without Host
      return {
        raw: Buffer.concat([
          Buffer.from(`${method} ${path} HTTP/1.0\r\n${auth}Content-Type: application/json\r\nContent-Length: ${bytes.length}\r\n\r\n`),
          bytes,
        ]),
        mayGetNoAnswer: false,
      };
    case 7: // two different Content-Lengths
      return {
        raw: Buffer.concat([
          Buffer.from(
            head(`Content-Type: application/json\r\nContent-Length: ${bytes.length}\r\nContent-Length: ${bytes.length + 5}\r\n\r\n`),
          ),
          bytes,
        ]),
        mayGetNoAnswer: false,
      };
    case 8: // Transfer-Encoding and Content-Length together (a smuggling attempt)
      return {
        raw: Buffer.from(
          `${head('Content-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n')}` +
            '0\r\n\r\nGET /projects/all HTTP/1.1\r\nHost: x\r\n\r\n',
        ),
        mayGetNoAnswer: false,
      };
    case 9: // a header far beyond the size limit
      return { raw: Buffer.from(`${head(`X-Big: ${'b'.repeat(70_000)}\r\nContent-Length: 0\r\n\r\n`)}`), mayGetNoAnswer: true };
    case 10: // invalid UTF-8 in a JSON body
      return {
        raw: Buffer.concat([
          Buffer.from(head(`Content-Type: application/json\r\nContent-Length: ${bytes.length + 12}\r\n\r\n`)),
          Buffer.from('{"name":"'),
          Buffer.from([0xc3, 0x28, 0xa0, 0xa1, 0xf0, 0x28]),
          Buffer.from('"}\r\n'),
          bytes,
        ]),
        mayGetNoAnswer: false,
      };
    default: // a request line that is not HTTP
      return {
        raw: Buffer.from(
          rng.pick([
            '\r\n\r\n',
            'GET\r\n\r\n',
            `GET ${path}\r\n\r\n`,
            'HELLO WORLD\r\n\r\n',
            '\u0016\u0003\u0001\u0000\u00a5\u0001\u0000\u0000\u00a1\u0003\u0003',
            `${method} ${path} HTTP/9.9\r\n\r\n`,
          ]),
        ),
        mayGetNoAnswer: true,
      };
  }
}

export let pickMs = 0;

interface Built {
  route: RouteInfo;
  req: FuzzRequest;
}

async function buildRequest(t: FuzzTarget, world: World, route: RouteInfo, i: number, rng: Rng, opts: FuzzOptions): Promise<Built> {
  const p0 = performance.now();
  const w = world.pick(i, rng);
  pickMs += performance.now() - p0;
  const key = routeKey(route);
  const seed: Seed = seedFor(key, route.schema, w, rng);
  // Path: valid ids, sometimes junk.
  let path = route.url.replace(/:(\w+)/g, (_m, name: string) => {
    const valid = paramValue(name, route.url, w, rng);
    return rng.chance(0.12) ? junkParam(valid, rng) : valid;
  });
  const query = seed.query ? encodeQuery(seed.query) : [];
  if (rng.chance(0.25)) query.push(...junkQuery(rng));
  if (query.length) path += `?${query.join('&')}`;
  const headers: Record<string, string> = authHeaders(rng, t.creds);
  if (rng.chance(0.05)) headers['X-Forwarded-For'] = rng.pick(['127.0.0.1', '::1, evil', '"><script>']);
  if (rng.chance(0.03)) headers['Accept'] = rng.pick(['application/xml', 'text/html', '*/*;q=0', 'application/json;q=0']);
  if (rng.chance(0.03)) headers['Content-Encoding'] = rng.pick(['gzip', 'br', 'deflate', 'identity', 'x-junk']);
  if (rng.chance(0.02)) headers['Accept-Encoding'] = 'gzip, br, zstd';
  let body: string | undefined;
  const wantsBody = takesBody(route.method, route.schema) || rng.chance(0.05);
  if (wantsBody) {
    const strings = [
      ...Object.values(w.runs),
      w.projectId,
      ...w.traceIds.slice(0, 5),
      ...w.spanIds.slice(0, 5),
      ...w.scorerIds.slice(0, 3),
      ...w.userIds,
      'metrics/custom_score',
      'created_at',
      'name',
      'tags',
    ];
    let value: unknown = seed.body === undefined ? {} : seed.body;
    const mode = rng.next();
    if (mode < 0.3) value = cloneFuzz(value);
    else if (mode < 0.95) value = mutate(value, rng, { strings }, 4);
    else value = mutate({}, rng, { strings }, 2);
    let text: string;
    try {
      text = toJsonText(value, opts.maxBodyBytes);
    } catch (err) {
      if (!(err instanceof TooBigError)) throw err;
      text = toJsonText(seed.body ?? {});
    }
    if (seed.form && rng.chance(0.8) && value && typeof value === 'object' && !Array.isArray(value) && text.length < 100_000) {
      text = new URLSearchParams(
        Object.entries(value as Record<string, unknown>).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : toJsonText(v)]),
      ).toString();
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
    } else if (rng.chance(0.08)) {
      const ct = rng.pick(CONTENT_TYPES);
      if (ct !== '') headers['Content-Type'] = ct;
    } else if (!rng.chance(0.03)) {
      headers['Content-Type'] = 'application/json';
    }
    if (rng.chance(0.08)) text = malformedJson(text, rng);
    body = text;
  } else if (rng.chance(0.05)) {
    headers['Content-Type'] = 'application/json';
  }
  let req: FuzzRequest = { method: route.method, path, headers, ...(body !== undefined ? { body } : {}) };
  // fetch cannot send a body with GET or HEAD; such requests go over the socket below, or without it.
  if ((route.method === 'HEAD' || route.method === 'GET') && body !== undefined && !rng.chance(0.3))
    req = { method: route.method, path, headers };
  const forceRaw = (route.method === 'HEAD' || route.method === 'GET') && req.body !== undefined;
  if (forceRaw || rng.chance(0.05)) {
    const raw = rawRequest(rng, route.method, path, headers, body ?? '', `${t.base.hostname}:${t.base.port}`, forceRaw);
    req = { method: route.method, path, headers, raw: raw.raw, mayGetNoAnswer: raw.mayGetNoAnswer };
  }
  return { route, req };
}

// ------------------------------------------------------------------ judging an answer

export function judge(req: FuzzRequest, res: FuzzResponse | null, dataDir: string): string | null {
  if (res === null) return req.mayGetNoAnswer ? null : 'no answer';
  if (res.status === 0) return 'unparseable response';
  if (res.status >= 500) return `answered ${res.status}`;
  if (res.text.includes(dataDir)) return 'the data folder path leaked into the answer';
  const leak = LEAKS.exec(res.text);
  if (leak) return `internal detail leaked: ${leak[0]}`;
  if (req.method === 'HEAD' || res.status < 400) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(res.text);
  } catch {
    return `${res.status} answer is not JSON`;
  }
  if (!parsed || typeof parsed !== 'object' || !('detail' in parsed)) return `${res.status} answer has no detail`;
  const detail = (parsed as { detail: unknown }).detail;
  if (res.status === 422) {
    if (!Array.isArray(detail) || detail.length === 0) return '422 detail is not a list of issues';
    for (const d of detail as Record<string, unknown>[]) {
      if (!Array.isArray(d['loc']) || typeof d['msg'] !== 'string' || typeof d['type'] !== 'string')
        return `422 issue malformed: ${JSON.stringify(d).slice(0, 200)}`;
    }
  } else if (typeof detail !== 'string' && !Array.isArray(detail)) {
    return `${res.status} detail is neither text nor a list`;
  }
  return null;
}

// ------------------------------------------------------------------ the ledger client

interface Ledger {
  traces: number;
  spans: number;
  sessions: number;
  requests: number;
  unacked: number;
  traceIds: string[];
  /** Every acknowledged span id, with how it was logged. */
  spanIds: Map<string, string>;
}

/** Gives every span of a trace tree an explicit id (collected into `ids`), so the ledger knows each one. */
function withIds(node: Record<string, unknown>, rng: Rng, ids: string[]): Record<string, unknown> {
  const spans = (node['spans'] as Record<string, unknown>[] | undefined)?.map((s) => {
    const id = rng.uuid();
    ids.push(id);
    return withIds({ ...s, id }, rng, ids);
  });
  return spans ? { ...node, spans } : node;
}

async function ledgerLoop(
  t: FuzzTarget,
  rng: Rng,
  until: () => boolean,
  ledger: Ledger,
  timeoutMs: number,
  failures: Failure[],
): Promise<void> {
  const { projectId, logStreamId } = t.ledger;
  while (!until()) {
    const appendSpans = ledger.traceIds.length > 0 && rng.chance(0.25);
    const spanIds: string[] = [];
    const reliable = rng.chance(0.5);
    const body = appendSpans
      ? (() => {
          const traceId = rng.pick(ledger.traceIds);
          const id = rng.uuid();
          spanIds.push(id);
          return {
            path: `/v2/projects/${projectId}/spans`,
            body: {
              log_stream_id: logStreamId,
              trace_id: traceId,
              parent_id: traceId,
              reliable,
              spans: [{ id, type: 'tool', name: 'ledger-tool', input: 'x' }],
            },
          };
        })()
      : {
          path: `/projects/${projectId}/traces`,
          body: {
            log_stream_id: logStreamId,
            reliable,
            traces: Array.from({ length: rng.int(1, 3) }, () => withIds({ ...seedTrace(rng), id: rng.uuid() }, rng, spanIds)),
          },
        };
    const req: FuzzRequest = {
      method: 'POST',
      path: body.path,
      headers: { 'Galileo-API-Key': t.creds.adminKey, 'Content-Type': 'application/json' },
      body: JSON.stringify(body.body),
    };
    ledger.requests++;
    let res: FuzzResponse | null = null;
    try {
      res = await send(t.base, req, timeoutMs);
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      failures.push({
        iteration: -1,
        route: 'ledger',
        problem: `${(err as Error).message}${cause ? ` (${cause.code ?? ''} ${cause.message ?? ''})` : ''}`,
        request: { method: req.method, path: req.path, headers: req.headers, body: req.body!.slice(0, 2000) },
      });
      ledger.unacked++;
      continue;
    }
    if (res?.status !== 200) {
      failures.push({
        iteration: -1,
        route: 'ledger',
        problem: `valid ledger request answered ${res?.status}`,
        request: { method: req.method, path: req.path, headers: req.headers, body: req.body!.slice(0, 2000) },
        response: { status: res?.status ?? 0, text: res?.text.slice(0, 2000) ?? '' },
      });
      ledger.unacked++;
      continue;
    }
    const b = JSON.parse(res.text) as { records_count: number; traces_count?: number; spans_count?: number; trace_ids?: string[] };
    if (appendSpans) ledger.spans += b.records_count;
    else {
      ledger.traces += b.traces_count!;
      ledger.sessions += b.traces_count!;
      ledger.spans += b.spans_count!;
      ledger.traceIds.push(...b.trace_ids!);
    }
    for (const id of spanIds)
      ledger.spanIds.set(id, `${appendSpans ? 'logSpans' : 'logTraces'} reliable=${reliable} request ${ledger.requests}`);
    await new Promise((r) => setTimeout(r, rng.int(0, 20)));
  }
}

// ------------------------------------------------------------------ the run

export async function runFuzz(t: FuzzTarget, opts: FuzzOptions): Promise<{ stats: FuzzStats; failures: Failure[]; ledger: Ledger }> {
  const world = new World(t);
  world.start(new Rng(opts.seed + 2));
  const failures: Failure[] = [];
  const stats: FuzzStats = {
    requests: 0,
    byStatus: new Map(),
    byRoute: new Map(),
    buildMs: 0,
    noAnswer: 0,
    slowest: { ms: 0, route: '' },
    ledger: { requests: 0, traces: 0, spans: 0, sessions: 0, unacked: 0 },
  };
  const order = new Rng(opts.seed).shuffle(t.routes);
  const deadline = Date.now() + opts.seconds * 1000;
  let next = 0;
  const done = () => next >= opts.iterations || Date.now() >= deadline;
  const worker = async () => {
    while (!done()) {
      const i = next++;
      const route = order[i % order.length]!;
      const rng = new Rng((opts.seed ^ Math.imul(i + 1, 0x9e3779b1)) >>> 0);
      const b0 = performance.now();
      const { req } = await buildRequest(t, world, route, i, rng, opts);
      stats.buildMs += performance.now() - b0;
      let res: FuzzResponse | null = null;
      let problem: string | null = null;
      try {
        res = await send(t.base, req, opts.timeoutMs);
        problem = judge(req, res, t.dataDir);
      } catch (err) {
        const cause = (err as { cause?: { code?: string; message?: string } }).cause;
        problem = `${(err as Error).message}${cause ? ` (${cause.code ?? ''} ${cause.message ?? ''})` : ''}`;
      }
      stats.requests++;
      const key = `${route.method} ${route.url}`;
      const r = stats.byRoute.get(key) ?? { total: 0, ok: 0, ms: 0 };
      r.total++;
      r.ms += res?.ms ?? 0;
      if (res && res.status >= 200 && res.status < 300) r.ok++;
      stats.byRoute.set(key, r);
      if (res) {
        stats.byStatus.set(res.status, (stats.byStatus.get(res.status) ?? 0) + 1);
        if (res.ms > stats.slowest.ms) stats.slowest = { ms: res.ms, route: key };
      } else stats.noAnswer++;
      if (problem) {
        failures.push({
          iteration: i,
          route: key,
          problem,
          request: {
            method: req.method,
            path: req.path.slice(0, 2000),
            headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, v.slice(0, 300)])),
            ...(req.body !== undefined ? { body: req.body.slice(0, 4000) } : {}),
            ...(req.raw ? { raw: req.raw.toString('latin1').slice(0, 4000) } : {}),
          },
          ...(res ? { response: { status: res.status, text: res.text.slice(0, 2000) } } : {}),
        });
      }
    }
  };
  const ledger: Ledger = { traces: 0, spans: 0, sessions: 0, requests: 0, unacked: 0, traceIds: [], spanIds: new Map() };
  const workers = Array.from({ length: opts.concurrency }, () => worker());
  await Promise.all([...workers, ledgerLoop(t, new Rng(opts.seed + 1), done, ledger, opts.timeoutMs, failures)]);
  await world.stop();
  stats.ledger = {
    requests: ledger.requests,
    traces: ledger.traces,
    spans: ledger.spans,
    sessions: ledger.sessions,
    unacked: ledger.unacked,
  };
  return { stats, failures, ledger };
}
