// Counts and memory of an opened store at scale: the peer
// benchmark's three-leaf count (bench/workload.ts, `count-tree`) over an existing store, its plan
// (with --explain: DuckDB's EXPLAIN ANALYZE of the compiled SQL), and the resident memory of the
// process after opening the store. With `--base-store` (another checkout's src/engine/trace-store.ts)
// and `--base-dir` (a copy of the store for it) both trees answer in one process, taking turns run
// by run (the machine is shared: only such paired figures mean much). Memory is measured per tree in
// a fresh process (--memory-only), since one process's RSS holds both.
//   node --import tsx bench/probes/count-scale.ts --make 3000000 --dir <new store> [--text-index]
//   node --import tsx bench/probes/count-scale.ts --dir <store> --add-tag-set
//     rewrites each segment written before the tag_set column with it (what writeSegment now writes;
//     same rows, order and row groups), so a store built by the old code can be measured by the new
//   node --import tsx bench/probes/count-scale.ts --dir <store> --project <id> --run <id> [--runs 15] [--base-store <module> --base-dir <copy>]
//     [--explain] [--memory-only] [--text-index] [--out bench/results/<file>.json]
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { median } from '../common.js';
import { compile, sql, type Sql } from '../../src/query/sql.js';

const { values: a } = parseArgs({
  options: {
    dir: { type: 'string' },
    make: { type: 'string' },
    runs: { type: 'string' },
    'base-store': { type: 'string' },
    'base-dir': { type: 'string' },
    explain: { type: 'boolean' },
    'memory-only': { type: 'boolean' },
    'text-index': { type: 'boolean' },
    out: { type: 'string' },
    project: { type: 'string' },
    'add-tag-set': { type: 'boolean' },
    run: { type: 'string' },
  },
});

type Mod = typeof import('../../src/engine/trace-store.js');
type Store = Awaited<ReturnType<Mod['TraceStore']['open']>>;
const textIndex = a['text-index'] === true;

if (a.make) {
  const { TraceStore } = await import('../../src/engine/trace-store.js');
  const { spanBatches } = await import('../workload.js');
  const store = await TraceStore.open(a.dir!, { textIndex, segmentCounts: false });
  const projectId = store.createProject({ name: 'count-scale' }).id;
  const runId = store.createLogStream(projectId, 'bench').id;
  let n = 0;
  const t0 = performance.now();
  for (const b of spanBatches({ spans: Number(a.make) })) {
    await store.logTraces(projectId, { log_stream_id: runId, reliable: true, traces: b.traces } as never);
    n += b.rows.length;
    if (n % 500_000 < b.rows.length) process.stderr.write(`${n} spans, ${((performance.now() - t0) / 1000).toFixed(0)} s\n`);
  }
  await store.flush();
  await store.maintenance.compact();
  await store.close();
  console.log(JSON.stringify({ project: projectId, run: runId, seconds: (performance.now() - t0) / 1000 }));
  process.exit(0);
}

if (a['add-tag-set']) {
  const { DuckDBInstance } = await import('../../src/vendor/duckdb.js');
  const { TAG_SET_COLUMN, TAG_SET_SQL } = await import('../../src/record/record-columns.js');
  const { renameSync, statSync } = await import('node:fs');
  const { join } = await import('node:path');
  const manifestPath = join(a.dir!, 'manifest.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
    segments: { file: string; tag_set?: boolean; bytes: number; row_groups: number[][] }[];
  };
  const conn = await (await DuckDBInstance.create(':memory:')).connect();
  for (const seg of manifest.segments) {
    if (seg.tag_set) continue;
    const abs = join(a.dir!, seg.file);
    const rowGroup = Math.max(...seg.row_groups.map((g) => g[2]!), 1);
    await conn.run(
      `COPY (SELECT *, ${TAG_SET_SQL} AS ${TAG_SET_COLUMN} FROM read_parquet('${abs}')) ` +
        `TO '${abs}.tmp' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${rowGroup})`,
    );
    renameSync(`${abs}.tmp`, abs);
    Object.assign(seg, { tag_set: true, bytes: statSync(abs).size });
  }
  writeFileSync(manifestPath, JSON.stringify(manifest));
  process.exit(0);
}

const rssMiB = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) / 1024;

async function open(module: string, dir: string): Promise<{ store: Store; projectId: string; runId: string }> {
  const mod = (await import(resolve(module))) as Mod;
  const store = await mod.TraceStore.open(dir, { autoCompact: false, textIndex, segmentCounts: false });
  return { store, projectId: a.project!, runId: a.run! };
}

