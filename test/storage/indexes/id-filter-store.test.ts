// Guarantees of a store using its id filter (src/storage/indexes/store-id-filter.ts through the id
// index): a record re-logged with the id of a sealed one replaces it, exactly, across seals, a merge,
// a delete and reopens from the filter's checkpoint, from a stale one, and without one (a folder of an
// earlier version), and the checkpoint is written back.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Database } from '../../../src/db/database.js';
import { CHECKPOINT, StoreIdFilter } from '../../../src/storage/indexes/store-id-filter.js';
import { RecordStore } from '../../../src/storage/record-store.js';
import { ROWS_PROJECT, ROWS_RUN, rowId, tempDir, toolRows } from '../../support/helpers.js';

const OPTIONS = { autoCompact: false, idCheckpointAfter: 1 };

/** Each asked row's live versions, by name: exactly one each when replacing works. */
async function names(store: RecordStore, ks: readonly number[]): Promise<Map<string, string[]>> {
  const rows = await store.lookup(
    ROWS_PROJECT,
    ROWS_RUN,
    ks.map((k) => rowId(k)),
  );
  const out = new Map<string, string[]>();
  for (const r of rows) out.set(r.id, [...(out.get(r.id) ?? []), String(r.name)]);
  return out;
}

test('re-logged sealed ids replace their records across seals, a merge, a delete and reopens with and without the checkpoint', async (t) => {
  const dir = tempDir(t);
  // Each open on its own database (a store's tables live there until it is closed).
  const open = async (options: typeof OPTIONS) => {
    const db = await Database.open({ tempDirectory: join(dir, 'tmp') });
    t.after(() => db.close());
    return RecordStore.open(dir, db, options);
  };
  let store = await open(OPTIONS);
  for (let i = 0; i < 3; i++) {
    await store.append(toolRows(i * 2_000, 2_000), true);
    await store.seal();
  }
  await store.idFilterSettled();
  assert.ok(existsSync(join(dir, CHECKPOINT)), 'checkpoint written');
  assert.equal(store.jsSizes()['idFilterUncovered'], 0);
  // Updates of sealed records in every segment, and new records.
  await store.append([...toolRows(100, 50, { name: 'v2-' }), ...toolRows(3_000, 10, { name: 'v2-' }), ...toolRows(9_000, 10)], true);
  assert.equal(await store.countScope(ROWS_PROJECT, ROWS_RUN), 6_010);
  await store.close();

  const expectOne = async (s: RecordStore, k: number, name: string) => {
    const got = (await names(s, [k])).get(rowId(k));
    assert.deepEqual(got, [name], `row ${k}`);
  };
  store = await open(OPTIONS);
  await expectOne(store, 120, 'v2-120');
  await store.append(toolRows(5_500, 1, { name: 'v3-' }), true);
  await store.append(toolRows(120, 1, { name: 'v3-' }), true);
  assert.equal(await store.countScope(ROWS_PROJECT, ROWS_RUN), 6_010);
  await store.seal();
  // A merge removes segments: their ids must still be found in its output.
  assert.ok((await store.compact()) > 0, 'merged');
  await store.append(toolRows(4_500, 1, { name: 'v4-' }), true);
  await store.append(toolRows(5_500, 1, { name: 'v4-' }), true);
  await expectOne(store, 4_500, 'v4-4500');
  await expectOne(store, 5_500, 'v4-5500');
  // A deleted record logged again is one record.
  const [gone] = await store.lookup(ROWS_PROJECT, ROWS_RUN, [rowId(10)]);
  await store.deleteSeqs([Number(gone!.seq)]);
  assert.equal(await store.countScope(ROWS_PROJECT, ROWS_RUN), 6_009);
  await store.append(toolRows(10, 1, { name: 'back-' }), true);
  assert.equal(await store.countScope(ROWS_PROJECT, ROWS_RUN), 6_010);
  await store.seal();
  await store.idFilterSettled();
  await store.close();

  // A folder without the checkpoint (an earlier version's): same answers, and it is written back.
  rmSync(join(dir, CHECKPOINT));
  store = await open(OPTIONS);
  await store.append([...toolRows(10, 1, { name: 'again-' }), ...toolRows(1_999, 1, { name: 'again-' })], true);
  await expectOne(store, 10, 'again-10');
  await expectOne(store, 1_999, 'again-1999');
  await expectOne(store, 120, 'v3-120');
  assert.equal(await store.countScope(ROWS_PROJECT, ROWS_RUN), 6_010);
  await store.idFilterSettled();
  assert.ok(existsSync(join(dir, CHECKPOINT)), 'checkpoint written back');
  const saved = statSync(join(dir, CHECKPOINT)).mtimeMs;
  await store.close();

  // A checkpoint that misses a segment sealed after it (as after a crash): that segment is covered
  // again at the next open. Here the store saw too few new ids to save it again.
  store = await open({ ...OPTIONS, idCheckpointAfter: 1 << 30 });
  await store.append(toolRows(7_000, 500), true);
  await store.seal();
  await store.close();
  assert.equal(statSync(join(dir, CHECKPOINT)).mtimeMs, saved, 'not saved: it missed too few ids');
  store = await open(OPTIONS);
  await store.append([...toolRows(7_100, 1, { name: 'late-' }), ...toolRows(20, 1, { name: 'late-' })], true);
  await expectOne(store, 7_100, 'late-7100');
  await expectOne(store, 20, 'late-20');
  assert.equal(await store.countScope(ROWS_PROJECT, ROWS_RUN), 6_510);
  await store.close();
});

