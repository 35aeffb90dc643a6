// What library ingest costs per span, all told: process CPU (every thread) for ingest, the final seal
// and compaction, less the benchmark's own generation of the requests (timed in the loop), and the
// bytes written (the store's own tally by cause where the build has one, and the kernel's count for
// this process from /proc/self/io) per span and per byte logged. One serial caller, reliable:
// true, ~1,000-span requests, as bench/ingest.ts's library run.
//   node --import tsx bench/probes/ingest-costs.ts [spans=1000000] [--no-compact] [--pause-every K --pause-ms M]
// TL_ROOT=/other/checkout runs that checkout's store (built: its dist/ is used), so an old and a new
// build can take turns; TL_OPTS: store options as JSON.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { generateBatches } from '../../test/support/generator.js';
import { peakRssMiB } from '../common.js';

/** write_bytes, cancelled_write_bytes and wchar of this process (Linux). */
function io(): { write: number; cancelled: number; wchar: number } {
  const t = readFileSync('/proc/self/io', 'utf8');
  const f = (k: string) => Number(new RegExp(`${k}: (\\d+)`).exec(t)?.[1] ?? 0);
  return { write: f('write_bytes'), cancelled: f('cancelled_write_bytes'), wchar: f('wchar') };
}

const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

// The JavaScript thread's own CPU (Linux: utime + stime of this thread, in clock ticks of 1/100 s);
// the rest of the process's CPU is DuckDB's threads and libuv's pool.
function mainThreadCpu(): number {
  const fields = readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Bytes on disk by kind: the file's extension (.parquet, .ids, .top, ...) or the log/manifest. */
function bytesByKind(dir: string): Record<string, number> {
  const out: Record<string, number> = {};
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else {
        const dot = e.name.lastIndexOf('.');
        const kind = dot > 0 ? e.name.slice(dot) : e.name;
        out[kind] = (out[kind] ?? 0) + statSync(p).size;
      }
    }
  };
  walk(dir);
  return out;
}

const root = process.env['TL_ROOT'] ?? new URL('../..', import.meta.url).pathname.replace(/\/dist\/$/, '/');
const { TraceStore } = (await import(join(root, 'dist/src/engine/trace-store.js'))) as typeof import('../../src/engine/trace-store.js');
const spans = Number(process.argv[2] ?? 1_000_000);
const compact = !process.argv.includes('--no-compact');
// --pause-every K: the caller falls silent for --pause-ms (default 1,000) after every K requests, as
// bursty clients do: background merges then take the quiet-store path (compaction.ts pickMerge).
const flag = (name: string) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : Number(process.argv[i + 1]);
};
const pauseEvery = flag('--pause-every') ?? 0;
const pauseMs = flag('--pause-ms') ?? 1000;
let paused = 0;
const options = JSON.parse(process.env['TL_OPTS'] ?? '{}') as Record<string, unknown>;

