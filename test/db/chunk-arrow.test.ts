// Guarantees: the buffer-level chunk converter gives the same Arrow values as the generic one for
// every type it covers, nulls included (strings of 12 and 13 bytes sit on both sides of DuckDB's
// inline limit; lists and maps with null and empty entries), over several chunks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChunkToArrow } from '../../src/db/chunk-arrow.js';
import { Database } from '../../src/db/database.js';
import { ArrowConverter } from '../../src/db/result-arrow.js';
import { sql } from '../../src/query/sql.js';

const QUERY = sql`SELECT
  CASE WHEN i % 7 = 0 THEN NULL ELSE i::BIGINT * 1000000007 END AS big,
  CASE WHEN i % 5 = 0 THEN NULL ELSE i::INTEGER - 2000 END AS int,
  CASE WHEN i % 3 = 0 THEN NULL ELSE i / 7.0 END AS dbl,
  CASE WHEN i % 4 = 0 THEN NULL ELSE i % 2 = 0 END AS flag,
  CASE WHEN i % 6 = 0 THEN NULL ELSE make_timestamp(1700000000000000 + i * 1000003) END AS ts,
  CASE WHEN i % 9 = 0 THEN NULL WHEN i % 2 = 0 THEN repeat('é', 6) ELSE 'x' || repeat('y', (i % 30)::INTEGER) END AS txt,
  CASE WHEN i % 8 = 0 THEN NULL WHEN i % 8 = 1 THEN []::VARCHAR[] ELSE ['a' || i, NULL, repeat('z', 13)] END AS tags,
  CASE WHEN i % 10 = 0 THEN NULL WHEN i % 10 = 1 THEN MAP {}::MAP(VARCHAR, DOUBLE) ELSE MAP {'k' || i: i / 3.0, 'long-key-over-12': NULL} END AS metrics,
  CASE WHEN i % 11 = 0 THEN NULL ELSE MAP {'env': CASE WHEN i % 2 = 0 THEN NULL ELSE 'v' || i END} END AS meta
FROM range(5000) t(i)`;

test('the fast converter agrees with the generic one, nulls and several chunks included', async (t) => {
  const db = await Database.open({ connections: 1 });
  t.after(() => db.close());
  let fast: ChunkToArrow | null = null;
  let slow: ArrowConverter | undefined;
  let chunks = 0;
  for await (const { names, types, chunk } of db.stream(QUERY)) {
    fast ??= ChunkToArrow.create(names, types);
    slow ??= new ArrowConverter(names, types);
    assert.ok(fast, 'every column type is covered');
    const a = fast.batch(chunk!);
    const b = slow.batch(chunk!);
    assert.equal(a.numRows, chunk!.rowCount);
    assert.deepEqual(
      a.schema.fields.map((f) => String(f.type)),
      b.schema.fields.map((f) => String(f.type)),
    );
    const json = (batch: typeof a) =>
      JSON.stringify(
        [...batch].map((r) => r.toJSON()),
        (_k, v) => (typeof v === 'bigint' ? v.toString() : v),
      );
    assert.equal(json(a), json(b));
    chunks++;
  }
  assert.ok(chunks > 1, 'several chunks');
});
