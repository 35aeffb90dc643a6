// Guarantees: a close that does not seal (what the server does on SIGTERM) waits for no seal or merge:
// one under way is stopped and commits nothing, the rows in memory stay in the log, and the next open
// has every acknowledged row exactly once, the stopped merge's file gone.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Connection, Database } from '../../src/db/database.js';
import { loadManifest } from '../../src/storage/manifest/manifest.js';
import { RecordStore } from '../../src/storage/record-store.js';
import { sql } from '../../src/query/sql.js';
import { openRecordStore, ROWS_PROJECT, ROWS_RUN, toolRows } from '../support/helpers.js';
import { holdSql } from '../support/hold-sql.js';

function parquetUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    if (!existsSync(d)) return;
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (e.name.endsWith('.parquet')) out.push(join(d, e.name));
    }
  };
  walk(join(dir, 'records'));
  return out.sort();
}

async function liveCount(store: RecordStore): Promise<{ n: number; ids: number }> {
  return store.read(async (snap) => {
    const src = snap.source({ projectId: ROWS_PROJECT, runId: ROWS_RUN, kinds: ['span'] });
    const [r] = await store.db.all(sql`SELECT count(*) AS n, count(DISTINCT id) AS ids FROM ${src.sql}`);
    return { n: Number(r!['n']), ids: Number(r!['ids']) };
  });
}

test('close without sealing stops a merge under way and leaves rows in memory to the log', async (t) => {
  const { dir, db, store } = await openRecordStore(t);
  const per = 30_000;
  for (let i = 0; i < 4; i++) {
    await store.append(toolRows(i * per, per, { input: 'y'.repeat(200) }), true);
    await store.seal();
  }
  const inputs = parquetUnder(dir);
  assert.equal(inputs.length, 4);
  // Rows only in memory, and an update of a sealed row (its old version is dead in the log only).
  await store.append(toolRows(4 * per, 1000), true);
  await store.append(toolRows(5, 1, { name: 'updated' }), true);

  // The merge's COPY is held at its start, then let go while the close interrupts it.
  const hold = holdSql(t, Connection.prototype as never, (text) => text.startsWith('COPY (') && text.includes('read_parquet'));
  // Rejected or not, depending on where the interrupt lands: what counts is what it left.
  const merging = store.compact().catch(() => undefined);
  await hold.reached;
  const closing = store.close({ seal: false });
  hold.release();
  await closing;
  await merging;
  hold.restore();

  const manifest = loadManifest(dir);
  assert.deepEqual(
    manifest.segments.map((g) => join(dir, g.file)).sort(),
    inputs,
    'the stopped merge committed nothing and the rows in memory were not sealed',
  );
  assert.ok(readdirSync(join(dir, 'wal')).length > 0, 'the rows in memory are in the log');
  await db.close();

  const db2 = await Database.open({ tempDirectory: join(dir, 'tmp') });
  const again = await RecordStore.open(dir, db2, { autoCompact: false });
  try {
    assert.deepEqual(parquetUnder(dir), inputs, "the stopped merge's file is removed on open");
    assert.deepEqual(await liveCount(again), { n: 4 * per + 1000, ids: 4 * per + 1000 });
    const [row] = await again.lookup(ROWS_PROJECT, ROWS_RUN, [toolRows(5, 1)[0]!.id]);
    assert.equal(row?.name, 'updated5');
  } finally {
    await again.close();
    await db2.close();
  }
});

test('close without sealing stops a seal under way; the next open replays its log file', async (t) => {
  const { dir, db, store } = await openRecordStore(t);
  await store.append(toolRows(0, 50_000, { input: 'z'.repeat(200) }), true);
  const hold = holdSql(t, Connection.prototype as never, (text) => text.startsWith('COPY (') && text.includes('mem_'));
  const sealing = store.seal().catch(() => undefined);
  await hold.reached;
  const closing = store.close({ seal: false });
  hold.release();
  await closing;
  await sealing;
  hold.restore();
  assert.equal(loadManifest(dir).segments.length, 0, 'the stopped seal committed nothing');
  await db.close();

  const db2 = await Database.open({ tempDirectory: join(dir, 'tmp') });
  const again = await RecordStore.open(dir, db2, { autoCompact: false });
  try {
    assert.deepEqual(parquetUnder(dir), [], "the stopped seal's files are removed on open");
    assert.deepEqual(await liveCount(again), { n: 50_000, ids: 50_000 });
    await again.seal();
    assert.deepEqual(await liveCount(again), { n: 50_000, ids: 50_000 });
  } finally {
    await again.close();
    await db2.close();
  }
});
