// Text index figures: case-insensitive `contains` counts and first pages over an
// existing store, and the cost of building the index of its segments. With `--base-store` (another
// checkout's src/engine/trace-store.ts) and `--base-dir` (a copy of the store for it), both trees
// answer in one process, taking turns run by run: on a shared machine only such paired ratios mean
// much.
//   node --import tsx bench/probes/text-index.ts --dir <store> --project <id> --run <id> [--runs 5]
//     [--base-store <module> --base-dir <copy>] [--needles a,b] [--build]
//     [--plant 'text']  (first logs and seals, in each store, one trace with that input)
//   node --import tsx bench/probes/text-index.ts --make 1000000 --dir <new store> [--base-dir <its copy>]
//     builds the store (the workload's spans, seed 7, sealed and compacted) and prints its ids
import { cpSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { median } from '../common.js';
import { sql } from '../../src/query/sql.js';

const { values: a } = parseArgs({
  options: {
    dir: { type: 'string' },
    project: { type: 'string' },
    run: { type: 'string' },
    'base-store': { type: 'string' },
    'base-dir': { type: 'string' },
    runs: { type: 'string' },
    build: { type: 'boolean' },
    needles: { type: 'string' },
    plant: { type: 'string' },
    make: { type: 'string' },
  },
});

if (a.make) {
  const { TraceStore } = await import('../../src/engine/trace-store.js');
  const { spanBatches } = await import('../workload.js');
  const store = await TraceStore.open(a.dir!, { textIndex: true });
  const projectId = store.createProject({ name: 'text-index' }).id;
  const runId = store.createLogStream(projectId, 'bench').id;
  for (const b of spanBatches({ spans: Number(a.make) }))
    await store.logTraces(projectId, { log_stream_id: runId, reliable: true, traces: b.traces } as never);
  await store.flush();
  await store.maintenance.compact();
  await store.close();
  // The copy for the other tree (which removes the .tix files it does not know, on open).
  if (a['base-dir']) cpSync(a.dir!, a['base-dir'], { recursive: true });
  console.log(JSON.stringify({ project: projectId, run: runId }));
  process.exit(0);
}
const runs = Number(a.runs ?? 5);
const needles = (a.needles ?? 'warranty').split(',');
type Mod = typeof import('../../src/engine/trace-store.js');
type Store = Awaited<ReturnType<Mod['TraceStore']['open']>>;

async function open(module: string, dir: string): Promise<Store> {
  const mod = (await import(resolve(module))) as Mod;
  const store = await mod.TraceStore.open(dir, { autoCompact: false, textIndex: true });
  if (a.plant) {
    // One trace whose input holds a rare string (a ticket number, an error text), sealed in a segment of its own.
    await store.logTraces(a.project!, {
      log_stream_id: a.run!,
      reliable: true,
      traces: [
        { name: 'planted', input: a.plant, created_at: '2026-01-01T08:00:00Z', spans: [{ type: 'tool', name: 'planted', input: a.plant }] },
      ],
    } as never);
    await store.flush();
  }
  return store;
}

const stores: [string, Store][] = [['index', await open(join(import.meta.dirname, '../../src/engine/trace-store.ts'), a.dir!)]];
if (a['base-store']) stores.push(['base', await open(a['base-store'], a['base-dir']!)]);
const out: Record<string, unknown> = {};
for (const needle of needles) {
  const body = {
    log_stream_id: a.run!,
    filters: [{ type: 'text', column_id: 'input', operator: 'contains', value: needle, case_sensitive: false }],
  };
  for (const kind of ['count', 'page'] as const) {
    const once = async (s: Store) =>
      kind === 'count'
        ? (await s.count('span', a.project!, body as never)).total_count
        : (await s.partialSearch('span', a.project!, { ...body, limit: 100 } as never)).records.length;
    const answers = new Set<number>();
    for (const [, s] of stores) answers.add(await once(s));
    if (answers.size !== 1) throw new Error(`${needle} ${kind}: the stores disagree (${[...answers].join(' vs ')})`);
    const t = stores.map(() => [] as number[]);
    for (let i = 0; i < runs; i++) {
      for (let k = 0; k < stores.length; k++) {
        const t0 = performance.now();
        await once(stores[k]![1]);
        t[k]!.push(performance.now() - t0);
      }
    }
    const row: Record<string, number> = { matches: [...answers][0]! };
    stores.forEach(([name], k) => {
      row[`${name}_ms`] = Number(median(t[k]!).toFixed(1));
    });
    if (stores.length > 1) row['ratio'] = Number((median(t[0]!) / median(t[1]!)).toFixed(3));
    out[`${needle} ${kind}`] = row;
  }
}
for (const [, s] of stores) await s.close();
if (a.build) {
  // Index build of every segment, against rewriting the segment as a merge does (COPY to ZSTD Parquet).
  const { Database } = await import('../../src/db/database.js');
  const { buildTextIndexFiles } = await import('../../src/storage/indexes/text-index.js');
  const db = await Database.open();
  const conn = await db.dedicated();
  const m = JSON.parse(readFileSync(join(a.dir!, 'manifest.json'), 'utf8')) as { segments: { file: string; rows: number }[] };
  let rows = 0;
  let build = 0;
  let copy = 0;
  for (const s of m.segments) {
    const f = join(a.dir!, s.file);
    let t0 = performance.now();
    await buildTextIndexFiles(conn, f, { tix: '/tmp/tracelake-probe.tix', tok: '/tmp/tracelake-probe.tok' });
    build += performance.now() - t0;
    t0 = performance.now();
    await conn.run(
      sql`COPY (SELECT * FROM read_parquet(${f})) TO '/tmp/tracelake-tix-copy.parquet' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 32768)`,
    );
    copy += performance.now() - t0;
    rows += s.rows;
  }
  out['build'] = {
    rows,
    index_us_per_row: Number(((build * 1000) / rows).toFixed(2)),
    rewrite_us_per_row: Number(((copy * 1000) / rows).toFixed(2)),
  };
  await db.close();
}
console.log(JSON.stringify(out, null, 1));
