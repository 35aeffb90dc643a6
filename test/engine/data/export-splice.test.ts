// Guarantees of a whole Parquet export, which copies the pages of segments whose rows are all live
// and writes the rest through DuckDB: it holds exactly the rows (and values) of the same export
// written wholly by DuckDB, whatever mix the store is in: segments copied whole, a segment with a
// dead row, a has_children override, rows past retention in a segment with live ones, memory rows.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Database } from '../../../src/db/database.js';
import { EXPORT_COLUMNS } from '../../../src/engine/data/export.js';
import { TYPE } from '../../../src/engine/data/import-checks.js';
import { spliceParquet, SpliceMismatch, SPLICE_KEY } from '../../../src/storage/parquet/parquet-splice.js';
import { everyKindTrace, openStore, tempDir } from '../../support/helpers.js';
import { raw, sql } from '../../../src/query/sql.js';
import { stringLiteral } from '../../../src/db/sql-string.js';

const uuidFor = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
const DAY = 86_400_000;

test('a whole Parquet export copies live segments and equals the export DuckDB writes', async (t) => {
  const { store, projectId, logStreamId } = await openStore(t, { autoCompact: false, rowGroupSize: 16 });
  const ls = { log_stream_id: logStreamId };
  const log = (traces: object[]) => store.logTraces(projectId, { ...ls, traces: traces as never });
  const recent = new Date(Date.now() - DAY).toISOString();
  const old = new Date(Date.now() - 400 * DAY).toISOString();
  // Whole segments: 20 traces of every kind.
  await log(Array.from({ length: 20 }, (_, i) => ({ ...everyKindTrace(`a${i}`), id: uuidFor(i), created_at: recent })));
  await store.flush();
  // A segment with a has_children override: a workflow span whose only child is deleted.
  await log([
    {
      id: uuidFor(100),
      name: 't',
      created_at: recent,
      spans: [
        { id: uuidFor(101), type: 'workflow', name: 'wf', spans: [{ id: uuidFor(102), type: 'tool', name: 'child', tags: ['gone'] }] },
      ],
    },
  ]);
  await store.flush();
  await store.records.delete('span', projectId, {
    ...ls,
    filters: [{ type: 'collection', column_id: 'tags', operator: 'contains', value: 'gone' }],
  } as never);
  await store.flush();
  // A has_children override on a segment without dead rows: a child logged before its parent (so in
  // an earlier segment), then deleted.
  await store.records.logSpans(projectId, {
    ...ls,
    trace_id: uuidFor(110),
    parent_id: uuidFor(111),
    reliable: false,
    spans: [{ id: uuidFor(112), type: 'tool', name: 'early', tags: ['gone2'] }],
  } as never);
  await store.flush();
  await store.records.logSpans(projectId, {
    ...ls,
    trace_id: uuidFor(110),
    parent_id: uuidFor(110),
    spans: [{ id: uuidFor(111), type: 'workflow', name: 'late parent' }],
  } as never);
  await store.flush();
  await store.records.delete('span', projectId, {
    ...ls,
    filters: [{ type: 'collection', column_id: 'tags', operator: 'contains', value: 'gone2' }],
  } as never);
  await store.flush();
  // A segment with expired rows beside live ones (retention 365 days).
  await log([200, 201, 202, 203].map((i) => ({ ...everyKindTrace(`r${i}`), id: uuidFor(i), created_at: i % 2 === 0 ? old : recent })));
  await store.flush();
  store.data.setRetention(projectId, { retention_days: 365 });
  // A dead row in a whole segment's neighbour: trace 3 logged again (the new version in memory), and
  // rows only in memory.
  await log([{ ...everyKindTrace('again'), id: uuidFor(3), output: 'relogged', created_at: recent }]);
  await log([300, 301].map((i) => ({ ...everyKindTrace(`m${i}`), id: uuidFor(i), created_at: recent })));

  const dir = tempDir(t);
  const spliced = join(dir, 'spliced.parquet');
  const plain = join(dir, 'plain.jsonl');
  const a = await store.data.exportFile(projectId, spliced, { format: 'parquet' });
  // JSON lines: the whole export through DuckDB's COPY.
  const b = await store.data.exportFile(projectId, plain, { format: 'jsonl' });
  assert.equal(a.rows, b.rows);

  const db = await Database.open({ connections: 1 });
  t.after(() => db.close());
  const kv = await db.all(sql`SELECT decode(value) AS v FROM parquet_kv_metadata(${spliced}) WHERE decode(key) = ${SPLICE_KEY}`);
  assert.ok(Number(kv[0]?.['v']) > 0, 'row groups were copied from segments');
  // The export's columns, and the same rows with the same values (each row compared as JSON; the JSON
  // lines read back with the export's column types).
  const cols = (await db.all(sql`DESCRIBE SELECT * FROM read_parquet(${spliced})`)).map((r) => `${r['column_name']}:${r['column_type']}`);
  assert.deepEqual(
    cols,
    EXPORT_COLUMNS.map((c) => `${c}:${TYPE[c]}`),
  );
  const left = sql`SELECT to_json(x)::VARCHAR AS j FROM read_parquet(${spliced}) x`;
  const right = sql`SELECT to_json(x)::VARCHAR AS j
    FROM read_json(${plain}, format = 'newline_delimited', columns = {${raw(EXPORT_COLUMNS.map((c) => `${c}: '${TYPE[c]}'`).join(', '))}}) x`;
  const diff = await db.all(sql`SELECT count(*) AS n FROM ((${left} EXCEPT ALL ${right}) UNION ALL (${right} EXCEPT ALL ${left}))`);
  assert.equal(Number(diff[0]!['n']), 0, 'the same rows');
  const n = Number((await db.all(sql`SELECT count(*) AS n FROM read_parquet(${spliced})`))[0]!['n']);
  assert.equal(n, a.rows);
  // The segments' Bloom filters come along, and equality filters that probe them find every row.
  const blooms = await db.all(sql`SELECT count(bloom_filter_offset) AS n FROM parquet_metadata(${spliced})`);
  assert.ok(Number(blooms[0]!['n']) > 0, 'Bloom filters copied');
  for (const r of await db.all(sql`SELECT name, type, count(*) AS n FROM read_parquet(${spliced}) GROUP BY ALL`)) {
    const hit = await db.all(
      sql`SELECT count(*) AS n FROM read_parquet(${spliced}) WHERE name = ${String(r['name'])} AND type = ${String(r['type'])}`,
    );
    assert.equal(Number(hit[0]!['n']), Number(r['n']), `name ${r['name']}, type ${r['type']}`);
  }
  // What the mix makes sure of.
  const of = async (id: string) =>
    (await db.all(sql`SELECT output, has_children FROM read_parquet(${spliced}) WHERE id = ${id}`)).map(
      (r) => `${r['output']}/${r['has_children']}`,
    );
  assert.deepEqual(await of(uuidFor(3)), ['relogged/true'], 'the newer version only');
  assert.deepEqual(await of(uuidFor(102)), [], 'the deleted span is not exported');
  assert.deepEqual(
    (await of(uuidFor(101))).map((s) => s.split('/')[1]),
    ['false'],
    'the override applies',
  );
  assert.deepEqual(
    (await of(uuidFor(111))).map((s) => s.split('/')[1]),
    ['false'],
    'the override on a segment without dead rows applies',
  );
  assert.deepEqual(await of(uuidFor(200)), [], 'an expired trace is not exported');
  assert.equal((await of(uuidFor(201))).length, 1, 'its live neighbour is');
  assert.equal((await of(uuidFor(301))).length, 1, 'rows in memory are');
});

