// What writing one segment costs, step by step: process CPU (every thread) of each statement
// writeSegment runs, and the JavaScript around them, writing the same seal-sized segments again and
// again with nothing else running (so a statement's CPU is its own). The segments are copies of a
// small store's sealed ones, written as a seal writes them (its compression level and row groups).
// --merge: one segment of all the sealed rows instead, written as a merge writes it (compression
// level 3, 32k-row groups, top lists as deep as a lone segment of its run keeps).
//   node dist/bench/probes/seal-steps.js [spans=60000] [rounds=5] [--merge]
import { VALUE_INDEX_MIN_ROWS } from '../../src/storage/indexes/value-index.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Connection, Database } from '../../src/db/database.js';
import { TraceStore } from '../../src/engine/trace-store.js';
import { NOTED_COLUMNS } from '../../src/query/exec/data-facts.js';
import { compile, sql } from '../../src/query/sql.js';
import { loadManifest } from '../../src/storage/manifest/manifest.js';
import { TOP_LIST_MIN_ROWS } from '../../src/storage/indexes/top-lists.js';
import { segmentPath, writeSegment } from '../../src/storage/segments/segments.js';
import { generateBatches } from '../../test/support/generator.js';

const spans = Number(process.argv[2] ?? 60_000);
const rounds = Number(process.argv[3] ?? 5);
const merge = process.argv.includes('--merge');
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

// Each statement's CPU by its shape (the SQL's first words, values and numbers left out).
const tally = new Map<string, { ms: number; n: number }>();
const shape = (q: unknown) =>
  compile(q as never)
    .text.replace(/\s+/g, ' ')
    .replace(/'[^']*'/g, "'?'")
    .replace(/\d+/g, 'N')
    .slice(0, 80);
const add = (k: string, ms: number) => {
  const e = tally.get(k) ?? { ms: 0, n: 0 };
  e.ms += ms;
  e.n++;
  tally.set(k, e);
};
const proto = Connection.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
for (const m of ['run', 'all', 'columnNames', 'columns']) {
  const f = proto[m]!;
  proto[m] = async function (this: unknown, q: unknown, ...rest: unknown[]) {
    const c = cpu();
    try {
      return await f.call(this, q, ...rest);
    } finally {
      add(`${m} ${shape(q)}`, cpu() - c);
    }
  };
}
const chunks = proto['fixedChunks'] as (q: unknown) => AsyncGenerator<unknown>;
proto['fixedChunks'] = async function* (this: unknown, q: unknown) {
  const c = cpu();
  try {
    yield* chunks.call(this, q);
  } finally {
    add(`chunks ${shape(q)}`, cpu() - c);
  }
} as never;

const dir = mkdtempSync(join(process.env['TL_TMP'] ?? '/tmp', 'tracelake-seal-steps-'));
const store = await TraceStore.open(dir, { autoCompact: false } as never);
const project = store.createProject({ name: 'bench' });
const ls = store.createLogStream(project.id, 'steps');
for (const batch of generateBatches({ spans, batchSpans: 1000, seed: 11 })) {
  await store.logTraces(project.id, { log_stream_id: ls.id, reliable: true, traces: batch as never });
}
await store.flush();
await store.close();
const sealed = loadManifest(dir).segments.filter((s) => s.kind === 'span');
const sources = merge
  ? [
      {
        ...sealed[0]!,
        rows: sealed.reduce((a, s) => a + s.rows, 0),
        metrics: [...new Set(sealed.flatMap((s) => s.metrics))].sort((a, b) => a - b),
        files: sealed.map((s) => join(dir, s.file)),
      },
    ]
  : sealed.map((s) => ({ ...s, files: [join(dir, s.file)] }));
tally.clear();

const db = await Database.open({ threads: 2 });
let total = 0;
let rows = 0;
let n = 0;
await db.withConnection(async (conn) => {
  for (let r = 0; r < rounds; r++) {
    for (const s of sources) {
      const c = cpu();
      const w = await writeSegment(conn, dir, {
        file: segmentPath(dir, `probe/r${r}`, 1_000_000 + n++),
        projectId: s.project_id,
        runId: s.run_id,
        kind: s.kind,
        select: sql`SELECT * FROM read_parquet(${s.files}, hive_partitioning = false, union_by_name = true) ORDER BY created_at, id`,
        rowGroupSize: merge ? 32_768 : 8192,
        compressionLevel: merge ? 3 : 1,
        textIndex: false,
        topListMinRows: merge ? TOP_LIST_MIN_ROWS : Number.POSITIVE_INFINITY,
        valueIndexMinRows: merge ? VALUE_INDEX_MIN_ROWS : Number.POSITIVE_INFINITY,
        otherRows: 0,
        factColumns: NOTED_COLUMNS,
        metrics: s.metrics,
        hashes: new Float64Array(s.rows).map((_, i) => i),
      });
      total += cpu() - c;
      rows += w?.entry.rows ?? 0;
    }
  }
});
await db.close();
rmSync(dir, { recursive: true, force: true });

const statements = [...tally.values()].reduce((a, e) => a + e.ms, 0);
const per = (ms: number) => Math.round((ms * 1000 * 100) / rows) / 100;
console.log(`${n} segments, ${rows} rows (${Math.round(rows / n)} a segment); CPU µs a row: total ${per(total)}`);
for (const [k, e] of [...tally].sort((a, b) => b[1].ms - a[1].ms)) {
  console.log(`${String(per(e.ms)).padStart(7)} µs/row ${String(e.n).padStart(5)}x  ${k}`);
}
console.log(`${String(per(total - statements)).padStart(7)} µs/row         JavaScript between statements`);
