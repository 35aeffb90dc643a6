// Guarantees of the direct import path (Parquet and JSON lines exports straight into segments): the
// segments have the sealer's layout; importing a file again replaces its records (each id once, the
// old rows dead, then purged); a record logged before the import is replaced by it and one logged
// after wins over it, also across a seal and a reopen; reads while an import runs see whole batches.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tableFromArrays, tableToIPC } from 'apache-arrow';
import { test } from 'node:test';
import { Database } from '../../../src/db/database.js';
import { TraceStore } from '../../../src/engine/trace-store.js';
import { loadManifest } from '../../../src/storage/manifest/manifest.js';
import { NEAR_ORDER_GROUPS } from '../../../src/storage/segments/bulk-load.js';
import { COLUMN_NAMES } from '../../../src/record/record-columns.js';
import { everyKindTrace, openStore, tempDir } from '../../support/helpers.js';
import { sql } from '../../../src/query/sql.js';

type Fx = Awaited<ReturnType<typeof openStore>>;

/** A source folder with `n` traces of every kind, sealed, exported to `format`. */
async function exported(
  t: Parameters<typeof openStore>[0],
  n: number,
  format: 'parquet' | 'jsonl' | 'arrow' = 'parquet',
  output = 'first',
) {
  const src = await openStore(t);
  const traces = Array.from({ length: n }, (_, i) => ({ ...everyKindTrace(`t${i}`), id: uuidFor(i), output }));
  await src.store.logTraces(src.projectId, { log_stream_id: src.logStreamId, traces: traces as never });
  await src.store.flush();
  const file = join(tempDir(t), `all.${format}`);
  const { rows } = await src.store.data.exportFile(src.projectId, file, { format });
  return { src, file, rows };
}

const uuidFor = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

async function outputs(fx: Fx | { store: TraceStore; projectId: string }, ids: readonly string[]): Promise<string[]> {
  const rows = await fx.store.data.sql(
    `SELECT id, output FROM traces WHERE id IN (${ids.map((_, i) => `$${i + 1}`).join(', ')}) ORDER BY id`,
    [...ids],
  );
  return rows.map((r) => `${r['id']}=${r['output']}`);
}

async function totals(store: TraceStore): Promise<[number, number]> {
  const r = (
    await store.data.sql(
      'SELECT count(*) AS n, count(DISTINCT id) AS ids FROM (SELECT id FROM spans UNION ALL SELECT id FROM traces UNION ALL SELECT id FROM sessions)',
    )
  )[0]!;
  return [Number(r['n']), Number(r['ids'])];
}

test('a Parquet export is written straight into segments with the sealer layout', async (t) => {
  const { src, file, rows } = await exported(t, 6);
  const target = await openStore(t, {}, join(tempDir(t), 'b'));
  const res = await target.store.data.importFile(file, { project: 'test-project', logStream: 'default' });
  assert.equal(res.records, rows);
  assert.equal(target.store.records.stats.memRows, 0, 'nothing went through the memory tables');
  assert.equal(target.store.records.stats.sealedRows, rows);
  const db = await Database.open({ connections: 1 });
  t.after(() => db.close());
  const schemaOf = async (dir: string, kind: string) => {
    const seg = loadManifest(dir).segments.find((g) => g.kind === kind)!;
    const cols = await db.all(sql`SELECT name, type FROM parquet_schema(${join(dir, seg.file)}) WHERE name <> ${'duckdb_schema'}`);
    // Metric columns are numbered per folder: compared by the metric they hold.
    const names = new Map(Object.entries(loadManifest(dir).metric_ids).map(([n, id]) => [`m${id}`, `metric ${n}`]));
    return cols
      .map((c) => `${names.get(String(c['name'])) ?? c['name']}:${c['type']}`)
      .filter((c) => !/^(key|value|element|list|map|key_value):/.test(c));
  };
  for (const kind of ['span', 'trace', 'session']) {
    assert.deepEqual(
      await schemaOf(target.dir, kind),
      await schemaOf(src.dir, kind),
      `${kind}: the sealer's columns, shredded metrics included`,
    );
  }
  const seg = loadManifest(target.dir).segments.find((g) => g.kind === 'span')!;
  const cols = (await db.all(sql`DESCRIBE SELECT * FROM read_parquet(${join(target.dir, seg.file)}, hive_partitioning = false)`)).map((c) =>
    String(c['column_name']),
  );
  assert.deepEqual(cols.slice(0, COLUMN_NAMES.length), [...COLUMN_NAMES]);
  // Then the shredded metrics and the derived tag_set (src/record/record-columns.ts), last.
  assert.equal(cols[cols.length - 1], 'tag_set');
  assert.ok(cols.slice(COLUMN_NAMES.length, -1).every((c) => /^m\d+$/.test(c)) && cols.length > COLUMN_NAMES.length + 1);
  const order = await db.all(
    sql`SELECT epoch_us(created_at) AS c, id
        FROM read_parquet(${join(target.dir, seg.file)}, file_row_number = true, hive_partitioning = false) ORDER BY file_row_number`,
  );
  // The sealer's order: created_at, or nearly (no row more than NEAR_ORDER_GROUPS row groups' worth
  // of time behind the newest before it; seal.ts nearlyOrdered). The source's seal kept its rows'
  // arrival order (one row group), and the import kept the export's.
  const cs = order.map((r) => Number(r['c']));
  const groupUs = ((Math.max(...cs) - Math.min(...cs)) * 32_768) / cs.length;
  let newest = -Infinity;
  let behind = 0;
  for (const c of cs) {
    behind = Math.max(behind, newest - c);
    newest = Math.max(newest, c);
  }
  assert.ok(behind <= NEAR_ORDER_GROUPS * groupUs, `nearly in created_at order (a row ${behind} µs behind)`);
  const meta = await db.all(
    sql`SELECT DISTINCT compression FROM parquet_metadata(${join(target.dir, seg.file)}) WHERE path_in_schema = 'input'`,
  );
  assert.deepEqual(
    meta.map((m) => m['compression']),
    ['ZSTD'],
  );
});

