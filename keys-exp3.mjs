import { DuckDBInstance } from '@duckdb/node-api';
import { readdirSync } from 'node:fs';
const dir = process.argv[2];
const files = readdirSync(dir).filter(f=>f.endsWith('.parquet')).map(f=>`'${dir}/${f}'`);
const inst = await DuckDBInstance.create(':memory:', { threads: '2' });
const c = await inst.connect();
const src = `read_parquet([${files.join(',')}], hive_partitioning=false, union_by_name=true)`;
let t = 300;
async function q(sql, ...b) { const p = await c.prepare(sql); b.forEach((v,i)=>typeof v==='number'&&Number.isInteger(v)?p.bindInteger(i+1,v):p.bindDouble(i+1,v)); const r = await p.runAndReadAll(); return r.getRows(); }
for (let round = 0; round < 4; round++) {
  t += 37;
  let t0 = performance.now();
  const h = await q(`SELECT id FROM ${src} WHERE type='llm' AND m8 > $1 ORDER BY m6 DESC NULLS LAST, id DESC LIMIT 101`, t);
  const th = performance.now()-t0;
  t += 37;
  t0 = performance.now();
  const a = await q(`SELECT min(v) FROM (SELECT m6 v FROM ${src} WHERE type='llm' AND m8 > $1 ORDER BY m6 DESC LIMIT 101)`, t);
  const t1 = performance.now()-t0;
  const thr = Number(a[0][0]);
  const b = await q(`SELECT seq, created_at, id, file_row_number, file_index, m6, m8 FROM ${src} WHERE type='llm' AND m8 > $1 AND m6 >= $2 ORDER BY m6 DESC NULLS LAST, id DESC LIMIT 101`, t, thr);
  const t2 = performance.now()-t0;
  console.log(round, 'hand', th.toFixed(0), 'phase1', t1.toFixed(0), 'both', t2.toFixed(0), b.length);
}
