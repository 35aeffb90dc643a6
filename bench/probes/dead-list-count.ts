// The unfiltered span count after the peer benchmark's 1% delete, through the library: wall and
// process CPU (every thread) per count once the segments' dead-row lists are made, so each count
// answers from the lists. Works on a fresh copy of a template (hard links for immutable files), which
// it removes. `--store`: the trace-store module of the checkout to measure (another worktree's, to
// compare builds: run them in turns, one process each).
//   node --import tsx bench/probes/dead-list-count.ts --data /work/data-10m --store <checkout>/src/engine/trace-store.ts
//     --copy <dir> [--counts 30] [--tag canary]
import { loadavg } from 'node:os';
import { median } from '../common.js';
import { openTemplateCopy } from './template-copy.js';

const t = await openTemplateCopy(['counts', 'tag']);
const counts = Number(t.args['counts'] ?? 30);
const { store } = t;
try {
  const count = async () => (await store.count('span', t.projectId, { log_stream_id: t.logStreamId } as never)).total_count;
  const before = await count();
  const { deleted, ms: deleteMs } = await t.peerDelete(t.args['tag'] ?? 'canary');
  const settle = await t.settleLists();
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
      store: t.args['store'],
      spans: before,
      deleted,
      deleteMs: Math.round(deleteMs),
      settleCounts: settle,
      countWallMedianMs: Number(median(wall).toFixed(1)),
      countCpuMedianMs: Number(median(cpu).toFixed(1)),
      counts,
      steps: t.steps(),
      loadavg: loadavg().map((x) => Number(x.toFixed(2))),
    }),
  );
} finally {
  await t.close();
}
