// The floor of the 1% delete, in hand-written DuckDB over a store's own files (read only; no store is
// opened): finding the matching spans (the filter's columns read from every span segment) and one
// plain read of the child indexes' parent hashes (what any pass over them costs). Compare with the
// steps bench/probes/delete-timings.ts reports for the library on a copy of the same store.
//   node --import tsx bench/probes/delete-floor.ts /work/data-10m [canary]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '../../src/vendor/duckdb.js';

const [dataDir, tag = 'canary'] = process.argv.slice(2);
if (!dataDir) throw new Error('usage: delete-floor.ts <data-dir> [tag]');
const root = join(dataDir, 'tracelake');
const manifest = JSON.parse(readFileSync(join(root, 'manifest.json'), 'utf8')) as { segments: { file: string }[] };
const spans = manifest.segments.filter((s) => s.file.includes('/kind=span/')).map((s) => join(root, s.file));
// Paths of our own making, quoted for the SQL text (a probe: no user input).
const list = (files: string[]) => `[${files.map((f) => `'${f.replaceAll("'", "''")}'`).join(', ')}]`;
const segs = `read_parquet(${list(spans)}, hive_partitioning = false, union_by_name = true)`;
const kids = `read_parquet(${list(spans.map((f) => f.replace(/\.parquet$/, '.kids')))}, hive_partitioning = false)`;
const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
await c.run('SET parquet_metadata_cache = true');
if (!/^[a-z0-9]+$/.test(tag)) throw new Error('a tag of letters and digits');
const where = `type = 'llm' AND contains(tag_set, '${tag}')`;
const out: Record<string, number | string> = { segments: spans.length, loadavg: readFileSync('/proc/loadavg', 'utf8').trim() };
async function time(label: string, q: string): Promise<void> {
  const t = performance.now();
  const r = await c.runAndReadAll(q);
  out[`${label}Ms`] = Math.round(performance.now() - t);
  if (r.currentRowCount === 1 && r.columnCount === 1) out[label] = String(r.getRows()[0]![0]);
}
await time('footers', `SELECT count(*) FROM ${segs} WHERE false`);
await time('matches', `SELECT count(*) FROM ${segs} WHERE ${where}`);
await time('matchSeqs', `CREATE TEMP TABLE hits AS SELECT seq FROM ${segs} WHERE ${where}`);
await time('indexParentHashes', `SELECT count(DISTINCT ph % 1000) FROM ${kids}`);
await time('indexSeqsOfMatches', `SELECT count(*) FROM ${kids} WHERE seq IN (SELECT seq FROM hits)`);
out['maxRssMiB'] = Math.round(process.resourceUsage().maxRSS / 1024);
process.stdout.write(`${JSON.stringify(out)}\n`);
