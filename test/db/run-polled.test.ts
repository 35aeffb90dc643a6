// Guarantees: runPolled (how memory-table inserts run: DuckDB's workers do the work while JS checks for
// the end) gives the same rows as run(), inside a transaction too; its errors reject as StorageError and
// leave the connection usable; and with no worker thread (threads = 1) it still finishes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BatchSource } from '../../src/db/batch-source.js';
import { Database } from '../../src/db/database.js';
import { StorageError } from '../../src/errors.js';
import { RECORD_COLUMNS } from '../../src/record/record-columns.js';
import { int, raw, sql } from '../../src/query/sql.js';

for (const threads of [2, 1]) {
  test(`runPolled inserts from a table function, commits and rolls back as run() does (threads: ${threads})`, {
    timeout: 60_000,
  }, async (t) => {
    const db = await Database.open({ threads, connections: 1 });
    t.after(() => db.close());
    const source = new BatchSource(RECORD_COLUMNS);
    const conn = await db.dedicated(source.functions);
    await conn.run(sql`CREATE TABLE s (seq BIGINT, clock BIGINT)`);
    // More than one DuckDB vector (2,048 rows), so the table function is called back several times.
    const n = 10_000;
    const seqs = Array.from({ length: n }, (_, i) => i + 1);
    const key = source.addSeqs(
      seqs,
      seqs.map((q) => q * 10),
    );
    await conn.run(sql`BEGIN TRANSACTION`);
    await conn.runPolled(sql`INSERT INTO s SELECT seq, clock FROM ${raw(source.seqsFn)}(${int(key)})`);
    await conn.run(sql`COMMIT`);
    source.release(key);
    const [row] = await conn.all(sql`SELECT count(*) AS n, sum(seq) AS q, sum(clock) AS c FROM s`);
    assert.equal(Number(row!['n']), n);
    assert.equal(Number(row!['q']), (n * (n + 1)) / 2);
    assert.equal(Number(row!['c']), (10 * n * (n + 1)) / 2);

    const again = source.addSeqs([7], [70]);
    await conn.run(sql`BEGIN TRANSACTION`);
    await conn.runPolled(sql`INSERT INTO s SELECT seq, clock FROM ${raw(source.seqsFn)}(${int(again)})`);
    await conn.run(sql`ROLLBACK`);
    source.release(again);
    assert.equal(Number((await conn.all(sql`SELECT count(*) AS n FROM s`))[0]!['n']), n, 'the rolled-back row is gone');
  });

  test(`runPolled rejects with the statement's error and the connection goes on (threads: ${threads})`, { timeout: 60_000 }, async (t) => {
    const db = await Database.open({ threads, connections: 1 });
    t.after(() => db.close());
    const conn = await db.dedicated();
    await conn.run(sql`CREATE TABLE u (x INTEGER PRIMARY KEY)`);
    await conn.runPolled(sql`INSERT INTO u SELECT range::INTEGER FROM range(5000)`);
    // Fails while it executes (a duplicate key), not when it is prepared.
    await assert.rejects(
      conn.runPolled(sql`INSERT INTO u SELECT (range % 3)::INTEGER + 4000 FROM range(5000)`),
      (e: unknown) => e instanceof StorageError && /constraint|duplicate/i.test((e as Error).message),
    );
    await assert.rejects(
      conn.runPolled(sql`INSERT INTO nowhere VALUES (1)`),
      (e: unknown) => e instanceof StorageError && /nowhere/.test((e as Error).message),
    );
    assert.equal(Number((await conn.all(sql`SELECT count(*) AS n FROM u`))[0]!['n']), 5000);
  });
}
