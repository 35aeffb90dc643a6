// End-to-end plumbing for the official client tests: a real `tracelake serve` child process on
// loopback with a fresh data folder, a small recording proxy between the client and the server (the
// client cannot be changed, so every request it sends is logged here, with the status it got), and a
// runner that starts one child process per client flow so module-level singletons and environment
// variables never leak from one flow into the next.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { ROOT } from '../../../scripts/binary/config.js';
import { jsonCaller, tempDir } from '../../support/helpers.js';
import { nodeEntry, USE_DIST } from '../../support/node-entry.js';
import { waitFor } from '../../support/wait-for.js';

// The repository root (also when this runs compiled, from dist/test/e2e/support).
export { ROOT };
export const FLOWS = join(ROOT, 'test', 'e2e', 'flows');

export interface Tracelake {
  url: string;
  key: string;
  dir: string;
  /** JSON over HTTP with the API key (tracelake's own API, not the client). */
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  stop(): Promise<void>;
}

/**
 * Starts `tracelake serve` on 127.0.0.1 with an ephemeral port: src/cli.ts (see node-entry.ts), or, when
 * TRACELAKE_E2E_SERVER names an executable (the single binary), that executable run as under `env -i`
 * from the temporary folder: only the API key, TRACELAKE_CACHE_DIR when set, and a PATH with nothing on it.
 */
export async function startTracelake(t: TestContext): Promise<Tracelake> {
  const home = tempDir(t, 'tracelake-e2e-');
  const dir = join(home, 'data');
  const key = `tl_e2e_${process.pid}_${Date.now()}`;
  const server = process.env['TRACELAKE_E2E_SERVER'];
  const serveArgs = ['serve', '--data', dir, '--port', '0', '--host', '127.0.0.1', '--quiet'];
  const cache = process.env['TRACELAKE_CACHE_DIR'];
  const child = server
    ? spawn(server, serveArgs, {
        cwd: home,
        env: { TRACELAKE_API_KEY: key, PATH: join(home, 'empty-path'), ...(cache ? { TRACELAKE_CACHE_DIR: cache } : {}) },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
    : spawn(process.execPath, [...nodeEntry(join(ROOT, 'src', 'cli.ts')), ...serveArgs], {
        cwd: ROOT,
        env: { ...withoutGalileoEnv(process.env), TRACELAKE_API_KEY: key },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
  t.diagnostic(`server: ${server ?? `src/cli.ts ${USE_DIST ? 'compiled in dist/' : 'through tsx'}`}`);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`tracelake serve did not start in 30 s: ${out}${stderr}`)), 30_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = / at (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`tracelake serve exited with ${code}: ${stderr}`));
    });
  });
  const stop = () => stopChild(child);
  t.after(stop);
  const call = jsonCaller(url, key);
  return { url, key, dir, call, stop };
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

// ------------------------------------------------------------------ the recording proxy

export interface RecordedRequest {
  flow: string;
  method: string;
  /** Path without the query string. */
  path: string;
  /** The path with every UUID replaced by {id}: the route, for summaries. */
  route: string;
  query: Record<string, string>;
  status: number;
  /** Parsed JSON request body (or the raw text, or undefined when empty). */
  body: unknown;
  /** Parsed JSON response body (or the raw text). */
  response: unknown;
  sdk: string | undefined;
  auth: string | undefined;
}

export interface RecordingProxy {
  url: string;
  requests: RecordedRequest[];
  /** Label for requests recorded from now on. */
  flow: string;
  close(): Promise<void>;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

function parse(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A forwarding HTTP proxy that records each request and the status it got. Listens on `host`
 * (default 127.0.0.1) at `port` (0: ephemeral) and, when `alsoIpv6` is set, on [::1] at the same port
 * too (http://localhost:8088, which older clients call, may resolve to either).
 */
export async function startProxy(
  t: TestContext,
  target: string,
  options: { port?: number; alsoIpv6?: boolean; host?: string } = {},
): Promise<RecordingProxy> {
  const upstream = new URL(target);
  const state: RecordingProxy = {
    url: '',
    requests: [],
    flow: '',
    close: async () => {},
  };
  const handler = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const flow = state.flow;
      const headers = { ...req.headers, host: upstream.host };
      const up = httpRequest({ hostname: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers }, (upRes) => {
        const out: Buffer[] = [];
        upRes.on('data', (c: Buffer) => out.push(c));
        upRes.on('end', () => {
          const payload = Buffer.concat(out);
          const u = new URL(req.url ?? '/', 'http://x');
          const auth = req.headers.authorization;
          state.requests.push({
            flow,
            method: req.method ?? '',
            path: u.pathname,
            route: u.pathname.replace(UUID, '{id}'),
            query: Object.fromEntries(u.searchParams),
            status: upRes.statusCode ?? 0,
            body: parse(body.toString('utf8')),
            response: parse(payload.toString('utf8')),
            sdk: req.headers['x-galileo-sdk'] as string | undefined,
            auth: typeof auth === 'string' ? auth.split(' ')[0] : req.headers['galileo-api-key'] ? 'Galileo-API-Key' : undefined,
          });
          res.writeHead(upRes.statusCode ?? 502, upRes.headers);
          res.end(payload);
        });
      });
      up.on('error', (err) => {
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ detail: `proxy: ${err.message}` }));
      });
      up.end(body);
    });
  };
  const listen = (host: string, port: number) =>
    new Promise<Server>((resolve, reject) => {
      const server = createServer(handler);
      server.once('error', reject);
      server.listen(port, host, () => resolve(server));
    });
  const host = options.host ?? '127.0.0.1';
  const first = await listen(host, options.port ?? 0);
  const servers = [first];
  const port = (first.address() as AddressInfo).port;
  if (options.alsoIpv6) {
    try {
      servers.push(await listen('::1', port));
    } catch (err) {
      // No IPv6 loopback here: localhost then resolves to 127.0.0.1 only. A busy port is not fine.
      if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
        await new Promise((r) => first.close(r));
        throw err;
      }
    }
  }
  state.url = `http://${host}:${port}`;
  state.close = async () => {
    for (const s of servers) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
  };
  t.after(() => state.close());
  return state;
}