for (const format of ['parquet', 'jsonl', 'arrow'] as const) {
  test(`importing a ${format} export again replaces its records: each id once, the old rows dead, then purged`, async (t) => {
    const { file, rows } = await exported(t, 5, format);
    // No background merges: they would purge the dead rows while the test counts them.
    const target = await openStore(t, { autoCompact: false } as never, join(tempDir(t), 'b'));
    await target.store.data.importFile(file, { project: 'test-project', logStream: 'default' });
    assert.deepEqual(await totals(target.store), [rows, rows]);
    await target.store.data.importFile(file, { project: 'test-project', logStream: 'default' });
    assert.deepEqual(await totals(target.store), [rows, rows], 'replaced, not duplicated');
    assert.equal(target.store.records.stats.dead, rows, "the first import's rows are dead");
    assert.equal(target.store.records.stats.memRows, 0);
    await target.store.maintenance.compact();
    await target.store.close();
    const again = await TraceStore.open(target.dir);
    t.after(() => again.close());
    assert.deepEqual(await totals(again), [rows, rows]);
    assert.equal(again.records.stats.dead, 0, 'a merge took the dead rows off the disk');
    assert.equal(again.records.stats.sealedRows, rows);
  });
}

test('an import replaces records logged before it (sealed or in memory); a record logged after it wins, across a seal and a reopen', async (t) => {
  const { file } = await exported(t, 4, 'parquet', 'imported');
  const target = await openStore(t, {}, join(tempDir(t), 'b'));
  const { store, projectId, logStreamId } = target;
  const log = (i: number, output: string) =>
    store.logTraces(projectId, {
      log_stream_id: logStreamId,
      traces: [{ id: uuidFor(i), name: `n${i}`, input: 'i', output, created_at: '2026-03-01T10:00:00.000Z', spans: [] }] as never,
    });
  await log(0, 'sealed-before');
  await store.flush();
  await log(1, 'logged-before');
  await log(9, 'other');
  const ids = [0, 1, 2, 3].map(uuidFor);
  await store.data.importFile(file, { project: 'test-project', logStream: 'default' });
  assert.deepEqual(
    await outputs(target, ids),
    ids.map((id) => `${id}=imported`),
  );
  // Logged after the import, into the memory table that was active while it ran.
  await log(2, 'logged-after');
  const expected = [`${ids[0]}=imported`, `${ids[1]}=imported`, `${ids[2]}=logged-after`, `${ids[3]}=imported`];
  assert.deepEqual(await outputs(target, ids), expected);
  await store.flush();
  assert.deepEqual(await outputs(target, ids), expected, 'sealed: the imported row stays dead');
  await log(3, 'logged-after-seal');
  expected[3] = `${ids[3]}=logged-after-seal`;
  await store.close();
  const again = await TraceStore.open(target.dir);
  t.after(() => again.close());
  assert.deepEqual(await outputs({ store: again, projectId }, ids), expected, 'after a reopen (the log replayed)');
  await again.flush();
  await again.maintenance.compact();
  assert.deepEqual(await outputs({ store: again, projectId }, ids), expected, 'after a seal and merges');
  const [n, distinct] = await totals(again);
  assert.equal(n, distinct, 'no id twice');
  // A later log still replaces an imported record whose id the memory tables forgot.
  await again.logTraces(projectId, {
    log_stream_id: logStreamId,
    traces: [{ id: ids[1], name: 'x', input: 'i', output: 'last', spans: [] }] as never,
  });
  assert.deepEqual(await outputs({ store: again, projectId }, [ids[1]!]), [`${ids[1]}=last`]);
});

