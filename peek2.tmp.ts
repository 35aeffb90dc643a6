import { TraceStore } from './src/engine/trace-store.js';
import { mkdtempSync } from 'node:fs';
const store = await TraceStore.open(mkdtempSync('/tmp/viewer-dev/s-'));
const p = store.createProject({ name: 'demo' });
const ls = store.createLogStream(p.id, 'prod');
const t0 = Date.parse('2026-02-01T10:00:00Z');
let n = 0;
const mk = (depth: number): any[] => {
  const out: any[] = [];
  for (let i = 0; i < (depth === 0 ? 50 : 99); i++) {
    n++;
    const at = new Date(t0 + n * 10).toISOString();
    if (depth === 0) out.push({ type: 'workflow', name: `step ${i}`, input: `in ${i}`, created_at: at, metrics: { duration_ns: 990_000_000 }, spans: mk(1) });
    else out.push(i % 3 === 0 ? { type: 'llm', name: `llm ${n}`, input: [{ role: 'user', content: 'hi ' + n }], output: { role: 'assistant', content: 'yo' }, created_at: at, metrics: { duration_ns: 9_000_000, num_input_tokens: 10, num_output_tokens: 5 } }
      : { type: 'tool', name: `tool ${n}`, input: 'x', output: 'y', created_at: at, metrics: { duration_ns: 8_000_000 } });
  }
  return out;
};
const spans = mk(0);
const r = await store.logTraces(p.id, { log_stream_id: ls.id, traces: [{ type: 'trace', name: 'big', input: 'q', output: 'a', created_at: new Date(t0).toISOString(), spans } as any] });
console.log('spans', n, r);
const tid = (await store.partialSearch('trace', p.id, { log_stream_id: ls.id, limit: 1, select_columns: { column_ids: ['name'] } })).records[0]!.id as string;
const body = (start: number) => ({ filters: [{ type: 'id', column_id: 'trace_id', value: tid }], pagination: { starting_token: start, limit: 1000 }, sort: { column_id: 'created_at', ascending: true }, select_columns: { column_ids: ['name', 'created_at', 'status_code', 'step_number', 'metrics/duration_ns', 'metrics/num_total_tokens'] } });
for (let rep = 0; rep < 3; rep++) {
  let t = performance.now();
  const c = await store.count('span', p.id, { filters: [{ type: 'id', column_id: 'trace_id', value: tid }] } as any);
  const tc = performance.now() - t;
  t = performance.now();
  let total = 0;
  for (let s = 0; s < c.total_count; s += 1000) total += (await store.partialSearch('span', p.id, body(s) as any)).records.length;
  const seq = performance.now() - t;
  t = performance.now();
  const pages = await Promise.all([0, 1000, 2000, 3000, 4000].map((s) => store.partialSearch('span', p.id, body(s) as any)));
  const par = performance.now() - t;
  t = performance.now();
  const withLs = await store.partialSearch('span', p.id, { ...body(0), log_stream_id: ls.id } as any);
  const one = performance.now() - t;
  console.log({ count: c.total_count, tc, total, seq, par, one, bytes: JSON.stringify(pages).length });
}
await store.flush?.();
await store.close();
