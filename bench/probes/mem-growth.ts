// What grows with stored spans in a library process. One serial caller (reliable: true, 1,000-span
// requests, as bench/probes/ingest-profile.ts) logs spans; at each step (after flush, and after a full
// GC) it records RSS, V8 heap, DuckDB's duckdb_memory() and the store's JS structures.
//   node --expose-gc --import tsx bench/probes/mem-growth.ts [steps=300000,600000,1200000] [--compact]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateBatches } from '../../test/support/generator.js';
import { TraceStore } from '../../src/engine/trace-store.js';

const MiB = 1024 * 1024;
const steps = (process.argv[2] ?? '300000,600000,1200000').split(',').map(Number);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const hwm = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024;
const dir = mkdtempSync(join(tmpdir(), 'tracelake-memg-'));
const store = await TraceStore.open(dir, JSON.parse(process.env['TL_OPTS'] ?? '{}') as Record<string, unknown>);
const project = store.createProject({ name: 'bench' });
const ls = store.createLogStream(project.id, 'ingest');
const rows: Record<string, unknown>[] = [];
// The highest RSS since the last step, with V8's share of it at that moment (sampled every 200 ms).
let peak = { rss: 0, heapTotal: 0, heapUsed: 0, arrayBuffers: 0 };
const timer = setInterval(() => {
  const u = process.memoryUsage();
  if (u.rss > peak.rss) peak = { rss: u.rss, heapTotal: u.heapTotal, heapUsed: u.heapUsed, arrayBuffers: u.arrayBuffers };
}, 200);
async function sample(label: string, spans: number): Promise<void> {
  // MEM_WAIT_MS: wait this long first, so cleanups queued by the seal (a sealed table's DROP) have run.
  await new Promise((r) => setTimeout(r, Number(process.env['MEM_WAIT_MS'] ?? 0)));
  const heapBefore = process.memoryUsage().heapUsed;
  gc!();
  if (process.env['MEM_GC_TWICE']) {
    // Finalizers of collected DuckDB wrappers (results, prepared statements) run after the GC; a second
    // GC after they ran shows whether native memory was waiting on JS garbage.
    await new Promise((r) => setTimeout(r, 200));
    gc!();
    await new Promise((r) => setTimeout(r, 200));
  }
  const m = await store.maintenance.memory();
  const r = Math.round;
  rows.push({
    label,
    spans,
    rssMiB: r(m.process.rss / MiB),
    hwmMiB: r(hwm()),
    heapUsedBeforeGcMiB: r(heapBefore / MiB),
    heapUsedMiB: r(m.process.heapUsed / MiB),
    heapTotalMiB: r(m.process.heapTotal / MiB),
    stepPeakMiB: Object.fromEntries(Object.entries(peak).map(([k, v]) => [k, r(v / MiB)])),
    externalMiB: r(m.process.external / MiB),
    arrayBuffersMiB: r(m.process.arrayBuffers / MiB),
    duckdbMiB: Object.fromEntries(Object.entries(m.duckdb).map(([k, v]) => [k, Math.round((v / MiB) * 10) / 10])),
    js: m.js,
    tables: m.tables,
  });
  console.log(JSON.stringify(rows.at(-1)));
  peak = { rss: 0, heapTotal: 0, heapUsed: 0, arrayBuffers: 0 };
}
await sample('open', 0);
let n = 0;
let next = 0;
const t0 = performance.now();
for (const batch of generateBatches({ spans: steps.at(-1)!, batchSpans: 1000, seed: 7 })) {
  const r = await store.logTraces(project.id, { log_stream_id: ls.id, reliable: true, traces: batch as never });
  n += r.spans_count;
  if (n >= steps[next]!) {
    await store.flush();
    await sample('ingested', n);
    next++;
  }
}
if (process.argv.includes('--compact')) {
  await store.maintenance.compact();
  await sample('compacted', n);
}
const wallS = (performance.now() - t0) / 1000;
clearInterval(timer);
await store.close();
rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify({ wallS: Math.round(wallS), load: readFileSync('/proc/loadavg', 'utf8').trim() }));