test('reads while an import runs see whole batches, and afterwards agree with the source', async (t) => {
  const { src, file, rows } = await exported(t, 12);
  const target = await openStore(t, {}, join(tempDir(t), 'b'));
  const batchRows = 16;
  const seen = new Set<number>();
  let done = false;
  const importing = target.store.data
    .importFile(file, { project: 'test-project', logStream: 'default', batchRows })
    .finally(() => (done = true));
  while (!done) {
    const n = (await totals(target.store))[0];
    seen.add(n);
    await new Promise((r) => setImmediate(r));
  }
  await importing;
  for (const n of seen) assert.ok(n % batchRows === 0 || n === rows, `${n} records: whole batches only`);
  const question = async (store: TraceStore, projectId: string) => [
    (
      await store.count('span', projectId, {
        filters: [{ type: 'number', column_id: 'metrics/num_input_tokens', operator: 'gt', value: 5 }],
      } as never)
    ).total_count,
    (await store.count('trace', projectId, {} as never)).total_count,
    await store.data.sql('SELECT type, count(*) AS n, sum(num_input_tokens) AS tokens FROM spans GROUP BY type ORDER BY type'),
    (await store.search('span', projectId, { limit: 1000, sort: { column_id: 'created_at', ascending: true } } as never)).records.map(
      (r) => [r['id'], r['name'], r['output']],
    ),
  ];
  assert.deepEqual(await question(target.store, target.projectId), await question(src.store, src.projectId));
  assert.deepEqual(await totals(target.store), [rows, rows]);
});

test('after a reopen, records logged next get numbers above the imported ones (nothing they share dies with them)', async (t) => {
  const { file, rows } = await exported(t, 3);
  const dir = join(tempDir(t), 'b');
  const first = await openStore(t, {}, dir);
  await first.store.data.importFile(file, { project: 'test-project', logStream: 'default' });
  await first.store.close();
  const store = await TraceStore.open(dir);
  t.after(() => store.close());
  await store.logTraces(first.projectId, {
    log_stream_id: first.logStreamId,
    traces: [{ id: uuidFor(50), name: 'new', input: 'i', output: 'new', spans: [] }] as never,
  });
  // Importing again marks the first import's rows dead by their numbers: the new record must not share one.
  await store.data.importFile(file, { project: 'test-project', logStream: 'default' });
  assert.deepEqual(await outputs({ store, projectId: first.projectId }, [uuidFor(50)]), [`${uuidFor(50)}=new`]);
  assert.deepEqual(await totals(store), [rows + 2, rows + 2], 'the file once, and the new trace with its session');
});

test('an Arrow file laid out otherwise than an export (created_at as plain integers) goes through the log, value by value', async (t) => {
  const { store } = await openStore(t);
  const created = BigInt(Date.UTC(2026, 2, 1, 10)) * 1000n;
  const table = tableFromArrays({
    id: [uuidFor(1), uuidFor(2)],
    type: ['trace', 'llm'],
    name: ['a', 'b'],
    created_at: BigInt64Array.from([created, created + 1000n]),
  });
  const file = join(tempDir(t), 'plain.arrow');
  writeFileSync(file, tableToIPC(table, 'file'));
  const res = await store.data.importFile(file, { project: 'test-project', logStream: 'default' });
  assert.equal(res.records, 2);
  assert.equal(store.records.stats.memRows, 2, 'logged, not written as segments');
  const rows = await store.data.sql(
    'SELECT id, epoch_us(created_at) AS c FROM spans UNION ALL SELECT id, epoch_us(created_at) AS c FROM traces ORDER BY id',
  );
  assert.deepEqual(
    rows.map((r) => [r['id'], Number(r['c'])]),
    [
      [uuidFor(1), Number(created)],
      [uuidFor(2), Number(created) + 1000],
    ],
  );
});

test('records logged while an import commits (the same ids) leave one version of each id, also after a seal and a reopen', async (t) => {
  const { file } = await exported(t, 8, 'parquet', 'imported');
  const target = await openStore(t, {}, join(tempDir(t), 'b'));
  const { store, projectId, logStreamId } = target;
  const ids = Array.from({ length: 8 }, (_, i) => uuidFor(i));
  let done = false;
  const importing = store.data
    .importFile(file, { project: 'test-project', logStream: 'default', batchRows: 10 })
    .finally(() => (done = true));
  let round = 0;
  while (!done && round < 200) {
    const id = ids[round % ids.length]!;
    await store.logTraces(projectId, {
      log_stream_id: logStreamId,
      traces: [{ id, name: 'c', input: 'i', output: `concurrent-${round}`, spans: [] }] as never,
    });
    round++;
  }
  await importing;
  const once = async (s: TraceStore) => {
    const rows = await s.data.sql('SELECT id, count(*) AS n FROM traces GROUP BY id HAVING count(*) > 1');
    assert.deepEqual(rows, [], 'no trace id twice');
    assert.equal((await outputs({ store: s, projectId }, ids)).length, ids.length);
  };
  await once(store);
  const before = await outputs(target, ids);
  await store.flush();
  await once(store);
  assert.deepEqual(await outputs(target, ids), before, 'sealed: the same versions');
  await store.close();
  const again = await TraceStore.open(target.dir);
  t.after(() => again.close());
  await once(again);
  assert.deepEqual(await outputs({ store: again, projectId }, ids), before, 'reopened: the same versions');
  assert.ok(round > 0);
});
