// Guarantee: a direct import leaves each segment in created_at order as far as reads rely on it. Rows
// that come out of order are sorted (a created_at range at a time when there are more than `sortRows`:
// the file is still one sort's order); rows that come nearly in order (an export of merged segments)
// are written as they come (no row older than the newest before it by more than 4 row groups of time).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { Database } from '../../../src/db/database.js';
import { loadManifest } from '../../../src/storage/manifest/manifest.js';
import { openStore, parquetExportOf } from '../../support/helpers.js';
import { raw, sql } from '../../../src/query/sql.js';
import { stringLiteral } from '../../../src/db/sql-string.js';

const N = 240;
const uuidFor = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
const T0 = Date.UTC(2026, 2, 1, 10, 0, 0);

/** An export of N traces one second apart, rewritten in the order `orderBy` gives (our SQL, no user values). */
async function exportIn(t: TestContext, orderBy: string): Promise<{ file: string; keys: string[] }> {
  const traces = Array.from({ length: N }, (_, i) => ({
    type: 'trace',
    name: `t${i}`,
    input: 'q',
    output: 'a',
    created_at: new Date(T0 + i * 1000).toISOString(),
    id: uuidFor(i),
  }));
  const { dir, plain } = await parquetExportOf(t, traces);
  const file = join(dir, 'reordered.parquet');
  const db = await Database.open({});
  try {
    await db.run(
      sql`COPY (SELECT * FROM read_parquet(${stringLiteral(plain)}) ORDER BY ${raw(orderBy)}) TO ${stringLiteral(file)} (FORMAT parquet)`,
    );
    // The traces' keys (each trace also brings its session, a segment of its own).
    const keys = (
      await db.all(
        sql`SELECT epoch_us(created_at) AS c, id FROM read_parquet(${file}, file_row_number = true) WHERE type = 'trace' ORDER BY file_row_number`,
      )
    ).map((r) => `${r['c']}/${r['id']}`);
    return { file, keys };
  } finally {
    await db.close();
  }
}

/** Keys (created_at µs / id) of the one trace segment, in file order. */
async function segmentOf(dir: string): Promise<{ keys: string[] }> {
  const segs = loadManifest(dir).segments.filter((s) => s.kind === 'trace');
  assert.equal(segs.length, 1, 'one segment for the batch');
  const db = await Database.open({});
  try {
    const rows = await db.all(
      sql`SELECT epoch_us(created_at) AS c, id
          FROM read_parquet(${join(dir, segs[0]!.file)}, file_row_number = true, hive_partitioning = false) ORDER BY file_row_number`,
    );
    return { keys: rows.map((r) => `${r['c']}/${r['id']}`) };
  } finally {
    await db.close();
  }
}

const sortedKeys = (keys: readonly string[]) => [...keys].sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));

test('rows in reverse order are sorted, in created_at ranges of sortRows, into one sorted segment', async (t) => {
  const { file, keys } = await exportIn(t, 'created_at DESC');
  const fx = await openStore(t, { rowGroupSize: 8, autoCompact: false });
  const res = await fx.store.data.importFile(file, { project: 'test-project', logStream: 'default', sortRows: 50 });
  assert.equal(res.records, 2 * N, 'the traces and their sessions');
  const seg = await segmentOf(fx.dir);
  assert.notDeepEqual(keys, sortedKeys(keys), 'the file is out of order');
  assert.deepEqual(seg.keys, sortedKeys(keys), 'the segment is in created_at, id order');
});

test('rows nearly in order (3-second buckets reversed) are written as they come', async (t) => {
  // Out of order by at most 2 s, with 8 rows (8 s) to a row group: well within the 4 row groups allowed.
  const { file, keys } = await exportIn(t, 'epoch_us(created_at) // 3000000, created_at DESC');
  const fx = await openStore(t, { rowGroupSize: 8, autoCompact: false });
  await fx.store.data.importFile(file, { project: 'test-project', logStream: 'default' });
  const seg = await segmentOf(fx.dir);
  assert.notDeepEqual(keys, sortedKeys(keys), 'the file is out of order');
  assert.deepEqual(seg.keys, keys, 'the segment keeps the file order');
  // Reads see every record the same either way.
  const rows = await fx.store.data.sql('SELECT count(*) AS n, min(created_at) AS lo FROM traces');
  assert.equal(Number(rows[0]!['n']), N);
});

test('rows further out of order than 4 row groups of time are sorted', async (t) => {
  // Out of order by up to 29 s, with 1 row (1 s) to a row group: past the 4 row groups allowed.
  const { file, keys } = await exportIn(t, 'epoch_us(created_at) // 30000000, created_at DESC');
  const fx = await openStore(t, { rowGroupSize: 1, autoCompact: false });
  await fx.store.data.importFile(file, { project: 'test-project', logStream: 'default' });
  const seg = await segmentOf(fx.dir);
  assert.deepEqual(seg.keys, sortedKeys(keys));
});
