import { DuckDBInstance } from '@duckdb/node-api';
import { readdirSync } from 'node:fs';
const dir = process.argv[2];
const files = readdirSync(dir).filter(f=>f.endsWith('.parquet')).map(f=>`'${dir}/${f}'`);
const inst = await DuckDBInstance.create(':memory:', { threads: '2' });
const c = await inst.connect();
const src = `read_parquet([${files.join(',')}], hive_partitioning=false, union_by_name=true)`;
let t = 300;
async function q(sql, ...b) { const p = await c.prepare(sql); b.forEach((v,i)=>typeof v==='number'&&Number.isInteger(v)?p.bindInteger(i+1,v):p.bindDouble(i+1,v)); const r = await p.runAndReadAll(); return r.getRows(); }
for (let round = 0; round < 3; round++) {
  t += 37;
  const a = await q(`SELECT min(v) FROM (SELECT m6 v FROM ${src} WHERE type='llm' AND m8 > $1 ORDER BY m6 DESC LIMIT 101)`, t);
  const thr = Number(a[0][0]);
  const out = [];
  for (const [name, cols] of [['rowonly','file_row_number, file_index, m6'], ['seqc','seq, created_at, file_row_number, file_index, m6'], ['id','id, file_row_number, file_index, m6']]) {
    const t0 = performance.now();
    const b = await q(`SELECT ${cols} FROM ${src} WHERE type='llm' AND m8 > $1 AND m6 >= $2`, t, thr);
    out.push(name + ' ' + (performance.now()-t0).toFixed(0) + ' n' + b.length);
  }
  const t0 = performance.now();
  const b = await q(`SELECT file_row_number, file_index, m6 FROM ${src} WHERE m6 >= $2 AND type='llm' AND m8 > $1`, t, thr);
  out.push('reorder ' + (performance.now()-t0).toFixed(0) + ' n' + b.length);
  console.log(round, out.join(' | '));
}