test('a file whose columns differ from the template is refused, not spliced', async (t) => {
  const dir = tempDir(t);
  const db = await Database.open({ connections: 1 });
  t.after(() => db.close());
  const tpl = join(dir, 'tpl.parquet');
  const other = join(dir, 'other.parquet');
  await db.run(sql`COPY (SELECT 1::BIGINT AS a, 'x' AS b) TO ${stringLiteral(tpl)} (FORMAT parquet)`);
  await db.run(sql`COPY (SELECT 1::INTEGER AS a, 'y' AS b) TO ${stringLiteral(other)} (FORMAT parquet)`);
  assert.throws(() => spliceParquet(join(dir, 'out.parquet'), [tpl, other]), SpliceMismatch);
  const notParquet = join(dir, 'x.parquet');
  writeFileSync(notParquet, 'not a parquet file at all');
  assert.throws(() => spliceParquet(join(dir, 'out2.parquet'), [tpl, notParquet]), SpliceMismatch);
  // Same columns, one more in the second file: kept columns only.
  const wider = join(dir, 'wider.parquet');
  await db.run(sql`COPY (SELECT 2::BIGINT AS a, 'z' AS b, 3.5 AS c) TO ${stringLiteral(wider)} (FORMAT parquet)`);
  assert.equal(spliceParquet(join(dir, 'out3.parquet'), [tpl, wider]), 2);
  const back = await db.all(sql`SELECT * FROM read_parquet(${join(dir, 'out3.parquet')}) ORDER BY a`);
  assert.deepEqual(
    back.map((r) => `${r['a']}${r['b']}`),
    ['1x', '2z'],
  );
});
