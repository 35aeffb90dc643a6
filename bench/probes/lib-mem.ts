// Peak RSS of a library process that ingests like bench/ingest.ts's library run (one serial caller,
// reliable: true, ~1,000-span requests, then flush and compact), with process CPU
// time (DuckDB's threads included) and the ten highest RSS samples of a worker thread (every 20 ms:
// the peak is a spike of a second or less, while the main thread's timers are late). V8's heap and
// DuckDB's accounting are sampled every 250 ms on the main thread (`atPeakMiB`: at the highest RSS
// it saw, which may miss the spike). One JSON line on stdout.
//   node dist/bench/probes/lib-mem.js [spans=300000] [--no-compact] [--gen-only] [--no-yardstick]
// TL_OPTS='{"memoryLimit":"256MB"}' passes store options. --gen-only runs the generator and the
// JSON.stringify/parse of each request without a store (what the benchmark itself holds).
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { TraceStore } from '../../src/engine/trace-store.js';
import { countSpans, generateBatches } from '../../test/support/generator.js';

const MiB = 1024 * 1024;
const spans = Number(process.argv[2] ?? 300_000);
const genOnly = process.argv.includes('--gen-only');
const noYardstick = process.argv.includes('--no-yardstick');
const status = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024;
const opts = JSON.parse(process.env['TL_OPTS'] ?? '{}') as Record<string, unknown>;
const dir = mkdtempSync(join(tmpdir(), 'tracelake-libmem-'));
const store = genOnly ? null : await TraceStore.open(dir, opts);
const project = store?.createProject({ name: 'bench' });
const ls = project ? store!.createLogStream(project.id, 'ingest') : null;

// The highest RSS seen, with V8's heap and DuckDB's accounting from the nearest sample before it.
let peak: Record<string, number> = { rss: 0 };
let duck: Record<string, number> = {};
let sampling = false;
const timer = setInterval(() => {
  const u = process.memoryUsage();
  if (u.rss > peak['rss']!)
    peak = {
      rss: u.rss / MiB,
      heapTotal: u.heapTotal / MiB,
      heapUsed: u.heapUsed / MiB,
      external: u.external / MiB,
      duckdb: Object.values(duck).reduce((a, b) => a + b, 0) / MiB,
      ...Object.fromEntries(Object.entries(duck).map(([k, v]) => [`duckdb.${k}`, v / MiB])),
    };
  if (store && !sampling) {
    sampling = true;
    void store.maintenance.memory().then(
      (m) => {
        duck = m.duckdb;
        sampling = false;
      },
      () => (sampling = false),
    );
  }
}, 250);
timer.unref();

// Segments listed in the manifest during ingest, once a second (merges that starve show as a count
// that only grows): the highest count, the count when ingest ends, and one sample every ~10 s.
const manifestPath = (): string | null => {
  for (const p of [join(dir, 'manifest.json'), ...readdirSync(dir).map((d) => join(dir, d, 'manifest.json'))]) if (existsSync(p)) return p;
  return null;
};
let segNow = 0;
let segMax = 0;
const segSeries: number[] = [];
let segTicks = 0;
const segTimer = setInterval(() => {
  try {
    const p = manifestPath();
    segNow = p ? (JSON.parse(readFileSync(p, 'utf8')) as { segments: unknown[] }).segments.length : 0;
  } catch {
    return; // a manifest being replaced: the next tick reads it
  }
  segMax = Math.max(segMax, segNow);
  if (segTicks++ % 10 === 0) segSeries.push(segNow);
}, 1000);
segTimer.unref();

// RSS every 20 ms from a worker thread (the main thread's timers are late while it works, and the
// peak is a spike of a second or less): the ten highest samples, with the seconds since the start.
const rssWorker = new Worker(
  `const { readFileSync } = require('node:fs'); const { parentPort } = require('node:worker_threads');
   const t0 = Date.now(); let top = [];
   const tick = () => { const kb = Number(/VmRSS:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]);
     top.push([Math.round(kb / 1024), (Date.now() - t0) / 1000]); top.sort((a, b) => b[0] - a[0]); top = top.slice(0, 10); };
   const timer = setInterval(tick, 20);
   parentPort.on('message', () => { clearInterval(timer); parentPort.postMessage(top); });`,
  { eval: true },
);
const rssTop = () =>
  new Promise<number[][]>((r) => {
    rssWorker.once('message', r);
    rssWorker.postMessage('stop');
  });
const cpu0 = process.cpuUsage();
const t0 = performance.now();
let n = 0;
for (const batch of generateBatches({ spans, batchSpans: 1000, seed: 7 })) {
  // The library benchmark's yardstick (JSON.parse of the same request); --no-yardstick leaves it out.
  if (!noYardstick) JSON.parse(JSON.stringify({ log_stream_id: ls?.id ?? 'x', traces: batch }));
  if (store) {
    const r = await store.logTraces(project!.id, { log_stream_id: ls!.id, reliable: true, traces: batch as never });
    n += r.spans_count;
  } else for (const t of batch) n += countSpans(t);
}
if (store) await store.flush();
const ingestS = (performance.now() - t0) / 1000;
const cpuIngest = process.cpuUsage(cpu0);
const hwmIngest = status('VmHWM');
clearInterval(segTimer);
const segAtFlush = segNow;
const t1 = performance.now();
if (store && !process.argv.includes('--no-compact')) await store.maintenance.compact();
const compactS = (performance.now() - t1) / 1000;
const cpu = process.cpuUsage(cpu0);
clearInterval(timer);
const top = await rssTop();
await rssWorker.terminate();
await store?.close();
rmSync(dir, { recursive: true, force: true });
const r1 = (x: number) => Math.round(x * 10) / 10;
console.log(
  JSON.stringify({
    spans: n,
    opts,
    execArgv: process.execArgv,
    hwmIngestMiB: Math.round(hwmIngest),
    hwmMiB: Math.round(status('VmHWM')),
    spansPerS: Math.round(n / ingestS),
    withCompactPerS: Math.round(n / (ingestS + compactS)),
    cpuIngestS: r1((cpuIngest.user + cpuIngest.system) / 1e6),
    cpuS: r1((cpu.user + cpu.system) / 1e6),
    cpuUsPerSpan: r1((cpu.user + cpu.system) / n),
    ingestS: r1(ingestS),
    segments: { max: segMax, atFlush: segAtFlush, every10s: segSeries },
    rssTop: top,
    atPeakMiB: Object.fromEntries(Object.entries(peak).map(([k, v]) => [k, Math.round(v)])),
    load: readFileSync('/proc/loadavg', 'utf8').trim(),
  }),
);
