import { DuckDBInstance } from '@duckdb/node-api';
import { readdirSync } from 'node:fs';
const dir = process.argv[2];
const files = readdirSync(dir).filter(f=>f.endsWith('.parquet')).map(f=>`'${dir}/${f}'`);
const inst = await DuckDBInstance.create(':memory:', { threads: '2' });
const c = await inst.connect();
const src = `read_parquet([${files.join(',')}], hive_partitioning=false, union_by_name=true)`;
const full = `SELECT seq, id, type, project_id, run_id, session_id, trace_id, parent_id, name, input, output, created_at, tags, status_code, has_children, model, m8 AS mx0, m6 AS mx1, file_row_number AS loc_row, filename AS loc_file FROM ${src}`;
const W = `FROM (${full}) r WHERE r.type='llm' AND r.mx0 > $1 ORDER BY r.mx1 DESC NULLS LAST, r.id DESC LIMIT 101`;
const qs = {
  hand: `SELECT id FROM ${src} WHERE type='llm' AND m8 > $1 ORDER BY m6 DESC NULLS LAST, id DESC LIMIT 101`,
  narrow: `SELECT r.seq, epoch_us(r.created_at) AS c, r.loc_row, r.loc_file, r.mx0, r.mx1 ${W}`,
  noseqc: `SELECT r.loc_row, r.loc_file, r.mx0, r.mx1 ${W}`,
  noseqcid: `SELECT r.id, r.loc_row, r.loc_file, r.mx0, r.mx1 ${W}`,
  noc: `SELECT r.seq, r.loc_row, r.loc_file, r.mx0, r.mx1 ${W}`,
};
let t = 300;
const acc = {};
for (let round = 0; round < 5; round++) for (const [k, q] of Object.entries(qs)) {
  t += 37;
  const p = await c.prepare(q); p.bindInteger(1, t);
  const t0 = performance.now(); const r = await p.runAndReadAll(); 
  if (round>0) (acc[k] ??= []).push(performance.now()-t0);
}
for (const [k,v] of Object.entries(acc)) console.log(k, v.map(x=>x.toFixed(0)).join(' '));
