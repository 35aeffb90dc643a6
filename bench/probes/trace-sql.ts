// Debug aid (not part of a run): opens a store kept by `--shapes-dir`, asks one partial search or
// count, and prints every SQL statement it ran with its time. Usage:
//   node --import tsx bench/probes/trace-sql.ts <dir> '<json body>' [count] [level]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Connection } from '../../src/db/database.js';
import { TraceStore } from '../../src/engine/trace-store.js';
import { compile } from '../../src/query/sql.js';

const [dir, bodyJson, mode, level = 'span'] = process.argv.slice(2);
const { projectId, runId } = JSON.parse(readFileSync(join(dir!, 'shapes-ids.json'), 'utf8')) as { projectId: string; runId: string };
const log: string[] = [];
let on = false;
const orig = Connection.prototype.all;
Connection.prototype.all = async function (q) {
  const t0 = performance.now();
  const r = await orig.call(this, q);
  if (on) log.push(`${(performance.now() - t0).toFixed(1)} ms, ${r.length} rows: ${compile(q).text.slice(0, 4000)}`);
  return r;
};
let steps: readonly string[] = [];
const store = await TraceStore.open(join(dir!, 'tracelake'), { onPlan: (s) => (steps = s) });
const body = { ...JSON.parse(bodyJson!), log_stream_id: runId };
const ask = () => (mode === 'count' ? store.count(level as never, projectId, body) : store.partialSearch(level as never, projectId, body));
await ask();
for (let i = 0; i < 3; i++) {
  log.length = 0;
  on = true;
  const t0 = performance.now();
  await ask();
  on = false;
  console.log(`run ${i}: ${(performance.now() - t0).toFixed(1)} ms [${steps.join(' → ')}]`);
}
console.log(log.join('\n\n'));
await store.close();
