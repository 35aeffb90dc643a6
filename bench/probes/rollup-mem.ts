// Where the memory of one question goes: opens a settled store read-only (nothing written), asks the
// peer benchmark's trace roll-up (total num_total_tokens per trace, top 100) `runs` times, and samples
// every 100 ms the process RSS, V8's heap and DuckDB's own accounting by tag. Prints, per ask, its
// time, the highest RSS and DuckDB's total at that sample, then VmHWM.
//   node dist/bench/probes/rollup-mem.js <template dir holding built.json> [runs=2]
// TL_OPTS='{"memoryLimit":"256MB"}' passes store options; TL_QUESTION picks other peer questions by
// id (a comma list, or `all` for every question but the delete, in the workload's order).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TraceStore } from '../../src/engine/trace-store.js';
import { QUESTIONS } from '../workload.js';

const MiB = 1024 * 1024;
const template = process.argv[2];
if (!template) throw new Error('usage: rollup-mem.js <template dir> [runs]');
const runs = Number(process.argv[3] ?? 2);
const built = JSON.parse(readFileSync(join(template, 'built.json'), 'utf8')) as { projectId: string; logStreamId: string };
const opts = JSON.parse(process.env['TL_OPTS'] ?? '{}') as Record<string, unknown>;
const wanted = (process.env['TL_QUESTION'] ?? 'rollup-trace').split(',');
const questions = QUESTIONS.filter((x) => (wanted[0] === 'all' ? x.api(x.variants[0]!).op !== 'delete' : wanted.includes(x.id)));
if (questions.length === 0) throw new Error('no such question');
const status = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024;

const store = await TraceStore.open(join(template, 'tracelake'), { ...opts, readOnly: true });
let peak = { rss: 0, heap: 0, external: 0, duckdb: 0, tags: {} as Record<string, number> };
let duck: Record<string, number> = {};
let sampling = false;
const timer = setInterval(() => {
  const u = process.memoryUsage();
  const total = Object.values(duck).reduce((a, b) => a + b, 0) / MiB;
  if (u.rss / MiB > peak.rss) peak = { rss: u.rss / MiB, heap: u.heapUsed / MiB, external: u.external / MiB, duckdb: total, tags: duck };
  if (!sampling) {
    sampling = true;
    void store.maintenance.memory().then(
      (m) => {
        duck = Object.fromEntries(Object.entries(m.duckdb).filter(([, v]) => v > 4 * MiB));
        sampling = false;
      },
      () => (sampling = false),
    );
  }
}, 100);
console.log(
  JSON.stringify({
    opened_rss_mib: Math.round(process.memoryUsage().rss / MiB),
    env_malloc_arena_max: process.env['MALLOC_ARENA_MAX'] ?? null,
  }),
);
for (const q of questions) {
  const call = q.api(q.variants[0]!);
  const body = { ...call.body, log_stream_id: built.logStreamId } as never;
  const level = call.level === 'traces' ? 'trace' : 'span';
  for (let i = 0; i < runs; i++) {
    peak = { rss: 0, heap: 0, external: 0, duckdb: 0, tags: {} };
    const t0 = performance.now();
    const n =
      call.op === 'count'
        ? (await store.count(level, built.projectId, body)).total_count
        : call.op === 'available_columns'
          ? (await store.records.availableColumns(level, built.projectId, body)).columns.length
          : (await store.partialSearch(level, built.projectId, body)).records.length;
    const ms = performance.now() - t0;
    const tags = Object.fromEntries(Object.entries(peak.tags).map(([k, v]) => [k, Math.round(v / MiB)]));
    console.log(
      JSON.stringify({
        q: q.id,
        ask: i,
        ms: Math.round(ms),
        n,
        peak_rss_mib: Math.round(peak.rss),
        rss_after_mib: Math.round(process.memoryUsage().rss / MiB),
        heap: Math.round(peak.heap),
        duckdb_mib: Math.round(peak.duckdb),
        tags,
      }),
    );
  }
}
clearInterval(timer);
console.log(JSON.stringify({ vm_hwm_mib: Math.round(status('VmHWM')), load: readFileSync('/proc/loadavg', 'utf8').trim() }));
await store.close();