const { QUESTIONS } = await import('../workload.js');
const q = QUESTIONS.find((x) => x.id === 'count-tree')!;
const call = q.api(q.variants[0]!);
const ask = async (s: { store: Store; projectId: string; runId: string }) =>
  (await s.store.count('span', s.projectId, { ...call.body, log_stream_id: s.runId } as never)).total_count;

if (a['memory-only']) {
  global.gc?.();
  const before = rssMiB();
  const s = await open(a['base-store'] ?? 'src/engine/trace-store.ts', a.dir!);
  global.gc?.();
  const opened = rssMiB();
  const openedJs = {
    heap_used_mib: process.memoryUsage().heapUsed / 1048576,
    array_buffers_mib: process.memoryUsage().arrayBuffers / 1048576,
  };
  const count = await ask(s);
  global.gc?.();
  const mib = (n: number) => n / 1024 / 1024;
  const js = () => {
    const m = process.memoryUsage();
    return { heap_used_mib: mib(m.heapUsed), array_buffers_mib: mib(m.arrayBuffers) };
  };
  const afterCount = { rss_mib: rssMiB(), ...js() };
  // A text count loads the text indexes (lazily: older code loaded them on open).
  await s.store.count('span', s.projectId, {
    log_stream_id: s.runId,
    filters: [{ type: 'text', column_id: 'input', operator: 'contains', value: 'warranty', case_sensitive: false }],
  } as never);
  global.gc?.();
  console.log(
    JSON.stringify({
      tree: a['base-store'] ?? 'this',
      before_open_mib: before,
      opened_mib: opened,
      opened_js: openedJs,
      after_count: afterCount,
      after_text_count: { rss_mib: rssMiB(), ...js() },
      count,
      stats: s.store.records.stats,
    }),
  );
  await s.store.close();
  process.exit(0);
}

if (a.explain) {
  // The count's SQL, as the engine sends it, then DuckDB's profile of it.
  // Counts run on a pooled connection (in a transaction): its statements are caught there.
  const { Connection } = await import('../../src/db/database.js');
  type Conn = import('../../src/db/database.js').Connection;
  const all = Connection.prototype.all;
  let last: { sql: string; params: readonly unknown[] } | null = null;
  let db: Conn | null = null;
  let lastQuery: Sql | null = null;
  Connection.prototype.all = function (this: Conn, q: Sql) {
    const { text, params } = compile(q);
    if (text.includes('count(*) AS n')) {
      last = { sql: text, params };
      lastQuery = q;
      db = this;
    }
    return all.call(this, q);
  };
  const s = await open('src/engine/trace-store.ts', a.dir!);
  console.log('count', await ask(s));
  const t0 = performance.now();
  await ask(s);
  console.log('second count ms', performance.now() - t0);
  const got = last as { sql: string; params: readonly unknown[] } | null;
  console.log(got?.sql, JSON.stringify(got?.params).slice(0, 400));
  const plan = await all.call(db!, sql`EXPLAIN ANALYZE ${lastQuery as Sql | null as Sql}`);
  for (const r of plan) console.log(String(r['explain_value']));
  // (The cost of the dead-row filter was measured here before counts read dead-free segments without it.)
  await s.store.close();
  process.exit(0);
}

const runs = Number(a.runs ?? 15);
const trees: { name: string; s: Awaited<ReturnType<typeof open>> }[] = [
  { name: 'this', s: await open('src/engine/trace-store.ts', a.dir!) },
];
if (a['base-store']) trees.push({ name: 'base', s: await open(a['base-store'], a['base-dir']!) });
const times: Record<string, number[]> = Object.fromEntries(trees.map((t) => [t.name, []]));
const counts: Record<string, number> = {};
for (const t of trees) counts[t.name] = await ask(t.s); // warm-up (facts, metadata caches)
for (let i = 0; i < runs; i++) {
  for (const t of i % 2 === 0 ? trees : [...trees].reverse()) {
    const t0 = performance.now();
    const n = await ask(t.s);
    times[t.name]!.push(performance.now() - t0);
    if (n !== counts[t.name]) throw new Error(`${t.name}: count changed ${counts[t.name]} -> ${n}`);
  }
}
if (trees.length === 2 && counts['this'] !== counts['base']) throw new Error(`counts disagree: ${JSON.stringify(counts)}`);
const result = {
  question: q.id,
  runs,
  spans: trees[0]!.s.store.records.stats,
  counts,
  ms: Object.fromEntries(
    Object.entries(times).map(([k, v]) => [
      k,
      { median: median(v), min: Math.min(...v), max: Math.max(...v), all: v.map((x) => Math.round(x * 10) / 10) },
    ]),
  ),
  load: loadavg(),
};
console.log(JSON.stringify(result, null, 1));
if (a.out) writeFileSync(a.out, `${JSON.stringify(result, null, 1)}\n`);
for (const t of trees) await t.s.store.close();
