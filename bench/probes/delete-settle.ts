// Ways to settle the 1% delete's parents without the three full probes of the child indexes, in
// hand-written DuckDB over a store's own files (read only; no store is opened), each timed against the
// statement the library runs today (record-delete.ts childlessOfLeaves, rows in memory left out):
//   current   the matches' parent hashes (seq probe), kept parents (parent-hash probe), owners
//   window    one scan marking deleted rows, lag/lead over the scan order settling parents that a live
//             row within `w` rows keeps, then the kept and owner probes for the unsettled rest only
//   positional  the matches read with their child index rows (POSITIONAL JOIN per segment), against
//             the matches then their parent hashes by seq
//   rownumber the matches' query with each match's file and row number (what a lookup by position needs)
//   stream    every child index row's parent hash and seq copied into JavaScript typed arrays, chunk by
//             chunk (what settling in JavaScript over the index would read)
// Every variant must find the same owners (checked); rounds alternate so load changes hit all alike.
//   node --import tsx bench/probes/delete-settle.ts /work/data-10m [canary] [variants] [rounds] [w]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '../../src/vendor/duckdb.js';
import duckdb from '@duckdb/node-bindings';

const [dataDir, tag = 'canary', variantList = 'current,window,positional,rownumber,stream', roundArg = '2', wArg = '4'] =
  process.argv.slice(2);
if (!dataDir) throw new Error('usage: delete-settle.ts <data-dir> [tag] [variants] [rounds] [w]');
if (!/^[a-z0-9]+$/.test(tag)) throw new Error('a tag of letters and digits');
const w = Number(wArg);
if (!Number.isInteger(w) || w < 1 || w > 16) throw new Error('w: 1..16');
const root = join(dataDir, 'tracelake');
type Seg = { file: string; kind: string; rows: number };
const manifest = JSON.parse(readFileSync(join(root, 'manifest.json'), 'utf8')) as { segments: Seg[] };
const kidsOf = (f: string) => f.replace(/\.parquet$/, '.kids');
const spanSegs = manifest.segments.filter((s) => s.kind === 'span');
const spans = spanSegs.map((s) => join(root, s.file));
const ownerKids = manifest.segments.filter((s) => s.kind === 'span' || s.kind === 'trace').map((s) => kidsOf(join(root, s.file)));
// Paths of our own making, quoted for the SQL text (a probe: no user input).
const q1 = (f: string) => `'${f.replaceAll("'", "''")}'`;
const list = (files: string[]) => `[${files.map(q1).join(', ')}]`;
const kids = `read_parquet(${list(spans.map(kidsOf))}, hive_partitioning = false)`;
const owners = `read_parquet(${list(ownerKids)}, hive_partitioning = false)`;
const where = `type = 'llm' AND contains(tag_set, '${tag}')`;

const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
await c.run('SET parquet_metadata_cache = true');
await c.run('CREATE TABLE dead (seq BIGINT)');
await c.run(
  `CREATE TEMP TABLE hits AS SELECT seq FROM read_parquet(${list(spans)}, hive_partitioning = false, union_by_name = true) WHERE ${where}`,
);

const owned = (u: string) =>
  `SELECT count(*) AS n, sum(seq) AS s FROM ${owners} WHERE ih IN (SELECT h FROM ${u})
   AND seq NOT IN (SELECT seq FROM hits) AND seq NOT IN (SELECT seq FROM dead)`;
const current = `WITH gl AS (SELECT ph, ih FROM ${kids} WHERE seq IN (SELECT seq FROM hits) AND ph IS NOT NULL),
  ph AS (SELECT DISTINCT ph AS h FROM gl WHERE ph NOT IN (SELECT ih FROM gl WHERE ih IS NOT NULL)),
  keep AS (SELECT DISTINCT ph AS h FROM ${kids} WHERE ph IN (SELECT h FROM ph) AND seq NOT IN (SELECT seq FROM hits) AND seq NOT IN (SELECT seq FROM dead)),
  u AS (SELECT h FROM ph WHERE h NOT IN (SELECT h FROM keep))
  ${owned('u')}`;
