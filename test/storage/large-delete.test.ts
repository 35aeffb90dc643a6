// A delete of 250k seqs in one log entry (1% of 100M spans was 1.07M) is applied and replayed: the seqs
// were once spread into push() as arguments, which overflows the call stack past ~100k of them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Database } from '../../src/db/database.js';
import { RecordStore } from '../../src/storage/record-store.js';
import { openRecordStore, ROWS_PROJECT, ROWS_RUN, toolRows } from '../support/helpers.js';

const scope = { projectId: ROWS_PROJECT, runId: ROWS_RUN, kinds: ['span'] as const };
import { join } from 'node:path';
import { sql } from '../../src/query/sql.js';

test('a delete of 250,000 seqs (and as many childless marks) is applied, and replayed after a reopen', async (t) => {
  const { dir, db, store } = await openRecordStore(t);
  await store.append(toolRows(0, 10), true);
  const many = Array.from({ length: 250_000 }, (_, i) => 1_000 + i);
  await store.deleteSeqs(
    [1, ...many],
    many.map((q) => q + 2_000_000),
  );
  const live = async (s: RecordStore, d: Database) => {
    await s.settled();
    const snap = s.snapshot();
    try {
      const src = snap.source(scope);
      return Number((await d.all(sql`SELECT count(*) AS n FROM ${src.sql} r`))[0]!['n']);
    } finally {
      snap.release();
    }
  };
  assert.equal(await live(store, db), 9);
  // Reopened without a seal: the delete comes back from the write-ahead log.
  await store.close();
  const db2 = await Database.open({ tempDirectory: join(dir, 'tmp2') });
  const again = await RecordStore.open(dir, db2, { autoCompact: false });
  t.after(async () => {
    await again.close();
    await db2.close();
  });
  assert.equal(await live(again, db2), 9);
});
