import { DuckDBInstance } from '@duckdb/node-api';
import { existsSync } from 'node:fs';
const inst = await DuckDBInstance.create(':memory:', { threads: '2' }); const c = await inst.connect();
const q = async (s) => (await c.runAndReadAll(s)).getRowObjectsJS();
await q('SET parquet_metadata_cache = true');
const dir = process.argv[2];
const segs = ['seg-000000106', 'seg-000000138'];
for (const rg of [16384, 8192]) for (const s of segs) {
  const out = `/tmp/s16/rg${rg}-${s}.parquet`;
  if (!existsSync(out)) await q(`COPY (SELECT * FROM read_parquet('${dir}/${s}.parquet')) TO '${out}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${rg}, PRESERVE_ORDER true)`);
}
const files = (rg) => segs.map((s) => rg ? `/tmp/s16/rg${rg}-${s}.parquet` : `${dir}/${s}.parquet`);
for (const rg of [0, 16384, 8192]) {
  const f = files(rg);
  const sz = await q(`SELECT sum(total_compressed_size)::BIGINT b, count(DISTINCT row_group_id) g FROM parquet_metadata([${f.map((x) => `'${x}'`).join(',')}])`);
  console.log('rg', rg || 32768, 'bytes', Number(sz[0].b), 'groups', Number(sz[0].g));
}
const rows = await q(`SELECT count(*)::INT n FROM read_parquet('${files(0)[0]}')`);
const N = rows[0].n;
let seed = 7; const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const t = async (label, mk) => { const ts = []; for (let k = 0; k < 4; k++) { const s = mk(k); await q(s); const t0 = performance.now(); await q(s); ts.push(performance.now() - t0); } console.log(label, ts.map((x) => x.toFixed(0)).join(' ')); };
const pick = (k) => Array.from({ length: 80 }, () => Math.floor(rnd() * N)).join(',');
const picks = [0, 1, 2, 3].map(pick);
for (const rg of [0, 16384, 8192]) {
  const f = files(rg)[0];
  await t(`rg ${rg || 32768} fetch 80 whole`, (k) => `SELECT * FROM read_parquet('${f}') WHERE file_row_number IN (${picks[k]})`);
  await t(`rg ${rg || 32768} fetch 80 name,model`, (k) => `SELECT name, model FROM read_parquet('${f}') WHERE file_row_number IN (${picks[k]})`);
  const all = files(rg).map((x) => `'${x}'`).join(',');
  await t(`rg ${rg || 32768} count 3 leaves`, (k) => `SELECT count(*) FROM read_parquet([${all}]) WHERE model = 'gpt-4o' AND m6 > ${0.4 + k / 100} AND list_contains(tags, 'web')`);
  await t(`rg ${rg || 32768} ilike count`, (k) => `SELECT count(*) FROM read_parquet([${all}]) WHERE input ILIKE '%refund${k}%'`);
  await t(`rg ${rg || 32768} full sum len`, (k) => `SELECT sum(strlen(input)+strlen(output)) + ${k} FROM read_parquet([${all}])`);
}
