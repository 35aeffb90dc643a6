// Would per-segment postings (for each value of model and of tags, the row numbers holding it) answer a
// fresh filtered count faster than DuckDB's scan? On a store folder's span segments: builds postings
// for model and tags with DuckDB (time, bytes as 32-bit row numbers), then answers "model eq X AND
// metric gt x AND tags contains T" by intersecting two lists and testing the metric at those rows only
// (read as one column), beside DuckDB's own count over the same files. Dead rows are ignored on both
// sides (a fresh template has none). A feasibility measure for the next index, not a product path.
//   node --import tsx bench/probes/postings.ts <store dir> [metric=correctness] [questions=5]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Database } from '../../src/db/database.js';
import { ident, sql } from '../../src/query/sql.js';

const [dir, metric = 'correctness', nArg = '5'] = process.argv.slice(2);
if (!dir) throw new Error('usage: postings.ts <store dir> [metric] [questions]');
const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as {
  segments: { file: string; kind: string; rows: number }[];
  metric_ids: Record<string, number>;
};
const files = manifest.segments.filter((g) => g.kind === 'span').map((g) => ({ path: join(dir, g.file), rows: g.rows }));
const col = ident(`m${manifest.metric_ids[metric]}`);
const db = await Database.open({ connections: 1 });

type Postings = Map<string, Uint32Array>;
const t = () => performance.now();

async function build(path: string, select: string): Promise<{ p: Postings; ms: number; bytes: number }> {
  const t0 = t();
  const src = sql`read_parquet(${path}, file_row_number = true, hive_partitioning = false)`;
  // The two shapes (one value a row, a list a row) are fixed text of this probe: no user value.
  const q =
    select === 'model'
      ? sql`SELECT model AS v, list(file_row_number::UINTEGER ORDER BY file_row_number) AS r FROM ${src} WHERE model IS NOT NULL GROUP BY model`
      : sql`SELECT t AS v, list(rn::UINTEGER ORDER BY rn) AS r FROM (SELECT unnest(tags) AS t, file_row_number AS rn FROM ${src}) GROUP BY t`;
  const rows = await db.all(q);
  const p: Postings = new Map();
  let bytes = 0;
  for (const r of rows) {
    const list = Uint32Array.from((r['r'] as unknown[]).map(Number));
    bytes += list.byteLength;
    p.set(String(r['v']), list);
  }
  return { p, ms: t() - t0, bytes };
}

function intersect(a: Uint32Array, b: Uint32Array): Uint32Array {
  const out = new Uint32Array(Math.min(a.length, b.length));
  let i = 0;
  let j = 0;
  let n = 0;
  while (i < a.length && j < b.length) {
    if (a[i]! < b[j]!) i++;
    else if (a[i]! > b[j]!) j++;
    else {
      out[n++] = a[i]!;
      i++;
      j++;
    }
  }
  return out.subarray(0, n);
}

const segs: { path: string; rows: number; model: Postings; tags: Postings }[] = [];
let buildMs = 0;
let bytes = 0;
for (const f of files) {
  const m = await build(f.path, 'model');
  const g = await build(f.path, 'tags');
  buildMs += m.ms + g.ms;
  bytes += m.bytes + g.bytes;
  segs.push({ path: f.path, rows: f.rows, model: m.p, tags: g.p });
}
const rows = files.reduce((n, f) => n + f.rows, 0);
console.log(
  `build: ${files.length} segments, ${rows} rows, ${Math.round(buildMs)} ms ` +
    `(${((buildMs * 1000) / rows).toFixed(2)} µs a row), ${(bytes / rows).toFixed(1)} bytes a row`,
);

// Questions drawn from the data: a model and a tag that occur together, and a threshold.
const models = [...segs[0]!.model.keys()];
const tags = [...segs[0]!.tags.keys()];
let seed = 11;
const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
for (let q = 0; q < Number(nArg); q++) {
  const model = models[Math.floor(rnd() * models.length)]!;
  const tag = tags[Math.floor(rnd() * tags.length)]!;
  const x = Math.round((0.3 + rnd() * 0.65) * 10_000) / 10_000;
  const t0 = t();
  let n = 0;
  let candidates = 0;
  let readMs = 0;
  for (const s of segs) {
    const a = s.model.get(model);
    const b = s.tags.get(tag);
    if (!a || !b) continue;
    const rowsOf = intersect(a, b);
    candidates += rowsOf.length;
    if (rowsOf.length === 0) continue;
    // The metric tested by DuckDB at the candidate rows only: a semi join on the row number (the list
    // goes in as one string, split by DuckDB: binding a long list element by element is slow).
    const r0 = t();
    const [c] = await db.all(
      sql`SELECT count(*) AS n FROM read_parquet(${s.path}, file_row_number = true, hive_partitioning = false)
          WHERE ${col} > ${x} AND file_row_number IN (SELECT unnest(string_split(${Array.from(rowsOf).join(',')}, ',')::BIGINT[]))`,
    );
    readMs += t() - r0;
    n += Number(c!['n']);
  }
  const postingsMs = t() - t0;
  const d0 = t();
  const [d] = await db.all(
    sql`SELECT count(*) AS n FROM read_parquet(${segs.map((s) => s.path)}, hive_partitioning = false)
        WHERE model = ${model} AND ${col} > ${x} AND list_contains(tags, ${tag})`,
  );
  const duckMs = t() - d0;
  // The same without the metric leaf: the postings alone answer it.
  const p0 = t();
  let pairs = 0;
  for (const s of segs) {
    const a = s.model.get(model);
    const b = s.tags.get(tag);
    if (a && b) pairs += intersect(a, b).length;
  }
  const pairMs = t() - p0;
  const e0 = t();
  const [e] = await db.all(
    sql`SELECT count(*) AS n FROM read_parquet(${segs.map((s) => s.path)}, hive_partitioning = false) WHERE model = ${model} AND list_contains(tags, ${tag})`,
  );
  console.log(
    `  two leaves (model, tag): postings ${pairMs.toFixed(2)} ms vs DuckDB ${(t() - e0).toFixed(1)} ms; ` +
      `n=${pairs} ${Number(e!['n']) === pairs ? 'equal' : 'DIFFERS'}`,
  );
  const same = Number(d!['n']) === n;
  console.log(
    `model=${model} tag=${tag} x=${x}: postings ${postingsMs.toFixed(1)} ms (metric reads ${readMs.toFixed(1)}; ` +
      `${candidates} candidates) vs DuckDB ${duckMs.toFixed(1)} ms; n=${n} ${same ? 'equal' : `DIFFERS from ${Number(d!['n'])}`}`,
  );
}
await db.close();