const dir = mkdtempSync(join(process.env['TL_TMP'] ?? '/tmp', 'tracelake-costs-'));
const store = await TraceStore.open(dir, options);
const project = store.createProject({ name: 'bench' });
const ls = store.createLogStream(project.id, 'ingest');
const io0 = io();
const cpu0 = cpu();
const main0 = mainThreadCpu();
const t0 = performance.now();
let n = 0;
let requests = 0;
let jsonBytes = 0;
// The generator's CPU is the benchmark's, not the store's. Each request's generation is timed where it
// runs, in this loop, by the wall clock (synchronous JavaScript: the main thread's time; the process's
// CPU would also count the store's seals running beside it). A separate pass measured 2 or 5 µs a span
// from run to run, as V8 chose, which skewed old/new comparisons by up to 3 µs a span.
let genCpu = 0;
const requestsOf = generateBatches({ spans, batchSpans: 1000, seed: 7 });
for (;;) {
  const g0 = performance.now();
  const next = requestsOf.next();
  genCpu += (performance.now() - g0) / 1000;
  if (next.done) break;
  const batch = next.value;
  const body = { log_stream_id: ls.id, reliable: true, traces: batch as never };
  const r = await store.logTraces(project.id, body);
  n += r.spans_count;
  if (pauseEvery > 0 && ++requests % pauseEvery === 0) {
    await new Promise((ok) => setTimeout(ok, pauseMs));
    paused += pauseMs;
  }
}
const tIngest = performance.now();
const cpuIngest = cpu();
await store.flush();
const tFlush = performance.now();
const cpuFlush = cpu();
// Builds before the store was made of parts keep stats and compact() on the store itself.
type Stats = { written?: Record<string, number>; segments: number };
const old = store as unknown as { stats?: Stats; compact?: () => Promise<unknown> };
const statsNow = (): Stats => (store.records?.stats as unknown as Stats | undefined) ?? old.stats!;
const before = statsNow();
if (compact) await (store.maintenance?.compact() ?? old.compact!());
const tCompact = performance.now();
const cpuCompact = cpu();
const mainCompact = mainThreadCpu();
const io1 = io();
const stats = statsNow();
await store.close();
const kinds = bytesByKind(dir);
const disk = Object.values(kinds).reduce((a, b) => a + b, 0);
// JSON bytes of the same requests (the request as a caller would send it), counted after the run.
for (const batch of generateBatches({ spans, batchSpans: 1000, seed: 7 })) jsonBytes += JSON.stringify({ traces: batch }).length;
rmSync(dir, { recursive: true, force: true });

const per = (x: number) => Math.round((x * 1e6 * 10) / n) / 10;
const written = stats.written;
const tallied = written ? Object.values(written).reduce((a, b) => a + b, 0) : null;
const log = written?.['log'] ?? null;
console.log(
  JSON.stringify(
    {
      root,
      spans: n,
      options,
      pauses: pauseEvery > 0 ? { every: pauseEvery, ms: pauseMs, total_s: paused / 1000 } : null,
      load: readFileSync('/proc/loadavg', 'utf8').trim(),
      rate: Math.round((n / (tFlush - t0)) * 1000),
      rate_with_compaction: Math.round((n / (tCompact - t0)) * 1000),
      cpu_us_per_span: {
        generation: per(genCpu),
        ingest: per(cpuIngest - cpu0 - genCpu),
        flush: per(cpuFlush - cpuIngest),
        compact: per(cpuCompact - cpuFlush),
        total: per(cpuCompact - cpu0 - genCpu),
        // Of the total: the JavaScript thread (less the generation, which runs there) and the others.
        javascript_thread: per(mainCompact - main0 - genCpu),
        other_threads: per(cpuCompact - cpu0 - (mainCompact - main0)),
      },
      wall_s: { ingest: (tIngest - t0) / 1000, flush: (tFlush - tIngest) / 1000, compact: (tCompact - tFlush) / 1000 },
      bytes_per_span: {
        json: Math.round(jsonBytes / n),
        log: log === null ? null : Math.round(log / n),
        disk_end: Math.round(disk / n),
        written_tally: tallied === null ? null : Math.round(tallied / n),
        written_kernel: Math.round((io1.write - io0.write) / n),
        cancelled_kernel: Math.round((io1.cancelled - io0.cancelled) / n),
        wchar: Math.round((io1.wchar - io0.wchar) / n),
      },
      disk_by_kind_per_span: Object.fromEntries(
        Object.entries(kinds)
          .sort((a, b) => b[1] - a[1])
          .map(([k, v]) => [k, Math.round((v / n) * 10) / 10]),
      ),
      written_by_cause_per_span: written
        ? Object.fromEntries(Object.entries(written).map(([k, v]) => [k, Math.round((v / n) * 10) / 10]))
        : null,
      written_per_byte_logged: tallied !== null && log ? Math.round((tallied / log) * 100) / 100 : null,
      kernel_written_per_json_byte: Math.round(((io1.write - io0.write) / jsonBytes) * 100) / 100,
      segments_before_compact: before.segments,
      merge_parquet_before_compact_per_span: before.written ? Math.round(before.written['mergeParquet']! / n) : null,
      segments_end: stats.segments,
      peak_rss_mib: peakRssMiB(),
    },
    null,
    1,
  ),
);
