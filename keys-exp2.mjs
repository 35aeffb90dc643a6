import { DuckDBInstance } from '@duckdb/node-api';
import { readdirSync } from 'node:fs';
const dir = process.argv[2];
const files = readdirSync(dir).filter(f=>f.endsWith('.parquet')).map(f=>`'${dir}/${f}'`);
const inst = await DuckDBInstance.create(':memory:', { threads: '2' });
const c = await inst.connect();
const src = `read_parquet([${files.join(',')}], hive_partitioning=false, union_by_name=true)`;
const w = `WHERE type='llm' AND m8 > $1 ORDER BY m6 DESC NULLS LAST, id DESC LIMIT 101`;
const qs = {
  hand: `SELECT id FROM ${src} ${w}`,
  handbase: `SELECT id, type, session_id, trace_id, parent_id, seq, created_at, m6, m8 FROM ${src} ${w}`,
  rowonly: `SELECT seq, created_at, m6, m8, file_row_number FROM ${src} ${w}`,
  withfile: `SELECT seq, created_at, m6, m8, file_row_number, filename FROM ${src} ${w}`,
  fileidx: `SELECT seq, created_at, m6, m8, file_row_number, file_index FROM ${src} ${w}`,
};
let t = 300;
for (let round = 0; round < 3; round++) for (const [k, q] of Object.entries(qs)) {
  t += 37;
  try {
  const p = await c.prepare(q); p.bindInteger(1, t);
  const t0 = performance.now(); const r = await p.runAndReadAll(); 
  console.log(round, k, (performance.now()-t0).toFixed(0), 'ms', r.getRows().length);
  } catch (e) { console.log(k, String(e).slice(0,200)); }
}
if (process.env.EXPLAIN) { const r = await c.runAndReadAll(`EXPLAIN ${qs[process.env.EXPLAIN].replace('$1','500')}`); console.log(r.getRows().map(x=>x[1]).join('\n')); }