test("a store only asked questions leaves the checkpoint's bits on disk; the first write reads them", async (t) => {
  const dir = tempDir(t);
  const open = async () => {
    const db = await Database.open({ tempDirectory: join(dir, 'tmp') });
    t.after(() => db.close());
    return RecordStore.open(dir, db, OPTIONS);
  };
  let store = await open();
  for (let i = 0; i < 2; i++) {
    await store.append(toolRows(i * 1_000, 1_000), true);
    await store.seal();
  }
  await store.idFilterSettled();
  await store.close();
  store = await open();
  assert.equal(await store.countScope(ROWS_PROJECT, ROWS_RUN), 2_000);
  assert.deepEqual((await names(store, [5])).get(rowId(5)), ['r5']);
  assert.equal(store.jsSizes()['idStoreFilterBytes'], 0, 'not read by questions');
  await store.append(toolRows(5, 1, { name: 'v2-' }), true);
  assert.ok(store.jsSizes()['idStoreFilterBytes']! > 0, 'read by the first write');
  assert.equal(await store.countScope(ROWS_PROJECT, ROWS_RUN), 2_000, 'the stored id was found: replaced, not added');
  await store.close();
});

test('a merge before a close is named in the checkpoint: the next open hashes no segment again', async (t) => {
  const dir = tempDir(t);
  // idCheckpointAfter 2,000: above the ids added since the first save, so only a merge saves again.
  const open = async (idCheckpointAfter = 2_000) => {
    const db = await Database.open({ tempDirectory: join(dir, 'tmp') });
    t.after(() => db.close());
    return RecordStore.open(dir, db, { autoCompact: false, idCheckpointAfter });
  };
  /** The checkpoint names exactly the segments listed now (so an open finds every one covered). */
  const namesListed = () => {
    const segments = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')).segments as { file: string }[];
    const named = StoreIdFilter.load(dir)!.covered;
    assert.deepEqual([...named.keys()].sort(), segments.map((s) => s.file).sort());
    assert.equal(
      [...named.values()].reduce((a, b) => a + b, 0),
      3_000,
    );
  };
  let store = await open();
  for (let i = 0; i < 6; i++) {
    await store.append(toolRows(i * 500, 500), true);
    await store.seal();
  }
  await store.idFilterSettled();
  assert.ok((await store.compact()) > 0, 'merged');
  await store.idFilterSettled();
  await store.close();
  namesListed();
  // A process that merged and closed without saving (here: its threshold is never reached) leaves a
  // checkpoint naming segments merged away; the next open covers the merged segment once, and the
  // checkpoint it saves names the listed segments only.
  store = await open();
  for (let i = 0; i < 3; i++) {
    await store.append(toolRows(i * 500, 500, { name: 'v2-' }), true);
    await store.seal();
  }
  await store.idFilterSettled();
  await store.close();
  store = await open(1 << 30);
  assert.ok((await store.compact()) > 0, 'merged again');
  await store.close();
  store = await open();
  await store.idFilterSettled();
  await store.close();
  namesListed();
});

test('after an open the filter covers what its checkpoint missed only once questions pause; re-logged ids replace exactly meanwhile', async (t) => {
  const dir = tempDir(t);
  const open = async (options: Record<string, unknown>) => {
    const db = await Database.open({ tempDirectory: join(dir, 'tmp') });
    t.after(() => db.close());
    return RecordStore.open(dir, db, options as never);
  };
  let store = await open(OPTIONS);
  for (let i = 0; i < 2; i++) {
    await store.append(toolRows(i * 2_000, 2_000), true);
    await store.seal();
  }
  await store.close();
  // No checkpoint: every segment is left for the background to cover.
  rmSync(join(dir, CHECKPOINT), { force: true });
  store = await open({ ...OPTIONS, mergePauseMs: 300 });
  // Questions every few ms for 0.9 s: the cover waits (without the wait 4,000 ids take a turn or two).
  const until = performance.now() + 900;
  while (performance.now() < until) {
    await store.countScope(ROWS_PROJECT, ROWS_RUN);
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.equal(store.jsSizes()['idFilterUncovered'], 2, 'nothing covered while questions come');
  // Writes meanwhile ask the segments' own filters: a re-logged id still replaces its sealed record.
  await store.append(toolRows(1_500, 1, { name: 'again' }), true);
  assert.deepEqual((await names(store, [1_500])).get(rowId(1_500)), ['again1500']);
  assert.equal(await store.countScope(ROWS_PROJECT, ROWS_RUN), 4_000);
  await store.idFilterSettled();
  assert.equal(store.jsSizes()['idFilterUncovered'], 0, 'covered after the pause');
  assert.ok(existsSync(join(dir, CHECKPOINT)), 'and the checkpoint written back');
  await store.close();
});
