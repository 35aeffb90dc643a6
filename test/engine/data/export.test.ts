// Guarantees: an export holds exactly the live records selected (sealed and in memory; deleted ones
// never), in the documented columns, in each format; a level and filter select matching records with
// their descendants; bad selections are refused before anything is written.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { DuckDBInstance } from '../../../src/vendor/duckdb.js';
import { tableFromIPC } from 'apache-arrow';
import { EXPORT_COLUMNS } from '../../../src/engine/data/export.js';
import { InvalidRequestError } from '../../../src/errors.js';
import { everyKindTrace, openStore, tempDir } from '../../support/helpers.js';

async function filled(t: Parameters<typeof openStore>[0]) {
  const fx = await openStore(t);
  const { store, projectId, logStreamId } = fx;
  await store.logTraces(projectId, { log_stream_id: logStreamId, traces: [everyKindTrace('a') as any, everyKindTrace('b') as any] });
  await store.flush();
  await store.logTraces(projectId, { log_stream_id: logStreamId, traces: [everyKindTrace('c') as any] });
  await store.records.delete('trace', projectId, {
    log_stream_id: logStreamId,
    filters: [{ type: 'text', column_id: 'name', operator: 'eq', value: 'trace-b' }],
  } as any);
  return fx;
}

async function readWithDuckDB(sql: string): Promise<Record<string, unknown>[]> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    return (await c.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[];
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

test('every format holds the live records in the export columns', async (t) => {
  const { store, projectId, logStreamId } = await filled(t);
  // Traces a and c with 6 spans each, and the session(s) they were logged into.
  const expected = await store.records.countAll(projectId, logStreamId);
  assert.ok(expected >= 14);
  const out = tempDir(t);
  const parquet = join(out, 'x.parquet');
  const jsonl = join(out, 'x.jsonl');
  const arrow = join(out, 'x.arrow');
  const fractions: number[] = [];
  assert.equal(
    (await store.data.exportFile(projectId, parquet, { format: 'parquet', onProgress: (f) => fractions.push(f) })).rows,
    expected,
  );
  assert.equal(fractions.at(-1), 1);
  assert.equal((await store.data.exportFile(projectId, jsonl, { format: 'jsonl', log_stream_id: logStreamId })).rows, expected);
  assert.equal((await store.data.exportFile(projectId, arrow, { format: 'arrow' })).rows, expected);

  const pq = await readWithDuckDB(`SELECT * FROM read_parquet('${parquet}') ORDER BY id`);
  assert.equal(pq.length, expected);
  assert.deepEqual(Object.keys(pq[0]!), EXPORT_COLUMNS);
  assert.ok(!pq.some((r) => String(r['name']).endsWith('-b')), 'the deleted trace is not exported');
  const lines = readFileSync(jsonl, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(lines.length, expected);
  assert.deepEqual(Object.keys(lines[0]), EXPORT_COLUMNS);
  const table = tableFromIPC(readFileSync(arrow));
  assert.equal(table.numRows, expected);
  assert.deepEqual(
    table.schema.fields.map((f) => f.name),
    EXPORT_COLUMNS,
  );
  // The same ids in every format.
  const ids = (rows: { id: unknown }[]) => rows.map((r) => String(r.id)).sort();
  assert.deepEqual(ids(lines), ids(pq as never));
  assert.deepEqual(ids([...table] as never), ids(pq as never));
});

test('a level and filter select matching records and their descendants, as Arrow batches', async (t) => {
  const { store, projectId, logStreamId } = await filled(t);
  const batches = [];
  for await (const b of store.data.export(projectId, {
    log_stream_id: logStreamId,
    level: 'trace',
    filters: [{ type: 'text', column_id: 'name', operator: 'eq', value: 'trace-c' }],
  } as any))
    batches.push(b);
  const rows = batches.flatMap((b) => [...b]);
  assert.equal(rows.length, 7, 'the trace and its 6 spans');
  assert.equal(new Set(rows.map((r) => r.trace_id)).size, 1);
  assert.deepEqual(rows.map((r) => r.type).sort(), ['agent', 'control', 'llm', 'retriever', 'tool', 'trace', 'workflow']);
  const llm = rows.find((r) => r.type === 'llm')!;
  assert.equal(llm.metrics.toJSON()['num_input_tokens'], 12);
  // Nothing matches: one empty batch still carries the columns.
  const none = [];
  for await (const b of store.data.export(projectId, {
    level: 'span',
    filters: [{ type: 'text', column_id: 'name', operator: 'eq', value: 'nothing' }],
  } as any))
    none.push(b);
  assert.equal(
    none.reduce((n, b) => n + b.numRows, 0),
    0,
  );
  assert.deepEqual(
    none[0]!.schema.fields.map((f) => f.name),
    EXPORT_COLUMNS,
  );
});

test('bad selections are refused and write nothing', async (t) => {
  const { store, projectId } = await filled(t);
  const out = join(tempDir(t), 'x.parquet');
  await assert.rejects(store.data.exportFile(projectId, out, { format: 'csv' as never }), InvalidRequestError);
  await assert.rejects(store.data.exportFile(projectId, out, { format: 'parquet', level: 'row' as never }), InvalidRequestError);
  await assert.rejects(
    store.data.exportFile(projectId, out, {
      format: 'parquet',
      level: 'span',
      filters: [{ type: 'text', column_id: 'no_such', operator: 'eq', value: 'x' }],
    } as any),
    InvalidRequestError,
  );
  assert.throws(() => store.data.export(projectId, { level: 'span', filter_tree: { nonsense: true } } as any), InvalidRequestError);
  assert.equal(existsSync(out), false);
});
