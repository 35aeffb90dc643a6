// The first question after opening a store whose segment entries lack the planner's facts (as an
// older build wrote them): wall and process CPU (every thread) of the peer benchmark's three-leaf
// count, asked once right after the open. Works on a fresh copy of a template (hard links for
// immutable files) whose manifest entries it strips of `type_facts` and `full_metrics`, and removes
// the copy afterwards. `--store`: the trace-store module of the checkout to measure. With `--settle`,
// the store is first opened and left until its background work has filled the facts in (the time and
// CPU that took are reported), then closed and opened again for the question. One process per run;
// compare builds in turns.
//   node --import tsx bench/probes/fact-backfill-open.ts --data /work/data-10m --store <checkout>/src/engine/trace-store.ts
//     --copy <dir> [--settle]
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { copyStore } from '../peers/store-template.js';
import { QUESTIONS } from '../workload.js';

const { values: a } = parseArgs({
  options: { data: { type: 'string' }, store: { type: 'string' }, copy: { type: 'string' }, settle: { type: 'boolean' } },
});
if (!a.data || !a.store || !a.copy) throw new Error('usage: --data <template> --store <trace-store module> --copy <dir> [--settle]');
const info = JSON.parse(readFileSync(join(a.data, 'built.json'), 'utf8')) as { projectId: string; logStreamId: string };
const dir = resolve(a.copy);
rmSync(dir, { recursive: true, force: true });
copyStore(join(a.data, 'tracelake'), dir);
const manifestPath = join(dir, 'manifest.json');
const m = JSON.parse(readFileSync(manifestPath, 'utf8')) as { segments: Record<string, unknown>[] };
for (const g of m.segments) {
  delete g['type_facts'];
  delete g['full_metrics'];
}
writeFileSync(manifestPath, JSON.stringify(m));

type Mod = typeof import('../../src/engine/trace-store.js');
type Internals = typeof import('../../src/engine/internals.js');
const { TraceStore } = (await import(resolve(a.store))) as Mod;
const { internalsOf } = (await import(join(dirname(resolve(a.store)), 'internals.js'))) as Internals;
const q = QUESTIONS.find((x) => x.id === 'count-tree')!;
const call = q.api(q.variants[0]!);
const out: Record<string, unknown> = { store: a.store, settle: a.settle === true };
try {
  if (a.settle) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const store = await TraceStore.open(dir);
    const records = internalsOf(store).records as { factsSettled?: () => Promise<void> };
    if (!records.factsSettled) throw new Error('this build has no background fact work');
    await records.factsSettled();
    out['openAndSettleMs'] = Math.round(performance.now() - t0);
    const c = process.cpuUsage(c0);
    out['openAndSettleCpuMs'] = Math.round((c.user + c.system) / 1000);
    await store.close();
    const after = JSON.parse(readFileSync(manifestPath, 'utf8')) as { segments: Record<string, unknown>[] };
    out['entriesWithFacts'] = `${after.segments.filter((g) => g['full_metrics'] !== undefined).length}/${after.segments.length}`;
  }
  const t0 = performance.now();
  const store = await TraceStore.open(dir);
  out['openMs'] = Math.round(performance.now() - t0);
  try {
    const c0 = process.cpuUsage();
    const t1 = performance.now();
    const r = await store.count('span', info.projectId, { ...call.body, log_stream_id: info.logStreamId } as never);
    out['firstCountMs'] = Math.round(performance.now() - t1);
    const c = process.cpuUsage(c0);
    out['firstCountCpuMs'] = Math.round((c.user + c.system) / 1000);
    out['count'] = r.total_count;
  } finally {
    await store.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
out['loadavg'] = loadavg().map((x) => Number(x.toFixed(2)));
console.log(JSON.stringify(out));
