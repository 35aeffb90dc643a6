// Guarantees: store.sql answers over live rows only (sealed and in memory, deleted and replaced rows
// excluded), with one column per metric, as rows or an Arrow table; and it refuses anything but one
// read-only query: writes, COPY, file and network reads, extensions, ATTACH, settings, several
// statements. A refused query leaves no file behind and the store answers as before.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { InvalidRequestError } from '../../../src/errors.js';
import { everyKindTrace, openStore, tempDir } from '../../support/helpers.js';

test('views hold the live rows of memory tables and segments, metrics as columns', async (t) => {
  const { store, projectId, logStreamId } = await openStore(t);
  await store.logTraces(projectId, { log_stream_id: logStreamId, traces: [everyKindTrace('a') as any, everyKindTrace('b') as any] });
  await store.flush();
  await store.logTraces(projectId, { log_stream_id: logStreamId, traces: [everyKindTrace('c') as any] });
  // One deletion: the trace b with its spans goes (a sealed row and its descendants).
  await store.records.delete('trace', projectId, {
    log_stream_id: logStreamId,
    filters: [{ type: 'text', column_id: 'name', operator: 'eq', value: 'trace-b' }],
  } as any);

  const spans = (await store.count('span', projectId, { log_stream_id: logStreamId })).total_count;
  const [row] = await store.data.sql('SELECT count(*) AS n, count(DISTINCT id) AS ids, sum(num_input_tokens) AS tokens FROM spans');
  assert.equal(Number(row!['n']), spans);
  assert.equal(Number(row!['ids']), spans);
  assert.equal(row!['tokens'], 24, 'two llm spans (a and c) of 12 input tokens each');
  const traces = await store.data.sql('SELECT name FROM traces ORDER BY name');
  assert.deepEqual(
    traces.map((r) => r['name']),
    ['trace-a', 'trace-c'],
  );
  // Joins with the catalog tables; parameters bind positionally.
  const named = await store.data.sql(
    'SELECT p.name AS project, r.name AS stream, count(*) AS n FROM spans s JOIN projects p ON p.id = s.project_id ' +
      'JOIN runs r ON r.id = s.run_id WHERE s.type = $1 GROUP BY ALL',
    ['llm'],
  );
  assert.deepEqual(
    named.map((r) => ({ ...r, n: Number(r['n']) })),
    [{ project: 'test-project', stream: 'default', n: 2 }],
  );

  const table = await store.data.sql(
    'SELECT id, created_at, tags, metrics, num_input_tokens FROM spans WHERE type = $1 ORDER BY name',
    ['llm'],
    { format: 'arrow' },
  );
  assert.equal(table.numRows, 2);
  assert.deepEqual(
    table.schema.fields.map((f) => String(f.type)),
    ['Utf8', 'Timestamp<MICROSECOND>', 'List<Utf8>', 'Map<{key:Utf8, value:Float64}>', 'Float64'],
  );
  assert.equal(table.getChild('num_input_tokens')!.get(0), 12);
  const tags = await store.data.sql("SELECT tags FROM traces WHERE name = 'trace-a'", [], { format: 'arrow' });
  assert.deepEqual([...tags.getChild('tags')!.get(0)!], ['t1', 'a']);
});

test('a replaced record reads once, in its new version', async (t) => {
  const { store, projectId, logStreamId } = await openStore(t);
  const trace = everyKindTrace('a') as any;
  await store.logTraces(projectId, { log_stream_id: logStreamId, traces: [trace] });
  await store.flush();
  const [first] = await store.data.sql('SELECT id FROM traces');
  await store.records.updateRecord('trace', projectId, String(first!['id']), { log_stream_id: logStreamId, output: 'changed' } as any);
  const rows = await store.data.sql('SELECT output FROM traces');
  assert.deepEqual(rows, [{ output: 'changed' }]);
});

