// What the planner's per-query facts read over rows still in memory (a GROUP BY over the memory tables,
// src/query/exec/data-facts.ts) costs a span query, with every row unsealed. Not part of a run.
//   node --import tsx bench/probes/mem-facts.ts [spans]   (default 100k)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '../../src/db/database.js';
import { TraceStore } from '../../src/engine/trace-store.js';
import { PAGE, spanBatches } from '../workload.js';
import { compile } from '../../src/query/sql.js';

const n = Number(process.argv[2] ?? 100000);
const log: [string, number][] = [];
const orig = Connection.prototype.all;
Connection.prototype.all = async function (q) {
  const t0 = performance.now();
  const r = await orig.call(this, q);
  log.push([compile(q).text.slice(0, 60), performance.now() - t0]);
  return r;
};
const dir = mkdtempSync(join(tmpdir(), 'memfacts-'));
// Nothing sealed: the memory table takes every row (a memory limit to match, as TraceStore.open asks).
const store = await TraceStore.open(join(dir, 's'), {
  memTableBytes: 1_500_000_000,
  memoryLimit: '4GB',
  sealRows: 10_000_000,
  autoCompact: false,
});
const p = store.createProject({ name: 'p' }).id;
const run = store.createLogStream(p, 'b').id;
for (const b of spanBatches({ spans: n })) await store.logTraces(p, { log_stream_id: run, reliable: true, traces: b.traces } as never);
console.log(JSON.stringify(store.records.stats));
const body = {
  log_stream_id: run,
  filters: [
    { type: 'text', column_id: 'model', operator: 'eq', value: 'gpt-4o' },
    { type: 'number', column_id: 'metrics/correctness', operator: 'gt', value: 0.5 },
  ],
};
const page = {
  ...body,
  filters: [{ type: 'text', column_id: 'type', operator: 'eq', value: 'llm' }],
  sort: { column_id: 'metrics/correctness', ascending: false },
  pagination: { starting_token: 0, limit: PAGE },
  select_columns: { column_ids: ['id'], metric_columns_names: ['correctness'] },
};
for (const [name, ask] of [
  ['count model+metric', () => store.count('span', p, body as never)],
  ['llm page by metric', () => store.partialSearch('span', p, page as never)],
] as const) {
  await ask();
  const facts: number[] = [];
  const totals: number[] = [];
  for (let i = 0; i < 7; i++) {
    log.length = 0;
    const t0 = performance.now();
    await ask();
    totals.push(performance.now() - t0);
    facts.push(log.filter(([s]) => s.startsWith('SELECT r.type AS type, bool_or')).reduce((a, [, t]) => a + t, 0));
  }
  const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
  console.log(
    `${name}: total median ${med(totals).toFixed(1)} ms, ` +
      `facts over memory rows median ${med(facts).toFixed(1)} ms (${(facts.map((f) => f.toFixed(1))).join(', ')})`,
  );
}
await store.close();
rmSync(dir, { recursive: true, force: true });
