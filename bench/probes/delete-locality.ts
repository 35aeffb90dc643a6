// Where the spans a 1% delete needs sit, beside each deleted one: in a store's own files (read only; no
// store is opened), for the peer delete's matches (llm spans with one tag), how far in row order of
// its segment the nearest live sibling (same parent hash, not deleted) and the parent's own row lie,
// and whether they are in the segment at all; with what the matches' query costs when it also returns
// each match's file and row number (what a lookup by position would need). The answer says how much
// of the childless-parents step a per-segment pass over the matches' neighbourhood could settle, and
// how many parents would still need the other segments.
//   node --import tsx bench/probes/delete-locality.ts /work/data-10m [canary]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '../../src/vendor/duckdb.js';

const [dataDir, tag = 'canary'] = process.argv.slice(2);
if (!dataDir) throw new Error('usage: delete-locality.ts <data-dir> [tag]');
if (!/^[a-z0-9]+$/.test(tag)) throw new Error('a tag of letters and digits');
const root = join(dataDir, 'tracelake');
const manifest = JSON.parse(readFileSync(join(root, 'manifest.json'), 'utf8')) as { segments: { file: string }[] };
const spans = manifest.segments.filter((s) => s.file.includes('/kind=span/')).map((s) => join(root, s.file));
// Paths of our own making, quoted for the SQL text (a probe: no user input).
const list = (files: string[]) => `[${files.map((f) => `'${f.replaceAll("'", "''")}'`).join(', ')}]`;
const segs = (extra = '') => `read_parquet(${list(spans)}, hive_partitioning = false, union_by_name = true${extra})`;
const kids = `read_parquet(${list(spans.map((f) => f.replace(/\.parquet$/, '.kids')))}, hive_partitioning = false, filename = true, file_row_number = true)`;
const where = `type = 'llm' AND contains(tag_set, '${tag}')`;
const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
await c.run('SET parquet_metadata_cache = true');
const out: Record<string, unknown> = { segments: spans.length };
async function time(label: string, q: string): Promise<void> {
  const t = performance.now();
  await c.run(q);
  out[`${label}Ms`] = Math.round(performance.now() - t);
}
await time('footers', `SELECT count(*) FROM ${segs()} WHERE false`);
// In turns, twice: the matches as a delete reads them, and with their file and row number.
for (const round of [1, 2]) {
  await time(`matches${round}`, `CREATE OR REPLACE TEMP TABLE hits AS SELECT seq FROM ${segs()} WHERE ${where}`);
  await time(
    `matchesWithRow${round}`,
    `CREATE OR REPLACE TEMP TABLE hits_at AS SELECT seq, filename, file_row_number FROM ${segs(', filename = true, file_row_number = true')} WHERE ${where}`,
  );
}
// The matches' index rows, the live rows with the same parent hash (siblings), and the parents' own rows.
await time(
  'matchRows',
  `CREATE TEMP TABLE h AS SELECT filename AS f, file_row_number AS rn, ph FROM ${kids} WHERE seq IN (SELECT seq FROM hits) AND ph IS NOT NULL`,
);
await time(
  'siblingRows',
  `CREATE TEMP TABLE s AS SELECT filename AS f, file_row_number AS rn, ph FROM ${kids} WHERE ph IN (SELECT ph FROM h) AND seq NOT IN (SELECT seq FROM hits)`,
);
await time(
  'ownerRows',
  `CREATE TEMP TABLE o AS SELECT filename AS f, file_row_number AS rn, ih FROM ${kids} WHERE ih IN (SELECT ph FROM h)`,
);
const reader = await c.runAndReadAll(`
  WITH sib AS (SELECT h.f, h.rn, min(abs(s.rn - h.rn)) AS d FROM h JOIN s ON s.f = h.f AND s.ph = h.ph GROUP BY ALL),
       own AS (SELECT h.f, h.rn, min(abs(o.rn - h.rn)) AS d FROM h JOIN o ON o.f = h.f AND o.ih = h.ph GROUP BY ALL),
       anywhere AS (SELECT DISTINCT ph FROM s),
       per AS (SELECT h.ph, sib.d AS sd, own.d AS od FROM h LEFT JOIN sib USING (f, rn) LEFT JOIN own USING (f, rn))
  SELECT count(*) AS matches,
         count(*) FILTER (WHERE sd <= 8) AS sibling_within_8_rows,
         count(*) FILTER (WHERE sd <= 64) AS sibling_within_64_rows,
         count(*) FILTER (WHERE sd IS NOT NULL) AS sibling_in_segment,
         count(*) FILTER (WHERE sd IS NULL AND ph IN (SELECT ph FROM anywhere)) AS sibling_only_elsewhere,
         count(*) FILTER (WHERE od <= 64) AS parent_row_within_64_rows,
         count(*) FILTER (WHERE od IS NULL) AS parent_row_not_in_segment
  FROM per`);
const names = reader.columnNames();
reader.getRows()[0]!.forEach((v, i) => {
  out[names[i]!] = Number(v);
});
out['maxRssMiB'] = Math.round(process.resourceUsage().maxRSS / 1024);
out['loadavg'] = readFileSync('/proc/loadavg', 'utf8').trim();
process.stdout.write(`${JSON.stringify(out)}\n`);
