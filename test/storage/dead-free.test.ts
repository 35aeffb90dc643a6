// Guarantees of reading segments without the dead-row filter (Snapshot.deadFreeSegments and
// assumeDeadFree, used by counts): a segment is read unfiltered only when no dead mark in its seq
// range is visible to the transaction the read runs in; a mark committed after that transaction began
// is unseen there (so is the new row a replacement commits with it); a transaction begun after it
// filters the segment; a replaced record shows its new version once, in memory and after a seal.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import type { WireRow } from '../../src/storage/record-store.js';
import { openRecordStore } from '../support/helpers.js';

const P = '11111111-1111-4111-8111-111111111111';
const R = '22222222-2222-4222-8222-222222222222';
const idOf = (k: number) => `00000000-0000-4000-8000-${String(k).padStart(12, '0')}`;

function rows(from: number, n: number, name = 'r'): WireRow[] {
  return Array.from({ length: n }, (_, i) => {
    const k = from + i;
    return { seq: 0, id: idOf(k), type: 'tool', project_id: P, run_id: R, trace_id: idOf(k), name: `${name}${k}`, input: 'x', created_at: 1_700_000_000_000_000 + k, updated_at: 0, is_complete: true, has_children: false };
  });
}

test('segments are read without the dead-row filter only while no dead mark of theirs is visible', async (t) => {
  const { dir, db, store } = await openRecordStore(t);
  await store.append(rows(0, 10), true);
  await store.seal();
  await store.append(rows(10, 10), true);
  await store.seal();
  await store.append(rows(20, 5), true);
  const scope = { projectId: P, runId: R, kinds: ['span'] as const };
  await store.settled(); // appends return before their insert: a snapshot taken directly waits for them
  const first = store.snapshot();
  const [a, b] = first.segmentsFor(scope).sort((x, y) => x.min_seq - y.min_seq).map((s) => s.file) as [string, string];
  first.release();

  /** Names of the live rows with this id, read in one transaction; `between` runs after it began. */
  const readIn = async (between: () => Promise<void>) => {
    await store.settled();
    const snap = store.snapshot();
    try {
      return await db.withConnection(async (c) => {
        snap.fixMemory();
        await c.run('BEGIN TRANSACTION');
        try {
          const free = await snap.deadFreeSegments(c);
          await between();
          snap.assumeDeadFree(free);
          const src = snap.source(scope);
          snap.assumeDeadFree(null);
          const got = await c.all(`SELECT name FROM ${src.sql} r WHERE id = $${src.params.length + 1}`, [...src.params, idOf(5)]);
          const total = await c.all(`SELECT count(*) AS n FROM ${src.sql} r`, src.params);
          return { free: [...free].sort(), names: got.map((r) => String(r['name'])), total: Number(total[0]!['n']) };
        } finally {
          await c.run('ROLLBACK');
        }
      });
    } finally {
      snap.release();
    }
  };

  const none = async () => {};
  const before = await readIn(none);
  assert.deepEqual(before.free, [a, b].sort(), 'no dead rows: both segments unfiltered');
  assert.deepEqual(before.names, ['r5']);
  assert.equal(before.total, 25);

  // A delete of record 5 (in segment a) committed after the transaction began (its mark written
  // straight into the dead table, as a delete's commit does): unseen there, so the row still counts.
  const seq5 = Number((await db.all(`SELECT seq FROM read_parquet($1) WHERE id = $2`, [join(dir, a), idOf(5)]))[0]!['seq']);
  const during = await readIn(() => db.run('INSERT INTO dead (seq) VALUES ($1)', [seq5]));
  assert.deepEqual(during.free, [a, b].sort());
  assert.deepEqual(during.names, ['r5']);
  assert.equal(during.total, 25);
  const gone = await readIn(none);
  assert.deepEqual(gone.free, [b], 'a transaction begun after the mark filters segment a');
  assert.deepEqual(gone.names, []);
  assert.equal(gone.total, 24);

  // Record 5 replaced through the store: segment a has a dead row now.
  await store.append(rows(5, 1, 'new'), true);

  // Afterwards segment a has a dead row: it is filtered, and the new version shows once.
  const after = await readIn(none);
  assert.deepEqual(after.free, [b]);
  assert.deepEqual(after.names, ['new5']);
  assert.equal(after.total, 25);

  // Sealed into a third segment, with the dead mark in the manifest: the same.
  await store.seal();
  const sealed = await readIn(none);
  assert.ok(!sealed.free.includes(a) && sealed.free.includes(b), 'a stays filtered while its dead row is stored');
  assert.deepEqual(sealed.names, ['new5']);
  assert.equal(sealed.total, 25);
});
