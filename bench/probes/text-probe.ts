// Times the peer benchmark's text questions (count, first page) on an existing store copy, with each
// run's plan steps and process CPU: node --import tsx bench/probes/text-probe.ts <store-dir> <projectId> <runId> [runs]
import { TraceStore } from '../../src/engine/trace-store.js';
import { QUESTIONS } from '../workload.js';

const [dir, projectId, runId, runsArg = '5'] = process.argv.slice(2);
if (!dir || !projectId || !runId) throw new Error('usage: text-probe.ts <store-dir> <projectId> <runId> [runs]');
let plan: readonly string[] = [];
const windowRows = Number(process.env['WINDOW_ROWS'] ?? 0);
const store = await TraceStore.open(dir, {
  onPlan: (s) => {
    plan = s;
  },
  ...(windowRows > 0 ? { pageWindowRows: windowRows } : {}),
});
const only = process.env['ONLY'];
try {
  for (const id of only ? only.split(',') : ['text-count', 'text-page']) {
    const q = QUESTIONS.find((x) => x.id === id)!;
    for (let i = 0; i <= Number(runsArg); i++) {
      const cpu0 = process.cpuUsage();
      const t = performance.now();
      const v = q.variants[i % q.variants.length]!;
      const c2 = q.api(v);
      const b2 = { ...c2.body, log_stream_id: runId };
      const answer =
        c2.op === 'count'
          ? (await store.count('span', projectId, b2 as never)).total_count
          : (await store.partialSearch('span', projectId, b2 as never)).records
              .map((r) => String(r['id']))
              .join(',')
              .slice(0, 40);
      const ms = performance.now() - t;
      const cpu = process.cpuUsage(cpu0);
      process.stdout.write(
        `${JSON.stringify({ id, run: i, answer, wallMs: Math.round(ms * 10) / 10, cpuMs: Math.round((cpu.user + cpu.system) / 1000), plan })}\n`,
      );
    }
  }
} finally {
  await store.close();
}
