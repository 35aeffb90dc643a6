// What keeping unsealed rows in DuckDB's memory table costs against keeping them only as the log's
// Arrow batches. For one memory table's worth of requests (~1,100 rows each), CPU of this process's
// main thread and of every other thread, per row:
//   A. today: each request inserted into an in-memory table (INSERT ... FROM tl_batches), then the
//      table sealed (COPY ... ORDER BY created_at, id TO ZSTD-1 Parquet, 8,192-row groups);
//   B. no memory table: the seal's COPY reads the batches straight from tl_batches;
//   and what a read of the unsealed rows costs each way (a filtered count, asked 50 times): from the table, and from
//   the batches through the table function (which hands DuckDB every column of every row).
// Variants take turns, `--rounds` times.
//   node --import tsx bench/probes/seal-from-batches.ts [--requests 30] [--rounds 3]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { RecordBatch } from 'apache-arrow';
import { BatchSource } from '../../src/db/batch-source.js';
import { Database } from '../../src/db/database.js';
import { stringLiteral } from '../../src/db/sql-string.js';
import { flattenTraces } from '../../src/ingest/flatten.js';
import { BatchBuilder } from '../../src/storage/memtable/batch-builder.js';
import { MemInserter, MemTable } from '../../src/storage/memtable/mem-tables.js';
import { RECORD_COLUMNS, TAG_SET_COLUMN, TAG_SET_SQL } from '../../src/record/record-columns.js';
import { generateBatches } from '../../test/support/generator.js';
import { median, statCpu } from '../common.js';
import { ident, int, raw, sql, type Sql } from '../../src/query/sql.js';

const { values } = parseArgs({ options: { requests: { type: 'string', default: '30' }, rounds: { type: 'string', default: '3' } } });
const requests = Number(values.requests);
const rounds = Number(values.rounds);
const PROJECT = '11111111-1111-4111-8111-111111111111';
const RUN = '22222222-2222-4222-8222-222222222222';

/** CPU seconds of the main thread and of all others. */
function cpu(): { main: number; other: number } {
  const all = statCpu(readFileSync('/proc/self/stat', 'utf8')).seconds;
  const main = statCpu(readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8')).seconds;
  return { main, other: all - main };
}

// Distinct requests (their own ids and times), built once: building is not what is measured.
const batches: RecordBatch[] = [];
let seq = 1;
for (const traces of generateBatches({ spans: requests * 1000, batchSpans: 1000, seed: 7 })) {
  const flat = flattenTraces({ log_stream_id: RUN, traces } as never, {
    projectId: PROJECT,
    runId: RUN,
    receivedUs: 1_767_225_600_000_000 + seq,
  });
  const rows = [...flat.traces.map((t) => t.record), ...flat.spans].map((r) => ({
    ...r,
    seq: seq++,
    project_id: PROJECT,
    run_id: RUN,
    session_id: r.session_id ?? RUN,
  }));
  batches.push(new BatchBuilder().build(rows));
}
const rows = batches.reduce((n, b) => n + b.numRows, 0);

const dir = mkdtempSync(join(tmpdir(), 'tracelake-seal-batches-'));
const db = await Database.open({ tempDirectory: dir, memoryLimit: '1GB' });
const source = new BatchSource(RECORD_COLUMNS);
const conn = await db.dedicated(source.functions);
await conn.run(sql`CREATE TABLE dead (seq BIGINT, clock BIGINT)`);
await conn.run(sql`CREATE TABLE childless (seq BIGINT, clock BIGINT)`);
const inserter = new MemInserter(conn, source);
const out = join(dir, 'seg.parquet');
const copy = (from: Sql) =>
  sql`COPY (SELECT *, ${raw(TAG_SET_SQL)} AS ${raw(TAG_SET_COLUMN)} FROM ${from} ORDER BY created_at, id)
      TO ${stringLiteral(out)} (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE 8192)`;
const count = (from: Sql) => sql`SELECT count(*) AS n FROM ${from} WHERE model = 'gpt-4o'`;
const batchesOf = (key: number) => sql`${raw(source.batchesFn)}(${int(key)})`;

type Figures = { main: number[]; other: number[] };
const res: Record<string, Figures> = {};
// /proc counts CPU in 10 ms ticks: a read is repeated READS times and the figure divided.
const READS = 50;
const measure = async (name: string, fn: () => Promise<void>, times = 1) => {
  const c0 = cpu();
  for (let i = 0; i < times; i++) await fn();
  const c1 = cpu();
  const f = (res[name] ??= { main: [], other: [] });
  f.main.push(((c1.main - c0.main) * 1e6) / rows / times);
  f.other.push(((c1.other - c0.other) * 1e6) / rows / times);
};

let n = 0;
for (let r = 0; r < rounds; r++) {
  const name = `mem_${++n}`;
  const table = new MemTable(n, 1, inserter.create(name));
  await table.created;
  await measure('A. insert each request into a memory table', async () => {
    for (const b of batches) {
      const done = inserter.insert(table, b, []);
      inserter.flush();
      await done;
    }
  });
  await measure(
    'A. read: a filtered count of the memory table',
    async () => {
      await conn.all(count(ident(name)));
    },
    READS,
  );
  await measure('A. seal the memory table', async () => {
    await conn.run(copy(ident(name)));
  });
  await conn.run(sql`DROP TABLE ${ident(name)}`);
  const key = source.addBatches(batches);
  await measure(
    'B. read: a filtered count through tl_batches',
    async () => {
      await conn.all(count(batchesOf(key)));
    },
    READS,
  );
  await measure('B. seal straight from the batches', async () => {
    await conn.run(copy(batchesOf(key)));
  });
  source.release(key);
}
await db.close();
rmSync(dir, { recursive: true, force: true });

process.stdout.write(
  `${rows} rows in ${batches.length} requests, ${rounds} rounds; median µs of CPU a row\n\n` +
    '| step | main thread | other threads | total |\n|---|---:|---:|---:|\n',
);
for (const [name, f] of Object.entries(res)) {
  const m = median(f.main);
  const o = median(f.other);
  process.stdout.write(`| ${name} | ${m.toFixed(2)} | ${o.toFixed(2)} | ${(m + o).toFixed(2)} |\n`);
}
