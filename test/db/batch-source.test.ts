// Guarantees of the table functions that hand batches to DuckDB (src/db/batch-source.ts):
// - two sources on one database read their own batches and seq lists, whichever registered first;
// - so a record store closed and opened again on the same database (as tests and scripts do) keeps
//   every row appended after the reopen: visible at once, sealed, and there after another reopen.
//   (With one function name per database, the second store's inserts read the first store's source
//   and inserted nothing, silently.)
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { BatchSource } from '../../src/db/batch-source.js';
import { Database } from '../../src/db/database.js';
import { int, raw, sql } from '../../src/query/sql.js';
import { RecordStore } from '../../src/storage/record-store.js';
import { ROWS_PROJECT, tempDir, toolRows } from '../support/helpers.js';

test('two sources on one database each read their own seqs', async (t) => {
  const db = await Database.open({ connections: 1 });
  t.after(() => db.close());
  const a = new BatchSource([]);
  const b = new BatchSource([]);
  const ca = await db.dedicated(a.functions);
  const cb = await db.dedicated(b.functions);
  const ka = a.addSeqs([1, 2, 3]);
  const kb = b.addSeqs([10, 20]);
  // The functions call back into the main thread: run polled, into a table.
  const sum = async (c: typeof ca, fn: string, key: number, table: string) => {
    await c.runPolled(sql`CREATE TABLE ${raw(table)} AS SELECT sum(seq) AS s FROM ${raw(fn)}(${int(key)})`);
    return Number((await c.all(sql`SELECT s FROM ${raw(table)}`))[0]!['s']);
  };
  assert.equal(await sum(cb, b.seqsFn, kb, 'sb'), 30);
  assert.equal(await sum(ca, a.seqsFn, ka, 'sa'), 6);
});

test('a record store opened again on the same database keeps the rows appended after the reopen', async (t) => {
  const dir = tempDir(t);
  const db = await Database.open({ tempDirectory: join(dir, 'tmp') });
  t.after(() => db.close());
  const first = await RecordStore.open(dir, db, { autoCompact: false });
  await first.append(toolRows(0, 10), true);
  await first.close({ seal: false });
  const second = await RecordStore.open(dir, db, { autoCompact: false });
  await second.seal();
  await second.append(toolRows(100, 10), true);
  assert.equal(await second.countScope(ROWS_PROJECT), 20);
  await second.seal();
  assert.equal(second.stats.sealedRows, 20);
  await second.close();
  // Closed here, before the database: after-hooks run in the order they were added, and a store closed
  // after its database hung or crashed the process now and then.
  const third = await RecordStore.open(dir, db, { autoCompact: false });
  try {
    assert.equal(await third.countScope(ROWS_PROJECT), 20);
  } finally {
    await third.close();
  }
});
