// The unfiltered span count after the peer benchmark's 1% delete, through the library: wall and
// process CPU (every thread) per count once the segments' dead-row lists are made, so each count
// answers from the lists. Works on a fresh copy of a template (hard links for immutable files), which
// it removes. `--store`: the trace-store module of the checkout to measure (another worktree's, to
// compare builds: run them in turns, one process each).
//   node --import tsx bench/probes/dead-list-count.ts --data /work/data-10m --store <checkout>/src/engine/trace-store.ts
//     --copy <dir> [--counts 30] [--tag canary]
import { readFileSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { median } from '../common.js';
import { copyStore } from '../peers/store-template.js';

const { values: a } = parseArgs({
  options: {
    data: { type: 'string' },
    store: { type: 'string' },
    copy: { type: 'string' },
    counts: { type: 'string' },
    tag: { type: 'string' },
  },
});
if (!a.data || !a.store || !a.copy) throw new Error('usage: --data <template> --store <trace-store module> --copy <dir>');
const info = JSON.parse(readFileSync(join(a.data, 'built.json'), 'utf8')) as { projectId: string; logStreamId: string };
const counts = Number(a.counts ?? 30);
const dir = resolve(a.copy);
rmSync(dir, { recursive: true, force: true });
copyStore(join(a.data, 'tracelake'), dir);

type Mod = typeof import('../../src/engine/trace-store.js');
const { TraceStore } = (await import(resolve(a.store))) as Mod;
let steps: string[] = [];
const store = await TraceStore.open(dir, { onPlan: (s) => (steps = [...s]) });
try {
  const body = { log_stream_id: info.logStreamId };
  const count = async () => (await store.count('span', info.projectId, body as never)).total_count;
  const before = await count();
  const d0 = performance.now();
  const filters = [
    { type: 'text', column_id: 'type', operator: 'eq', value: 'llm' },
    { type: 'collection', column_id: 'tags', operator: 'contains', value: a.tag ?? 'canary' },
  ];
  const { deleted } = await store.records.delete('span', info.projectId, { ...body, filters } as never);
  const deleteMs = performance.now() - d0;
  // Until a count makes no list (the background lists after the delete, or the counts' own).
  let settle = 0;
  for (; settle < 60; settle++) {
    await count();
    if (steps.some((s) => /\(0 made\)/.test(s))) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const wall: number[] = [];
  const cpu: number[] = [];
  let n = 0;
  for (let i = 0; i < counts; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    n = await count();
    wall.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  if (n !== before - deleted) throw new Error(`count ${n}, expected ${before - deleted}`);
  console.log(
    JSON.stringify({
      store: a.store,
      spans: before,
      deleted,
      deleteMs: Math.round(deleteMs),
      settleCounts: settle,
      countWallMedianMs: Number(median(wall).toFixed(1)),
      countCpuMedianMs: Number(median(cpu).toFixed(1)),
      counts,
      steps,
      loadavg: loadavg().map((x) => Number(x.toFixed(2))),
    }),
  );
} finally {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
