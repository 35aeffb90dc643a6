// Times the peer benchmark's delete question (llm spans with tag T, ~1% of the spans) through the
// library, alone: loads the seeded span set (bench/workload.ts) like the peers' tracelake load (reliable
// logTraces, then seal and compact), then deletes one tag per run, each after background compaction
// has settled. Reports wall and process CPU time (DuckDB's threads included) per delete; with
// --reads, also the medians of five peer questions asked after the deletes.
//   node --import tsx bench/probes/delete-parents.ts --spans 200000 --runs 5 --reads --dir /tmp/bench-delete
import { rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { TraceStore } from '../../src/engine/trace-store.js';
import type { LogTracesRequest } from '../../src/schemas/ingest.js';
import { questionById, spanBatches } from '../workload.js';

const { values } = parseArgs({
  options: {
    spans: { type: 'string', default: '200000' },
    runs: { type: 'string', default: '5' },
    dir: { type: 'string', default: '/tmp/tracelake-bench-delete' },
    reads: { type: 'boolean', default: false },
  },
});
const spans = Number(values.spans);
const dir = values.dir!;
rmSync(dir, { recursive: true, force: true });
const store = await TraceStore.open(dir);
const project = store.createProject({ name: 'bench' });
const ls = { log_stream_id: store.createLogStream(project.id, 'bench').id };
for (const batch of spanBatches({ spans }))
  await store.logTraces(project.id, { ...ls, reliable: true, traces: batch.traces } as unknown as LogTracesRequest);
await store.flush();
await store.maintenance.compact();
const q = questionById('delete-filter');
const out: { tag: string; deleted: number; wallMs: number; cpuMs: number; rowsWritten: number }[] = [];
for (let v = 0; v < Number(values.runs); v++) {
  await store.maintenance.compact(); // the previous delete's background merge is done before the clock starts
  const variant = q.variants[v % q.variants.length]!;
  const body = { ...(q.api(variant).body as object), ...ls };
  const rows = store.records.stats.memRows;
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  const { deleted } = await store.records.delete('span', project.id, body);
  const wallMs = performance.now() - t0;
  const used = process.cpuUsage(cpu);
  out.push({
    tag: String(variant[1]),
    deleted,
    wallMs: Math.round(wallMs),
    cpuMs: Math.round((used.user + used.system) / 1000),
    rowsWritten: store.records.stats.memRows - rows,
  });
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
// Reads after the deletes (with --reads): what the parents' overrides cost the other questions.
const reads: Record<string, { wallMs: number; cpuMs: number }> = {};
for (const id of values.reads ? ['count-tree', 'page-filtered', 'page-sorted-metric', 'text-page', 'rollup-trace'] : []) {
  const rq = questionById(id);
  const call = rq.api(rq.variants[0]!);
  const level = call.level === 'traces' ? 'trace' : 'span';
  const body = { ...(call.body as object), ...ls };
  const ask = () => (call.op === 'count' ? store.count(level, project.id, body) : store.partialSearch(level, project.id, body));
  await ask();
  const wall: number[] = [];
  const cpus: number[] = [];
  for (let i = 0; i < 5; i++) {
    const cpu = process.cpuUsage();
    const t0 = performance.now();
    await ask();
    wall.push(performance.now() - t0);
    const used = process.cpuUsage(cpu);
    cpus.push((used.user + used.system) / 1000);
  }
  reads[id] = { wallMs: Math.round(median(wall) * 10) / 10, cpuMs: Math.round(median(cpus) * 10) / 10 };
}
await store.close();
rmSync(dir, { recursive: true, force: true });
process.stdout.write(
  `${JSON.stringify({ spans, runs: out, medianWallMs: median(out.map((r) => r.wallMs)), medianCpuMs: median(out.map((r) => r.cpuMs)), reads })}\n`,
);
