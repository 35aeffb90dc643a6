// A 1% delete at scale, alone: on a copy of a peer-benchmark template (store-template.ts), the peer
// delete question through the library for each tag given, one after another, wall and process CPU.
// Run from two checkouts over the same template to compare old and new code.
//   node --import tsx bench/probes/delete-steps.ts /work/data-10m [canary,eval,staging]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { openCopy, type TemplateInfo } from '../peers/store-template.js';
import { QUESTIONS } from '../workload.js';

const [dataDir, tagList = 'canary,eval,staging'] = process.argv.slice(2);
if (!dataDir) throw new Error('usage: delete-steps.ts <data-dir> [tag]');
const info = JSON.parse(readFileSync(join(dataDir, 'built.json'), 'utf8')) as TemplateInfo;
const parent = mkdtempSync(join(dataDir, '..', 'delete-steps-'));
const load = await openCopy(dataDir, info, parent);
try {
  const q = QUESTIONS.find((x) => x.id === 'delete-filter')!;
  for (const tag of tagList.split(',')) {
    const body = { ...q.api(['llm', tag]).body, log_stream_id: load.logStreamId };
    const cpu0 = process.cpuUsage();
    const t = performance.now();
    const r = await load.store.records.delete('span', load.projectId, body as never);
    const ms = performance.now() - t;
    const cpu = process.cpuUsage(cpu0);
    process.stdout.write(`${JSON.stringify({ tag, ...r, wallMs: Math.round(ms), cpuMs: Math.round((cpu.user + cpu.system) / 1000) })}\n`);
  }
} finally {
  await load.store.close();
  rmSync(parent, { recursive: true, force: true });
}