const near: string[] = [];
for (let k = 1; k <= w; k++) for (const f of ['lag', 'lead']) near.push(`(${f}(ph, ${k}) OVER () = ph AND NOT ${f}(d, ${k}) OVER ())`);
const windowed = `WITH k AS (SELECT ph, ih, seq IN (SELECT seq FROM hits) AS gone, seq IN (SELECT seq FROM hits) OR seq IN (SELECT seq FROM dead) AS d
    FROM ${kids} WHERE ph IS NOT NULL),
  wn AS (SELECT ph, ih, gone, ${near.join(' OR ')} AS near FROM k),
  gl AS (SELECT ph, ih, near FROM wn WHERE gone),
  ph AS (SELECT DISTINCT ph AS h FROM gl WHERE ph NOT IN (SELECT ih FROM gl WHERE ih IS NOT NULL)),
  u0 AS (SELECT h FROM ph WHERE h NOT IN (SELECT ph FROM gl WHERE near)),
  keep AS (SELECT DISTINCT ph AS h FROM ${kids} WHERE ph IN (SELECT h FROM u0) AND seq NOT IN (SELECT seq FROM hits) AND seq NOT IN (SELECT seq FROM dead)),
  u AS (SELECT h FROM u0 WHERE h NOT IN (SELECT h FROM keep))
  ${owned('u')}`;
const positional = spans
  .map(
    (f) => `SELECT s.seq, k.ph, k.ih FROM (SELECT seq, type, tag_set FROM read_parquet(${q1(f)}, hive_partitioning = false)) s
      POSITIONAL JOIN (SELECT ph, ih FROM read_parquet(${q1(kidsOf(f))}, hive_partitioning = false)) k
      WHERE s.type = 'llm' AND contains(s.tag_set, '${tag}')`,
  )
  .join(' UNION ALL ');

const out: Record<string, unknown> = { segments: spans.length, rows: spanSegs.reduce((n, s) => n + s.rows, 0), w };
const times: Record<string, number[]> = {};
async function time(label: string, q: string): Promise<string> {
  const t = performance.now();
  const r = await c.runAndReadAll(q);
  (times[label] ??= []).push(Math.round(performance.now() - t));
  return JSON.stringify(r.getRows()[0] ?? [], (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
}
async function stream(): Promise<void> {
  const t = performance.now();
  let rows = 0;
  for (const s of spanSegs) {
    const ph = new BigInt64Array(s.rows);
    const seq = new Float64Array(s.rows);
    const res = await c.run(
      `SELECT ph, seq::DOUBLE AS seq FROM read_parquet(${q1(kidsOf(join(root, s.file)))}, hive_partitioning = false)`,
    );
    let at = 0;
    for (;;) {
      const chunk = await res.fetchChunk();
      if (!chunk || chunk.rowCount === 0) break;
      const n = duckdb.data_chunk_get_size(chunk.chunk);
      const a = duckdb.vector_get_data(duckdb.data_chunk_get_vector(chunk.chunk, 0), 8 * n);
      const b = duckdb.vector_get_data(duckdb.data_chunk_get_vector(chunk.chunk, 1), 8 * n);
      ph.set(new BigInt64Array(a.buffer, a.byteOffset, n), at);
      seq.set(new Float64Array(b.buffer, b.byteOffset, n), at);
      at += n;
    }
    rows += at;
  }
  (times['stream'] ??= []).push(Math.round(performance.now() - t));
  out['streamRows'] = rows;
}

const variants = variantList.split(',');
const answers: Record<string, string> = {};
for (let round = 0; round < Number(roundArg); round++) {
  for (const v of variants) {
    if (v === 'current') answers[v] = await time(v, current);
    else if (v === 'window') answers[v] = await time(v, windowed);
    else if (v === 'positional') {
      answers['positional'] = await time('positional', `SELECT count(*), count(ph) FROM (${positional})`);
      answers['bySeq'] = await time('bySeq', `SELECT count(*), count(ph) FROM (SELECT s.seq, k.ph FROM hits s JOIN ${kids} k USING (seq))`);
    } else if (v === 'rownumber') {
      await time(
        'matches',
        `SELECT count(*) FROM read_parquet(${list(spans)}, hive_partitioning = false, union_by_name = true) WHERE ${where}`,
      );
      await time(
        'matchesWithRow',
        `SELECT count(*), max(file_row_number) FROM read_parquet(${list(spans)}, hive_partitioning = false, union_by_name = true, ` +
          `filename = true, file_row_number = true) WHERE ${where}`,
      );
    } else if (v === 'stream') await stream();
    else throw new Error(`unknown variant ${v}`);
  }
}
if (answers['current'] && answers['window'] && answers['current'] !== answers['window'])
  throw new Error(`window found other owners: ${answers['window']} against ${answers['current']}`);
out['owners'] = answers['current'] ?? answers['window'];
out['ms'] = times;
out['maxRssMiB'] = Math.round(process.resourceUsage().maxRSS / 1024);
out['loadavg'] = readFileSync('/proc/loadavg', 'utf8').trim();
process.stdout.write(`${JSON.stringify(out)}\n`);