test('hostile queries are refused and change nothing', async (t) => {
  const { store, dir, projectId, logStreamId } = await openStore(t);
  await store.logTraces(projectId, { log_stream_id: logStreamId, traces: [everyKindTrace('a') as any] });
  await store.flush();
  const outside = join(tempDir(t), 'secret.csv');
  writeFileSync(outside, 'a,b\n1,2\n');
  const target = join(tempDir(t), 'out');
  const q = (s: string) => s.replaceAll('$OUT', target).replaceAll('$SECRET', outside).replaceAll('$DATA', dir);
  const hostile = [
    'CREATE TABLE x AS SELECT 1',
    "INSERT INTO projects VALUES ('a', 'b')",
    'DELETE FROM runs',
    "UPDATE projects SET name = 'x'",
    'DROP VIEW spans',
    'CREATE OR REPLACE VIEW spans AS SELECT 1',
    "COPY (SELECT * FROM spans) TO '$OUT.csv'",
    "COPY spans TO '$OUT.parquet' (FORMAT parquet)",
    "EXPORT DATABASE '$OUT'",
    "SELECT * FROM read_csv('$SECRET')",
    "SELECT * FROM read_text('$SECRET')",
    "SELECT * FROM read_blob('/etc/passwd')",
    "SELECT * FROM '$SECRET'",
    "SELECT * FROM read_text('$DATA/catalog.json')",
    "SELECT * FROM read_text('$DATA/api-key')",
    "SELECT * FROM read_json_auto('$DATA/manifest.json')",
    "SELECT * FROM glob('$DATA/**')",
    "SELECT * FROM read_parquet('https://example.com/x.parquet')",
    "SELECT * FROM 'http://127.0.0.1:9/x.csv'",
    'INSTALL httpfs',
    'LOAD httpfs',
    "LOAD '$OUT.duckdb_extension'",
    "ATTACH '$OUT.db' AS o",
    "ATTACH '$DATA/x.db'",
    'SET enable_external_access = true',
    "SET allowed_directories = ['/']",
    "SET memory_limit = '100GB'",
    'RESET lock_configuration',
    'PRAGMA enable_profiling',
    "PRAGMA enable_profiling = 'json'",
    'CALL pragma_database_size()',
    'CHECKPOINT',
    'VACUUM',
    'BEGIN TRANSACTION',
    'SELECT 1; SELECT 2',
    'SELECT 1; DROP VIEW spans',
    "SELECT 1; COPY (SELECT 1) TO '$OUT.csv'",
    'CREATE MACRO m() AS 1',
    "CREATE SECRET s (TYPE s3, KEY_ID 'a', SECRET 'b')",
    'not sql at all',
    '',
  ];
  for (const text of hostile) {
    await assert.rejects(store.data.sql(q(text)), (err: unknown) => err instanceof InvalidRequestError, text);
  }
  for (const suffix of ['.csv', '.parquet', '', '.db'])
    assert.equal(existsSync(target + suffix), false, `nothing written at ${target}${suffix}`);
  assert.equal(existsSync(join(dir, 'x.db')), false);
  assert.deepEqual(
    readdirSync(join(dir, 'tmp')).filter((f) => f.startsWith('sql-')),
    [],
    'work folders are removed',
  );
  // The store and the views are intact.
  const [row] = await store.data.sql('SELECT count(*) AS n FROM spans');
  assert.equal(Number(row!['n']), (await store.count('span', projectId, {})).total_count);
  assert.equal(Number(row!['n']), 6);
  await assert.rejects(store.data.sql('SELECT $1', []), InvalidRequestError, 'a missing parameter');
  await assert.rejects(store.data.sql('SELECT * FROM range(100)', [], { maxRows: 10 }), /more than 10 rows/);
  assert.equal((await store.data.sql('SELECT * FROM range(10)', [], { maxRows: 10 })).length, 10);
  await assert.rejects(
    store.data.sql('SELECT count(*) FROM range(1000000000000) a, range(1000000) b', [], { timeoutMs: 100 }),
    InvalidRequestError,
    'an endless query is interrupted',
  );
  await assert.rejects(store.data.sql('SELECT 1', [{} as any]), InvalidRequestError, 'a parameter that is no scalar');
});
