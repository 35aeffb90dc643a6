// Peak memory of one segment's text index build (.tix and .tok), in a process of its own: resident
// memory (VmHWM, and sampled over time), the JS heap, buffers outside it, and DuckDB's own accounting
// (duckdb_memory(), asked on a second connection while the build runs). The database is set up as a
// merge's (openMergeDatabase), where large segments are built. With `--base` (another checkout's
// checkout's root, e.g. /work/main) that tree's build runs instead, with its own database module; run
// old and new in turns.
//   node --import tsx bench/probes/text-build-mem.ts --file <seg.parquet> --out <dir> [--base <checkout>] [--every 250]
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values: a } = parseArgs({
  options: { file: { type: 'string' }, out: { type: 'string' }, base: { type: 'string' }, every: { type: 'string' } },
});
const file = resolve(a.file!);
const out = resolve(a.out!);
mkdirSync(out, { recursive: true });
type Mod = {
  buildTextIndex?: (conn: unknown, abs: string) => Promise<{ tix: Uint8Array; tok: Uint8Array }>;
  buildTextIndexFiles?: (conn: unknown, abs: string, to: { tix: string; tok: string }) => Promise<{ runs: number }>;
};
// Both modules from one tree: a statement object is only understood by its own tree's database module.
const root = a.base ? resolve(a.base) : resolve(import.meta.dirname, '../..');
const mod = (await import(join(root, 'src/storage/indexes/text-index.ts'))) as Mod;
const { Database } = (await import(join(root, 'src/db/database.ts'))) as typeof import('../../src/db/database.js');
const { sql } = (await import(join(root, 'src/query/sql.ts'))) as typeof import('../../src/query/sql.js');
const db = await Database.open({ threads: 1, memoryLimit: '256MB', connections: 2, bulkFreeThreshold: '16MB', footerCache: false });
const build = await db.dedicated();
const probe = await db.dedicated();
const MiB = 1 << 20;
const hwm = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) * 1024;
const peak = { rss: 0, heap: 0, outside: 0, duckdb: 0 };
const samples: [number, number, number, number, number][] = [];
const t0 = performance.now();
let busy = false;
const sample = async () => {
  if (busy) return;
  busy = true;
  const m = process.memoryUsage();
  let duck = 0;
  try {
    duck = Number((await probe.all(sql`SELECT sum(memory_usage_bytes) AS b FROM duckdb_memory()`))[0]!['b']);
  } catch {}
  peak.rss = Math.max(peak.rss, m.rss);
  peak.heap = Math.max(peak.heap, m.heapUsed);
  peak.outside = Math.max(peak.outside, m.arrayBuffers);
  peak.duckdb = Math.max(peak.duckdb, duck);
  samples.push([Math.round(performance.now() - t0), m.rss, m.heapUsed, m.arrayBuffers, duck]);
  busy = false;
};
const timer = setInterval(() => void sample(), Number(a.every ?? 250));
const before = hwm();
const cpu0 = process.cpuUsage();
const start = performance.now();
const to = { tix: join(out, 'seg.tix'), tok: join(out, 'seg.tok') };
let runs: number | null = null;
if (mod.buildTextIndexFiles) runs = (await mod.buildTextIndexFiles(build, file, to)).runs;
else {
  const { tix, tok } = await mod.buildTextIndex!(build, file);
  writeFileSync(to.tix, tix);
  writeFileSync(to.tok, tok);
}
const wall = performance.now() - start;
const cpu = process.cpuUsage(cpu0);
clearInterval(timer);
await sample();
const rows = Number((await probe.all(sql`SELECT count(*) AS n FROM read_parquet(${file})`))[0]!['n']);
await db.close();
const mb = (b: number) => Math.round(b / MiB);
console.log(
  JSON.stringify({
    side: a.base ? 'old' : 'new',
    rows,
    runs,
    wall_s: Number((wall / 1000).toFixed(1)),
    cpu_s: Number(((cpu.user + cpu.system) / 1e6).toFixed(1)),
    rss_before_mib: mb(before),
    peak_rss_mib: mb(hwm()),
    peak_rss_sampled_mib: mb(peak.rss),
    peak_heap_mib: mb(peak.heap),
    peak_array_buffers_mib: mb(peak.outside),
    peak_duckdb_mib: mb(peak.duckdb),
    tix_mb: Number((statSync(to.tix).size / 1e6).toFixed(1)),
    tok_mb: Number((statSync(to.tok).size / 1e6).toFixed(1)),
    loadavg: readFileSync('/proc/loadavg', 'utf8').trim(),
    // Every 10th sample: ms, rss, heap, array buffers, DuckDB (MiB).
    over_time: samples.filter((_, i) => i % 10 === 0).map(([t, r, h, o, d]) => [t, mb(r), mb(h), mb(o), mb(d)]),
  }),
);
