// Guarantees: work queued with afterStatementsInFlight waits for every statement already started or
// queued, and not for statements started after it (so merged segments are deleted as soon as no
// query planned over them can still be reading them, and never while one is).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { join } from 'node:path';
import { Database } from '../../src/db/database.js';
import { stringLiteral } from '../../src/db/sql-string.js';
import { sql } from '../../src/query/sql.js';
import { tempDir } from '../support/helpers.js';

test('afterStatementsInFlight waits for earlier statements only', async (t) => {
  const db = await Database.open({ connections: 2 });
  t.after(() => db.close());
  const events: string[] = [];
  let slowDone = false;
  // Slow enough to still be running when the callback is queued and after a quick statement ends.
  const slow = db.all(sql`SELECT count(*) AS n FROM range(300000000) t(x) WHERE x % 7 = 3`).then(() => (slowDone = true));
  db.afterStatementsInFlight(() => events.push('retired'));
  assert.equal(events.length, 0, 'not called while an earlier statement runs');
  await db.all(sql`SELECT 1 AS one`); // started after: does not hold the callback back, nor release it
  assert.equal(slowDone, false, 'the slow statement is still running (else this test proves nothing)');
  assert.equal(events.length, 0);
  await slow;
  assert.deepEqual(events, ['retired']);
  // With nothing in flight it runs at once.
  db.afterStatementsInFlight(() => events.push('idle'));
  assert.equal(events.at(-1), 'idle');
});

test('a failing statement releases what waits for it', async (t) => {
  const db = await Database.open();
  t.after(() => db.close());
  let called = false;
  const failing = db.all(sql`SELECT * FROM no_such_table`);
  db.afterStatementsInFlight(() => (called = true));
  await assert.rejects(failing);
  assert.equal(called, true);
});

test("columnNames gives a query's columns without running it, and a Parquet source's whose path is a parameter", async (t) => {
  const db = await Database.open();
  t.after(() => db.close());
  const dir = tempDir(t);
  const file = join(dir, 'f.parquet');
  await db.run(sql`COPY (SELECT 1 AS a, 'x' AS b, list_value(2.5) AS c) TO ${stringLiteral(file)} (FORMAT parquet)`);
  await db.withConnection(async (conn) => {
    // The path as a parameter: its columns are known only once bound and run.
    assert.deepEqual(await conn.columnNames(sql`SELECT * FROM read_parquet(${file})`), ['a', 'b', 'c']);
    await conn.run(sql`CREATE TEMP TABLE t AS SELECT range AS x, 'p' || (range % 3) AS p FROM range(10)`);
    const q = sql`SELECT COLUMNS(lambda c: c <> 'x'), x * 2 AS y FROM t WHERE p = ${'p1'} ORDER BY x`;
    assert.deepEqual(await conn.columnNames(q), ['p', 'y']);
    // Nothing ran: a statement whose run fails (a cast of these values) still gives its columns.
    assert.deepEqual(await conn.columnNames(sql`SELECT (p || 'z')::INTEGER AS bad FROM t WHERE p = ${'p1'}`), ['bad']);
  });
});
