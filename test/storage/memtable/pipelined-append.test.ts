// Guarantees: an append resolves once its rows are in the log, before DuckDB has inserted them, and
// still every read that starts after it resolved sees them (reads wait for the inserts of appends
// acknowledged before they started); the same after a seal and across a reopen.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Database } from '../../../src/db/database.js';
import { RecordStore } from '../../../src/storage/record-store.js';
import { openRecordStore, ROWS_PROJECT, ROWS_RUN, tempDir, toolRows } from '../../support/helpers.js';
import { sql } from '../../../src/query/sql.js';

const P = ROWS_PROJECT;
const R = ROWS_RUN;
const rows = (from: number, n: number) => toolRows(from, n, { input: 'x'.repeat(200) });

test('a read that starts after an append resolved sees its rows, request after request', async (t) => {
  const { store } = await openRecordStore(t);
  let total = 0;
  for (let i = 0; i < 40; i++) {
    await store.append(rows(total, 500), i % 2 === 0);
    total += 500;
    assert.equal(await store.countScope(P, R), total, `after append ${i}`);
    if (i === 20) await store.seal();
  }
  // Replacing versions: the old ones are dead to the very next read.
  await store.append(
    rows(0, 500).map((r) => ({ ...r, name: 'v2' })),
    true,
  );
  assert.equal(await store.countScope(P, R), total);
  const found = await store.lookup(P, R, [rows(7, 1)[0]!.id]);
  assert.equal(found.length, 1);
  assert.equal(found[0]!['name'], 'v2');
});

test('a snapshot taken after settled() sees every acknowledged row', async (t) => {
  const { store } = await openRecordStore(t);
  for (let i = 0; i < 10; i++) await store.append(rows(i * 300, 300), false);
  await store.settled();
  const snap = store.snapshot();
  try {
    const src = snap.source({ projectId: P, runId: R, kinds: ['span'] });
    const [row] = await store.db.all(sql`SELECT count(*) AS n FROM ${src.sql}`);
    assert.equal(Number(row!['n']), 3000);
  } finally {
    snap.release();
  }
});

test('appends acknowledged without waiting for DuckDB come back after a reopen', async (t) => {
  const dir = tempDir(t);
  let db = await Database.open();
  let store = await RecordStore.open(dir, db, { autoCompact: false });
  for (let i = 0; i < 8; i++) await store.append(rows(i * 250, 250), true);
  await store.close({ seal: false });
  await db.close();
  db = await Database.open();
  store = await RecordStore.open(dir, db, { autoCompact: false });
  try {
    assert.equal(await store.countScope(P, R), 2000);
  } finally {
    await store.close();
    await db.close();
  }
});

test('pipelineDepth 0: an append resolves only once its rows are in DuckDB (a snapshot taken at once sees them)', async (t) => {
  const { store } = await openRecordStore(t, { pipelineDepth: 0 });
  for (let i = 0; i < 6; i++) {
    await store.append(rows(i * 400, 400), i % 2 === 0);
    const snap = store.snapshot();
    try {
      const src = snap.source({ projectId: P, runId: R, kinds: ['span'] });
      const [row] = await store.db.all(sql`SELECT count(*) AS n FROM ${src.sql}`);
      assert.equal(Number(row!['n']), (i + 1) * 400);
    } finally {
      snap.release();
    }
  }
});
