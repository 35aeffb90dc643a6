// Guarantees: a reader's snapshot pins every file and memory table it names from the moment it is
// taken (not from when its first statement starts): merges and seals that replace them meanwhile do
// not delete them under it, its lookups keep answering, and they go once it is released. Every
// statement over a snapshot sees the same versions, also when a write was half-way into DuckDB when
// it was taken.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { openRecordStore, ROWS_PROJECT, ROWS_RUN, toolRows } from '../../support/helpers.js';
import { waitFor } from '../../support/wait-for.js';
import { sql } from '../../../src/query/sql.js';

const P = ROWS_PROJECT;
const R = ROWS_RUN;
const rows = (from: number, n: number) => toolRows(from, n);

test('a lookup planned before a merge answers from the files it planned over; they go after it is released', async (t) => {
  const { dir, db, store } = await openRecordStore(t);
  for (let i = 0; i < 4; i++) {
    await store.append(rows(i * 10, 10), true);
    await store.seal();
  }
  const snap = store.snapshot();
  const planned = snap.segmentsFor({ projectId: P, runId: R, kinds: ['span'] }).map((s) => join(dir, s.file));
  assert.equal(planned.length, 4);
  assert.equal(await store.compact(), 1);
  // Work queued behind readers now (after the merge queued the inputs' deletion) waits for the snapshot.
  let drained = false;
  db.afterStatementsInFlight(() => (drained = true));
  assert.equal(drained, false, "the snapshot holds back the merged inputs' deletion");
  for (const f of planned) assert.ok(existsSync(f), 'a merged input stays while a snapshot names it');
  const found = await snap.lookup(P, R, [rows(25, 1)[0]!.id], false);
  assert.equal(found.length, 1, 'the pinned snapshot still finds the record in the old files');
  snap.release();
  assert.equal(drained, true, 'released: the deletion may go');
  await waitFor(() => planned.every((f) => !existsSync(f)), { what: 'the merged inputs to be deleted once the snapshot is released' });
  assert.equal((await store.lookup(P, R, [rows(25, 1)[0]!.id])).length, 1, 'and the merged file answers');
});

test('a memory table sealed while a snapshot names it stays queryable through that snapshot', async (t) => {
  const { store } = await openRecordStore(t);
  await store.append(rows(0, 5), true);
  await store.settled(); // appends return before their insert: a snapshot taken directly waits for them
  const snap = store.snapshot();
  await store.seal();
  const src = snap.source({ projectId: P, runId: R, kinds: ['span'] });
  const [row] = await store.db.all(sql`SELECT count(*) AS n FROM ${src.sql}`);
  assert.equal(Number(row!['n']), 5);
  snap.release();
  assert.equal(await store.countScope(P, R), 5);
});

test('an update replaces the old version atomically: every read sees exactly one version', async (t) => {
  const { store } = await openRecordStore(t);
  await store.append(rows(0, 3), true);
  await store.seal();
  const reads: Promise<number>[] = [];
  for (let v = 0; v < 20; v++) {
    const next = rows(0, 3).map((r) => ({ ...r, name: `v${v}` }));
    reads.push(store.countScope(P, R));
    await store.append(next, v % 2 === 0);
    reads.push(store.countScope(P, R));
  }
  for (const n of await Promise.all(reads)) assert.equal(n, 3);
});

test('a snapshot taken while a replacing append is still going into DuckDB sees the same versions in every statement', async (t) => {
  const { db, store } = await openRecordStore(t);
  await store.append(rows(0, 50), true);
  await store.seal();
  await store.append(rows(50, 50), true);
  await store.settled();
  const versions = async (snap: ReturnType<typeof store.snapshot>) => {
    const src = snap.source({ projectId: P, runId: R, kinds: ['span'] });
    return (await db.all(sql`SELECT id, seq FROM ${src.sql} ORDER BY id`)).map((r) => `${r['id']}@${r['seq']}`);
  };
  for (let round = 0; round < 10; round++) {
    const before = store.lastSeq;
    // Replaces every record, sealed and in memory: old versions marked dead, new ones inserted.
    const append = store.append(
      rows(0, 100).map((r) => ({ ...r, name: `v${round}` })),
      round % 2 === 0,
    );
    // The entry is taken (seqs given) but its insert has not committed yet.
    while (store.lastSeq === before) await new Promise((r) => setImmediate(r));
    const snap = store.snapshot();
    try {
      const first = await versions(snap);
      await append;
      await store.settled();
      const second = await versions(snap);
      assert.equal(first.length, 100, `round ${round}: one version of each record`);
      assert.deepEqual(second, first, `round ${round}: the same versions before and after the insert committed`);
    } finally {
      snap.release();
    }
    if (round === 5) await store.seal();
  }
});

test('a merge keeps its inputs in time order, each row once, dead rows left out', async (t) => {
  const { dir, store } = await openRecordStore(t);
  for (let i = 0; i < 4; i++) {
    await store.append(rows(i * 100, 100), true);
    await store.seal();
  }
  await store.deleteSeqs([5, 150]);
  // Merges purge only tombstones in the manifest: the seal of the delete's log file puts them there.
  await store.seal();
  assert.equal(await store.compact(), 1);
  const snap = store.snapshot();
  try {
    const [seg] = snap.segmentsFor({ projectId: P, runId: R, kinds: ['span'] });
    const got = await store.db.all(
      sql`SELECT name FROM read_parquet(${join(dir, seg!.file)}, file_row_number = true) ORDER BY file_row_number`,
    );
    const expected = Array.from({ length: 400 }, (_, k) => `r${k}`).filter((_, k) => k !== 4 && k !== 149);
    assert.deepEqual(
      got.map((r) => r['name']),
      expected,
    );
  } finally {
    snap.release();
  }
});
