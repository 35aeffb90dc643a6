// What the open after a fast stop costs: on a copy of a settled template, logs `spans` spans through
// the library (client ids, ~1,000-span requests), closes without sealing (what SIGTERM leaves: the
// rows only in the log), then times the reopen's steps in a process of its own: open (the log's
// replay) and the first count, with RSS. --delete: the peer benchmark's 1% delete first (its entry is
// in the log too, as in bench/costs.ts). Then a few questions after the first, timed one by one.
//   node dist/bench/probes/replay-open.js <template dir holding built.json> [spans=100000] [--delete]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { TraceStore } from '../../src/engine/trace-store.js';
import { generateBatches } from '../../test/support/generator.js';
import { copyStore } from '../peers/store-template.js';
import { QUESTIONS } from '../workload.js';

const [template, spansArg, child] = process.argv.slice(2);
if (!template) throw new Error('usage: replay-open.js <template dir> [spans]');
const built = JSON.parse(readFileSync(join(template, 'built.json'), 'utf8')) as { projectId: string; logStreamId: string };
const rss = () => Math.round(process.memoryUsage().rss / 2 ** 20);

if (child === 'open') {
  const dir = spansArg!;
  const t0 = performance.now();
  const store = await TraceStore.open(dir, { autoCompact: false });
  const open = performance.now() - t0;
  const n = (await store.count('span', built.projectId, { log_stream_id: built.logStreamId })).total_count;
  const first = performance.now() - t0;
  const cpu = process.cpuUsage();
  const rssFirst = rss();
  // Questions after the first: the count again, a filtered count (asked twice) and a first page.
  const timed = async (fn: () => Promise<unknown>) => {
    const t = performance.now();
    await fn();
    return Math.round(performance.now() - t);
  };
  const scope = { log_stream_id: built.logStreamId };
  const llm = { ...scope, filters: [{ type: 'text', column_id: 'type', operator: 'eq', value: 'llm' }] } as never;
  const again_ms = await timed(() => store.count('span', built.projectId, scope));
  const filtered_ms = await timed(() => store.count('span', built.projectId, llm));
  const filtered_again_ms = await timed(() => store.count('span', built.projectId, llm));
  const page_ms = await timed(() => store.search('span', built.projectId, { ...scope, limit: 50 }));
  console.log(
    JSON.stringify({
      open_ms: Math.round(open),
      first_answer_ms: Math.round(first),
      again_ms,
      filtered_ms,
      filtered_again_ms,
      page_ms,
      rss_after_first_mib: rssFirst,
      spans: n,
      rss_mib: rss(),
      cpu_ms: Math.round((cpu.user + cpu.system) / 1000),
    }),
  );
  await store.close({ seal: false });
} else {
  const spans = Number(spansArg ?? 100_000);
  const work = mkdtempSync(join(dirname(template), 'replay-'));
  const dir = join(work, 'tracelake');
  try {
    copyStore(join(template, 'tracelake'), dir);
    const store = await TraceStore.open(dir, { autoCompact: false });
    if (process.argv.includes('--delete')) {
      const q = QUESTIONS.find((x) => x.api(x.variants[0]!).op === 'delete')!;
      const call = q.api(q.variants[0]!);
      const t0 = performance.now();
      const { deleted } = await store.records.delete('span', built.projectId, { ...call.body, log_stream_id: built.logStreamId } as never);
      process.stdout.write(`deleted ${deleted} in ${Math.round(performance.now() - t0)} ms\n`);
    }
    let logged = 0;
    for (const batch of generateBatches({ spans, batchSpans: 1000, seed: 4242, startTime: Date.UTC(2027, 0, 1) }))
      logged += (await store.logTraces(built.projectId, { log_stream_id: built.logStreamId, reliable: true, traces: batch } as never))
        .spans_count;
    await store.close({ seal: false });
    const r = spawnSync(process.execPath, [...process.execArgv, new URL(import.meta.url).pathname, template, dir, 'open'], {
      encoding: 'utf8',
    });
    process.stdout.write(`logged ${logged}\n${r.stdout}${r.stderr}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
