// A delete of 250k seqs in one log entry (1% of 100M spans was 1.07M) is applied and replayed: the seqs
// were once spread into push() as arguments, which overflows the call stack past ~100k of them. A large
// delete's seqs are packed in the log entry and the manifest, and must come back from both.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { Database } from '../../src/db/database.js';
import { RecordStore } from '../../src/storage/record-store.js';
import { openRecordStore, ROWS_PROJECT, ROWS_RUN, toolRows } from '../support/helpers.js';

const scope = { projectId: ROWS_PROJECT, runId: ROWS_RUN, kinds: ['span'] as const };
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from '../../src/query/sql.js';

async function live(s: RecordStore, d: Database): Promise<number> {
  await s.settled();
  const snap = s.snapshot();
  try {
    return Number((await d.all(sql`SELECT count(*) AS n FROM ${snap.source(scope).sql} r`))[0]!['n']);
  } finally {
    snap.release();
  }
}

test('a delete of 250,000 seqs (and as many childless marks) is applied, and replayed after a reopen', async (t) => {
  const { dir, db, store } = await openRecordStore(t);
  await store.append(toolRows(0, 10), true);
  const many = Array.from({ length: 250_000 }, (_, i) => 1_000 + i);
  await store.deleteSeqs(
    [1, ...many],
    many.map((q) => q + 2_000_000),
  );
  assert.equal(await live(store, db), 9);
  // Reopened without a seal: the delete comes back from the write-ahead log.
  await store.close();
  const { again, db2 } = await reopen(t, dir);
  assert.equal(await live(again, db2), 9);
});

test('a large delete of sealed rows reaches the manifest packed, and the rows stay deleted after a seal and a reopen', async (t) => {
  const { dir, db, store } = await openRecordStore(t);
  await store.append(toolRows(0, 2_000), true);
  await store.seal();
  const snap = store.snapshot();
  const seqs = (await db.all(sql`SELECT seq FROM ${snap.source(scope).sql} r ORDER BY seq`)).map((r) => Number(r['seq']));
  snap.release();
  assert.equal(seqs.length, 2_000);
  await store.deleteSeqs(seqs.filter((_, i) => i % 3 !== 0));
  assert.equal(await live(store, db), 667);
  await store.seal();
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { format: number; dead_packed?: string };
  assert.equal(manifest.format, 3);
  assert.equal(typeof manifest.dead_packed, 'string');
  await store.close();
  const { again, db2 } = await reopen(t, dir);
  assert.equal(await live(again, db2), 667);
  assert.equal(again.stats.dead, 1_333);
});

/** The closed store in `dir` opened again on a database of its own (closed after the test). */
async function reopen(t: TestContext, dir: string) {
  const db2 = await Database.open({ tempDirectory: join(dir, 'tmp2') });
  const again = await RecordStore.open(dir, db2, { autoCompact: false });
  t.after(async () => {
    await again.close();
    await db2.close();
  });
  return { again, db2 };
}
