// Text index figures (issue 17, item 2): case-insensitive `contains` counts and first pages over an
// existing store, and the cost of building the index of its segments. Run it against this tree and
// against another checkout (`--store <path to src/engine/trace-store.ts>`) in turns: on a shared
// machine only ratios within one sitting mean anything.
//   node --import tsx bench/text-index.ts --dir <store> --project <id> --run <id> [--store <module>] [--runs 5] [--build]
//     [--needles a,b] [--plant 'text'] (logs and seals one trace with that input first)
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { median } from './common.js';

const { values: a } = parseArgs({ options: { dir: { type: 'string' }, project: { type: 'string' }, run: { type: 'string' }, store: { type: 'string' }, runs: { type: 'string' }, build: { type: 'boolean' }, needles: { type: 'string' }, plant: { type: 'string' } } });
const dir = a.dir!;
const runs = Number(a.runs ?? 5);
const needles = (a.needles ?? 'warranty,main-plan-6372,manager-prompts-8679').split(',');
const mod = (await import(resolve(a.store ?? join(import.meta.dirname, '../src/engine/trace-store.ts')))) as typeof import('../src/engine/trace-store.js');
const store = await mod.TraceStore.open(dir, { autoCompact: false });
if (a.plant) {
  // One trace whose input holds a rare string (a ticket number, an error text), sealed in a segment of its own.
  await store.logTraces(a.project!, { log_stream_id: a.run!, reliable: true, traces: [{ name: 'planted', input: a.plant, created_at: '2026-01-01T08:00:00Z', spans: [{ type: 'tool', name: 'planted', input: a.plant }] }] } as never);
  await store.flush();
}
const out: Record<string, number> = {};
for (const needle of needles) {
  const body = { log_stream_id: a.run!, filters: [{ type: 'text', column_id: 'input', operator: 'contains', value: needle, case_sensitive: false }] };
  for (const kind of ['count', 'page'] as const) {
    const once = async () => (kind === 'count' ? (await store.count('span', a.project!, body as never)).total_count : (await store.partialSearch('span', a.project!, { ...body, limit: 100 } as never)).records.length);
    const n = await once();
    const t: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      await once();
      t.push(performance.now() - t0);
    }
    out[`${needle} ${kind} (${n})`] = median(t);
  }
}
await store.close();
if (a.build) {
  // Index build of every segment, against rewriting the segment as a merge does (COPY to ZSTD Parquet).
  const { Database } = await import('../src/db/database.js');
  const { buildTextIndex } = await import('../src/storage/text-index.js');
  const db = await Database.open();
  const conn = await db.dedicated();
  const m = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { segments: { file: string; rows: number }[] };
  let rows = 0;
  let build = 0;
  let copy = 0;
  for (const s of m.segments) {
    const f = join(dir, s.file);
    let t0 = performance.now();
    await buildTextIndex(conn, f);
    build += performance.now() - t0;
    t0 = performance.now();
    await conn.run(`COPY (SELECT * FROM read_parquet('${f.replaceAll("'", "''")}')) TO '/tmp/tracelake-tix-copy.parquet' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 32768)`);
    copy += performance.now() - t0;
    rows += s.rows;
  }
  out['index build µs/row'] = (build * 1000) / rows;
  out['segment rewrite (COPY) µs/row'] = (copy * 1000) / rows;
  await db.close();
}
console.log(JSON.stringify(out));
