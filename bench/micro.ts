// Micro-benchmarks of the ingest hot path with benny: where a span's microseconds go, step by step,
// for one request of ~1,000 generated spans. Each step runs alone over the same request, so the
// figures add up to about the cost of the whole path. `npm run bench:micro` (writes
// bench/results/<date>-micro.json and prints a table).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import b from 'benny';
import { BatchSource } from '../src/db/batch-source.js';
import { Database } from '../src/db/database.js';
import { flattenTraces } from '../src/ingest/flatten.js';
import { issuesOf } from '../src/schemas/check.js';
import { LogTracesBody } from '../src/schemas/ingest.js';
import { BatchBuilder } from '../src/storage/memtable/batch-builder.js';
import { MemInserter, MemTable } from '../src/storage/memtable/mem-tables.js';
import { RECORD_COLUMNS } from '../src/record/record-columns.js';
import { stringLiteral } from '../src/db/sql-string.js';
import { encodeEntry } from '../src/storage/wal/wal.js';
import { generateBatches } from '../test/support/generator.js';
import { writeResults } from './common.js';
import { sql } from '../src/query/sql.js';

const PROJECT = '11111111-1111-4111-8111-111111111111';
const RUN = '22222222-2222-4222-8222-222222222222';

interface Step {
  name: string;
  /** µs per span. */
  us: number;
  margin: number;
}

async function main(): Promise<void> {
  const [traces] = generateBatches({ spans: 1000, batchSpans: 1000, seed: 7 });
  const body = { log_stream_id: RUN, traces: traces! };
  const text = JSON.stringify(body);
  const ctx = { projectId: PROJECT, runId: RUN, receivedUs: 1_767_225_600_000_000 };
  const flat = flattenTraces(body as never, ctx);
  const rows = [...flat.traces.map((t) => t.record), ...flat.spans].map((r, i) => ({
    ...r,
    seq: i + 1,
    project_id: PROJECT,
    run_id: RUN,
    session_id: r.session_id ?? RUN,
  }));
  const spans = flat.spans.length;
  const builder = new BatchBuilder();
  const batch = builder.build(rows);
  const dir = mkdtempSync(join(tmpdir(), 'tracelake-micro-'));
  const db = await Database.open({ tempDirectory: dir });
  const source = new BatchSource(RECORD_COLUMNS);
  const writer = await db.dedicated(source.functions);
  await writer.run(sql`CREATE TABLE dead (seq BIGINT)`);
  const inserter = new MemInserter(writer, source);
  const table = new MemTable(1, 1, inserter.create('mem_1'));
  // A table of 50 requests for the seal step (its cost is per row, so the size only steadies it).
  const sealer = await db.dedicated();
  const sealTable = new MemTable(2, 1, inserter.create('mem_2'));
  for (let i = 0; i < 50; i++) await inserter.insert(sealTable, batch, []);
  const out = join(dir, 'seg.parquet');

  const fresh = () => JSON.parse(text) as unknown; // validation caches per object: give it a new one
  const summary = await b.suite(
    'ingest hot path, per request of ~1,000 spans',
    b.add('JSON.parse of the request (the yardstick)', () => {
      JSON.parse(text);
    }),
    b.add('JSON.parse + validation (schema check)', () => {
      if (issuesOf(LogTracesBody, fresh()) !== null) throw new Error('invalid');
    }),
    b.add('flattening (trees -> records, ids, links)', () => {
      flattenTraces(body as never, ctx);
    }),
    b.add('Arrow batch building', () => {
      builder.build(rows);
    }),
    b.add('Arrow IPC encoding for the log (with CRC)', () => {
      encodeEntry(batch, [], rows.length);
    }),
    b.add('DuckDB insert (table function, writer thread)', async () => {
      // flush(): a lone request's insert otherwise lingers LINGER_MS for others to join its statement.
      const done = inserter.insert(table, batch, []);
      inserter.flush();
      await done;
    }),
    b.add('seal: sort + ZSTD Parquet write (per row of 50 requests)', async () => {
      await sealer.run(sql`COPY (SELECT * FROM mem_2 ORDER BY created_at, id) TO ${stringLiteral(out)} (FORMAT parquet, COMPRESSION zstd)`);
    }),
    b.cycle(),
    b.complete(),
  );
  await db.close();
  rmSync(dir, { recursive: true, force: true });

  const perSpan = (name: string, ops: number, margin: number, scale = 1): Step => ({ name, us: (1e6 / ops / spans) * scale, margin });
  const r = summary.results;
  const parse = perSpan(r[0]!.name, r[0]!.ops, r[0]!.margin);
  const parseValidate = perSpan(r[1]!.name, r[1]!.ops, r[1]!.margin);
  const steps: Step[] = [
    parse,
    { name: 'validation (schema check)', us: Math.max(0, parseValidate.us - parse.us), margin: parseValidate.margin },
    perSpan(r[2]!.name, r[2]!.ops, r[2]!.margin),
    perSpan(r[3]!.name, r[3]!.ops, r[3]!.margin),
    perSpan(r[4]!.name, r[4]!.ops, r[4]!.margin),
    perSpan(r[5]!.name, r[5]!.ops, r[5]!.margin),
    perSpan(r[6]!.name, r[6]!.ops, r[6]!.margin, 1 / 50),
  ];
  console.log(`\nrecords per request: ${rows.length} (${spans} spans), ${(text.length / spans).toFixed(0)} JSON bytes per span\n`);
  console.log('| step | µs per span | ± |');
  console.log('|---|---:|---:|');
  for (const s of steps) console.log(`| ${s.name} | ${s.us.toFixed(2)} | ${s.margin.toFixed(1)}% |`);
  const file = writeResults(join(process.cwd(), 'bench', 'results'), 'micro', {
    spans,
    records: rows.length,
    bytesPerSpan: text.length / spans,
    steps,
  });
  console.log(`\nwritten to ${file}`);
}

await main();