/** The loopback address the older clients are pointed at: not one they rewrite to localhost:8088. */
const LEGACY_HOST = '127.0.0.2';
const LEGACY_PORT = 8088;

/**
 * A recording proxy the older official clients (galileo 1.32, 1.9) reach, and the GALILEO_CONSOLE_URL
 * that points them at it. They take that URL as their API base unless it names `localhost` or
 * `127.0.0.1` (then they call http://localhost:8088 whatever it says), so the proxy listens on
 * 127.0.0.2, another loopback address, at a free port. Where that address cannot be bound (Linux
 * routes all of 127.0.0.0/8 to loopback; other systems may not), it takes localhost:8088 instead,
 * waiting up to `waitMs` for that port to come free and failing after: never a silent skip.
 */
export async function startLegacyProxy(
  t: TestContext,
  target: string,
  waitMs = 300_000,
): Promise<{ proxy: RecordingProxy; consoleUrl: string }> {
  try {
    const proxy = await startProxy(t, target, { host: LEGACY_HOST });
    return { proxy, consoleUrl: proxy.url };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRNOTAVAIL') throw err;
  }
  t.diagnostic(`${LEGACY_HOST} cannot be bound here: the older clients go to localhost:${LEGACY_PORT}`);
  const proxy = await waitFor(
    async () => {
      try {
        return await startProxy(t, target, { port: LEGACY_PORT, alsoIpv6: true });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
        return `port ${LEGACY_PORT} is still in use`;
      }
    },
    {
      limitMs: waitMs,
      everyMs: 1000,
      what: `localhost:${LEGACY_PORT} to come free (galileo 1.32 and 1.9 call only that port on localhost)`,
    },
  );
  return { proxy, consoleUrl: `http://localhost:${LEGACY_PORT}` };
}

// ------------------------------------------------------------------ running one client flow

export interface FlowRun<R> {
  result: R;
  stdout: string;
  stderr: string;
}

function withoutGalileoEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) if (!k.startsWith('GALILEO') && !k.startsWith('TRACELAKE')) out[k] = v;
  return out;
}

/**
 * Runs test/e2e/flows/<file> in a fresh Node process (see node-entry.ts) with only the given GALILEO_*
 * variables set; the flow writes its result as JSON to the file named by FLOW_OUT.
 */
export async function runFlow<R>(
  t: TestContext,
  file: string,
  env: Record<string, string>,
  args: unknown = {},
  timeoutMs = 60_000,
): Promise<FlowRun<R>> {
  const out = join(tempDir(t, 'tracelake-flow-'), 'result.json');
  const child = spawn(process.execPath, nodeEntry(join(FLOWS, file)), {
    cwd: ROOT,
    env: { ...withoutGalileoEnv(process.env), ...env, FLOW_OUT: out, FLOW_ARGS: JSON.stringify(args) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (c) => {
      clearTimeout(timer);
      resolve(c);
    });
  });
  if (code !== 0) throw new Error(`flow ${file} exited with ${code}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`);
  return { result: JSON.parse(readFileSync(out, 'utf8')) as R, stdout, stderr };
}

// ------------------------------------------------------------------ request log checks

/** "METHOD route -> status" lines with counts, in first-seen order. */
export function summarize(requests: RecordedRequest[]): string[] {
  const counts = new Map<string, number>();
  for (const r of requests) {
    const k = `${r.method} ${r.route} -> ${r.status}`;
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return [...counts].map(([k, n]) => (n > 1 ? `${k} (x${n})` : k));
}

/** Requests of a flow that got a 4xx or 5xx and are not in `expected` ("METHOD route status"). */
export function failures(requests: RecordedRequest[], expected: string[] = []): RecordedRequest[] {
  return requests.filter((r) => r.status >= 400 && !expected.includes(`${r.method} ${r.route} ${r.status}`));
}

export function describeFailures(list: RecordedRequest[]): string {
  return list
    .map(
      (r) =>
        `${r.method} ${r.path}?${new URLSearchParams(r.query)} -> ${r.status} ${JSON.stringify(r.response)?.slice(0, 400)}\n` +
        `  body: ${JSON.stringify(r.body)?.slice(0, 400)}`,
    )
    .join('\n');
}
