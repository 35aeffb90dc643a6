// One serial library caller (reliable: true, ~1,000-span requests), as bench/ingest.ts's library run,
// with where the time goes: wall time inside logTraces against outside it (generating the next
// request), and CPU time of the main thread against every other thread (DuckDB's workers, libuv's
// pool, V8's helpers), read from /proc per thread.
//   node --import tsx bench/probes/ingest-profile.ts [spans=300000] [--compact] [--tids]
// TL_ROOT=/other/checkout runs that checkout's store (an old build, for old/new taking turns).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateBatches } from '../../test/support/generator.js';
import { parquetFiles, peakRssMiB, statCpu } from '../common.js';

/** CPU seconds by thread name (comm), the main thread apart. */
function threadCpu(): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    } catch {
      continue;
    }
    const { name, seconds } = statCpu(stat);
    const comm = tid === String(process.pid) ? 'main' : process.argv.includes('--tids') ? `${name}:${tid}` : 'other';
    out.set(comm, (out.get(comm) ?? 0) + seconds);
  }
  return out;
}

function diff(a: Map<string, number>, b: Map<string, number>): Record<string, number> {
  const r: Record<string, number> = {};
  for (const [k, v] of b) r[k] = Math.round((v - (a.get(k) ?? 0)) * 100) / 100;
  return r;
}

const root = process.env['TL_ROOT'] ?? new URL('../..', import.meta.url).pathname;
const { TraceStore } = (await import(join(root, 'src/engine/trace-store.ts'))) as typeof import('../../src/engine/trace-store.js');
const spans = Number(process.argv[2] ?? 300_000);
const dir = mkdtempSync(join(tmpdir(), 'tracelake-prof-'));
// TL_OPTS: store options as JSON (e.g. '{"memTableBytes":1e9,"memoryLimit":"4GB"}': no seal before the flush).
const store = await TraceStore.open(dir, JSON.parse(process.env['TL_OPTS'] ?? '{}') as Record<string, unknown>);
const project = store.createProject({ name: 'bench' });
const ls = store.createLogStream(project.id, 'ingest');
let inside = 0;
let outside = 0;
let n = 0;
let lastStep = 0;
let stepInside = 0;
let stepT = performance.now();
let stepCpu = threadCpu();
const cpu0 = threadCpu();
const t0 = performance.now();
let mark = t0;
for (const batch of generateBatches({ spans, batchSpans: 1000, seed: 7 })) {
  JSON.stringify({ log_stream_id: ls.id, traces: batch }); // as bench/ingest.ts does between calls
  const t = performance.now();
  outside += t - mark;
  const r = await store.logTraces(project.id, { log_stream_id: ls.id, reliable: process.env['RELIABLE'] !== '0', traces: batch as never });
  mark = performance.now();
  inside += mark - t;
  n += r.spans_count;
  if (process.env['STEP'] && n - lastStep >= Number(process.env['STEP'])) {
    const c = threadCpu();
    const now = performance.now();
    const d = (k: string) => ((((c.get(k) ?? 0) - (stepCpu.get(k) ?? 0)) * 1e6) / (n - lastStep)).toFixed(1);
    const segs = (store as unknown as { records: { manifestSegments?: () => number } }).records;
    console.error(
      `at ${n}: wall/span ${(((now - stepT) * 1000) / (n - lastStep)).toFixed(1)} µs, ` +
        `inside ${(((inside - stepInside) * 1000) / (n - lastStep)).toFixed(1)}, cpu main ${d('main')} other ${d('other')} µs/span, ` +
        `files ${parquetFiles(dir).length}, ` +
        `rss ${Math.round((Number(readFileSync('/proc/self/statm', 'utf8').split(' ')[1]) * 4096) / 1048576)} MiB, ` +
        `load ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}`,
    );
    void segs;
    lastStep = n;
    stepCpu = c;
    stepT = now;
    stepInside = inside;
  }
}
const cpuF = threadCpu();
const tf = performance.now();
await store.flush();
const flushMs = performance.now() - tf;
const cpu1 = threadCpu();
let compactMs = 0;
if (process.argv.includes('--compact')) {
  const tc = performance.now();
  await store.maintenance.compact();
  compactMs = performance.now() - tc;
}
const cpu2 = threadCpu();
const wall = performance.now() - t0;
await store.close();
rmSync(dir, { recursive: true, force: true });
const ingestMs = inside + flushMs;
const perSpan = (ms: number) => Math.round((ms * 1000 * 10) / n) / 10;
console.log(
  JSON.stringify(
    {
      root,
      spans: n,
      rate: Math.round((n / ingestMs) * 1000),
      rate_with_compaction: Math.round((n / (ingestMs + compactMs)) * 1000),
      us_per_span: {
        inside_logTraces: perSpan(inside),
        outside_generating: perSpan(outside),
        flush: perSpan(flushMs),
        compact: perSpan(compactMs),
      },
      cpu_s_ingest: diff(cpu0, cpu1),
      cpu_s_flush: diff(cpuF, cpu1),
      cpu_s_compact: diff(cpu1, cpu2),
      wall_s: Math.round(wall) / 1000,
      peak_rss_mib: peakRssMiB(),
      load: readFileSync('/proc/loadavg', 'utf8').trim(),
    },
    null,
    1,
  ),
);
