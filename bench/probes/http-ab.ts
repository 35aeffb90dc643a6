// Two builds' `tracelake serve` taking turns at HTTP ingest (v2 JSON route, reliable, ~1,000-span
// bodies, `connections` clients, no reader), in rounds of 8 requests so that the machine's changing
// load falls on both alike; then each is stopped with SIGTERM right after its last answer and the
// stop is timed. Reports per build: spans/s over its own rounds, the server's CPU seconds per span
// (every thread, from /proc), request latency p50/p99, the spans it counts, the stop's wall time and
// the server's peak resident memory.
//   node dist/bench/probes/http-ab.js --old /work/base-cb3519d [--new .] [--spans 200000] [--connections 4]
//     [--old-node-arg <flag>]... [--new-node-arg <flag>]... (flags for that side's server's node)
// Each root must be built (its dist/src/cli.js is started).
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { generateBatches } from '../../test/support/generator.js';
import { cpuSeconds } from '../common.js';
import { startServer } from '../server-process.js';

const { values } = parseArgs({
  options: {
    old: { type: 'string' },
    new: { type: 'string', default: new URL('../../..', import.meta.url).pathname },
    spans: { type: 'string', default: '200000' },
    connections: { type: 'string', default: '4' },
    'old-node-arg': { type: 'string', multiple: true, default: [] },
    'new-node-arg': { type: 'string', multiple: true, default: [] },
  },
});
if (!values.old) throw new Error('--old <checkout> is required');
const spans = Number(values.spans);
const connections = Number(values.connections);

interface Side {
  name: string;
  pid: number;
  exited: Promise<void>;
  url: string;
  dir: string;
  target: string;
  headers: Record<string, string>;
  lines: AsyncIterator<string>;
  ms: number;
  cpu: number;
  latencies: number[];
  errors: number;
  n: number;
  done: boolean;
}

async function start(name: string, root: string, nodeArgs: string[]): Promise<Side> {
  const dir = mkdtempSync(join(process.env['TL_TMP'] ?? tmpdir(), `tracelake-ab-${name}-`));
  const key = `tl_bench_${Date.now()}`;
  const server = await startServer(join(dir, 'data'), key, {
    cli: join(resolve(root), 'dist/src/cli.js'),
    name: `${name} server`,
    nodeArgs,
  });
  const url = server.url;
  const headers = { 'content-type': 'application/json', 'Galileo-API-Key': key };
  const post = async (path: string, body: unknown) =>
    (await (await fetch(`${url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) })).json()) as { id: string };
  const project = await post('/projects', { name: 'bench' });
  const ls = await post(`/projects/${project.id}/log_streams`, { name: 'http' });
  const bodies = join(dir, 'bodies.ndjson');
  const out = createWriteStream(bodies);
  let n = 0;
  for (const batch of generateBatches({ spans, batchSpans: 1000, seed: 11 })) {
    n += batch.reduce((k, t) => k + countSpans(t), 0);
    if (!out.write(`${JSON.stringify({ log_stream_id: ls.id, reliable: true, traces: batch })}\n`))
      await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((r) => out.end(r));
  return {
    name,
    pid: server.pid,
    exited: server.exited,
    url,
    dir,
    target: `${url}/projects/${project.id}/traces`,
    headers,
    lines: createInterface({ input: createReadStream(bodies), crlfDelay: Infinity })[Symbol.asyncIterator](),
    ms: 0,
    cpu: 0,
    latencies: [],
    errors: 0,
    n,
    done: false,
  };
}

function countSpans(x: { spans?: unknown[] }): number {
  let n = 0;
  for (const s of (x.spans ?? []) as { spans?: unknown[] }[]) n += 1 + countSpans(s);
  return n;
}

async function round(side: Side, limit: number): Promise<void> {
  let left = limit;
  const t0 = performance.now();
  const c0 = cpuSeconds(side.pid) ?? 0;
  const worker = async () => {
    while (left > 0) {
      left--;
      const next = await side.lines.next();
      if (next.done) {
        side.done = true;
        return;
      }
      const t = performance.now();
      const res = await fetch(side.target, { method: 'POST', headers: side.headers, body: next.value });
      await res.arrayBuffer();
      side.latencies.push(performance.now() - t);
      if (res.status !== 200) side.errors++;
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  side.ms += performance.now() - t0;
  side.cpu += (cpuSeconds(side.pid) ?? 0) - c0;
}

const sides = [await start('old', values.old, values['old-node-arg']!), await start('new', values.new!, values['new-node-arg']!)];
while (sides.some((s) => !s.done)) for (const s of sides) if (!s.done) await round(s, 8);

const report: Record<string, unknown> = { load: readFileSync('/proc/loadavg', 'utf8').trim(), spans, connections };
for (const s of sides) {
  const counted = (
    (await (
      await fetch(`${s.target.replace(/\/traces$/, '')}/spans/count`, { method: 'POST', headers: s.headers, body: '{}' })
    ).json()) as { total_count?: number }
  ).total_count;
  // Peak resident memory of the server over the run, before it stops.
  const peak = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${s.pid}/status`, 'utf8'))?.[1];
  // The stop right after ingest: SIGTERM to exit.
  const t = performance.now();
  process.kill(s.pid, 'SIGTERM');
  await s.exited;
  const stopMs = performance.now() - t;
  const lat = s.latencies.sort((a, b) => a - b);
  report[s.name] = {
    spans_per_s: Math.round((s.n / s.ms) * 1000),
    server_cpu_us_per_span_during_rounds: Math.round((s.cpu / s.n) * 1e6 * 10) / 10,
    p50_ms: Math.round(lat[lat.length >> 1]!),
    p99_ms: Math.round(lat[Math.floor(lat.length * 0.99)]!),
    errors: s.errors,
    counted,
    stop_after_ingest_ms: Math.round(stopMs),
    peak_rss_mib: peak === undefined ? null : Math.round(Number(peak) / 1024),
  };
  rmSync(s.dir, { recursive: true, force: true });
}
const o = report['old'] as { spans_per_s: number; server_cpu_us_per_span_during_rounds: number };
const n = report['new'] as { spans_per_s: number; server_cpu_us_per_span_during_rounds: number };
report['new_over_old'] = {
  rate: Math.round((n.spans_per_s / o.spans_per_s) * 100) / 100,
  cpu_per_span: Math.round((n.server_cpu_us_per_span_during_rounds / o.server_cpu_us_per_span_during_rounds) * 100) / 100,
};
console.log(JSON.stringify(report, null, 1));
