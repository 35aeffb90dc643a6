// Where the server's CPU goes while it ingests over HTTP (v2 JSON route, reliable, ~1,000-span bodies,
// `connections` clients, no reader): `tracelake serve` runs under --cpu-prof, the server's threads'
// CPU is read from /proc before its stop, and the main thread's profile is ranked by self time
// (functions, then files). The profile includes the stop.
//   node dist/bench/probes/http-profile.js [--spans 200000] [--connections 4] [--top 40] [--root <checkout>]
//     [--node-arg <flag for the server's node>]... [--keep <file to copy the .cpuprofile to>]
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { generateBatches } from '../../test/support/generator.js';
import { statCpu } from '../common.js';
import { startServer } from '../server-process.js';

const { values } = parseArgs({
  options: {
    spans: { type: 'string', default: '200000' },
    connections: { type: 'string', default: '4' },
    top: { type: 'string', default: '40' },
    root: { type: 'string', default: new URL('../../..', import.meta.url).pathname },
    'node-arg': { type: 'string', multiple: true, default: [] },
    keep: { type: 'string' },
  },
});

/** CPU seconds of a process's threads, by thread name (the main thread as "main"). */
function threadCpu(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const { name, seconds } = statCpu(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'));
      const key = tid === String(pid) ? 'main' : name;
      out.set(key, (out.get(key) ?? 0) + seconds);
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out;
}

const dir = mkdtempSync(join(process.env['TL_TMP'] ?? tmpdir(), 'tracelake-hprof-'));
const profDir = join(dir, 'prof');
const key = `tl_bench_${Date.now()}`;
const server = await startServer(join(dir, 'data'), key, {
  cli: join(resolve(values.root), 'dist/src/cli.js'),
  nodeArgs: ['--cpu-prof', '--cpu-prof-dir', profDir, ...values['node-arg']!],
});
const headers = { 'content-type': 'application/json', 'Galileo-API-Key': key };
const post = async (path: string, body: string) => {
  const res = await fetch(`${server.url}${path}`, { method: 'POST', headers, body });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { id: string };
};
const project = await post('/projects', JSON.stringify({ name: 'bench' }));
const ls = await post(`/projects/${project.id}/log_streams`, JSON.stringify({ name: 'http' }));
const bodies: string[] = [];
for (const batch of generateBatches({ spans: Number(values.spans), batchSpans: 1000, seed: 11 }))
  bodies.push(JSON.stringify({ log_stream_id: ls.id, reliable: true, traces: batch }));

const before = threadCpu(server.pid);
const t0 = performance.now();
let next = 0;
await Promise.all(
  Array.from({ length: Number(values.connections) }, async () => {
    while (next < bodies.length) await post(`/projects/${project.id}/traces`, bodies[next++]!);
  }),
);
const ms = performance.now() - t0;
const after = threadCpu(server.pid);
const spans = Number(values.spans);
const threads: Record<string, number> = {};
let total = 0;
for (const [k, v] of after) {
  const d = v - (before.get(k) ?? 0);
  total += d;
  if (d >= 0.05) threads[k] = Math.round((d / spans) * 1e7) / 10;
}
await server.stop();

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'))!;
if (values.keep) copyFileSync(join(profDir, file), values.keep);
const prof = JSON.parse(readFileSync(join(profDir, file), 'utf8')) as { nodes: Node[]; startTime: number; endTime: number };
const hits = prof.nodes.reduce((n, x) => n + (x.hitCount ?? 0), 0);
const usPerHit = (prof.endTime - prof.startTime) / hits;
const byFn = new Map<string, number>();
const byFile = new Map<string, number>();
for (const n of prof.nodes) {
  const h = n.hitCount ?? 0;
  if (!h) continue;
  const url = n.callFrame.url.replace(/^file:\/\/.*?\/(dist|node_modules)\//, '$1/');
  const fn = `${n.callFrame.functionName || '(anon)'} ${url}:${n.callFrame.lineNumber + 1}`;
  byFn.set(fn, (byFn.get(fn) ?? 0) + h);
  byFile.set(url || n.callFrame.functionName, (byFile.get(url || n.callFrame.functionName) ?? 0) + h);
}
const rank = (m: Map<string, number>) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, Number(values.top))
    .map(([k, h]) => `${((h * usPerHit) / spans).toFixed(2).padStart(7)} µs/span  ${k}`);
console.log(
  JSON.stringify({
    load: readFileSync('/proc/loadavg', 'utf8').trim(),
    spans_per_s: Math.round((spans / ms) * 1000),
    server_cpu_us_per_span: Math.round((total / spans) * 1e7) / 10,
    by_thread_us_per_span: threads,
  }),
);
console.log('\nmain thread, self time by function (sampled wall time of the profile, stop included):');
console.log(rank(byFn).join('\n'));
console.log('\nby file:');
console.log(rank(byFile).join('\n'));
rmSync(dir, { recursive: true, force: true });
