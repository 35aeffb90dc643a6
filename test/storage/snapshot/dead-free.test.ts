// Guarantees of a snapshot's bounds and of reading segments without the dead-row filter: every
// statement over one snapshot sees the same records, whatever is logged meanwhile (rows logged after
// it and marks logged after it are left out together); a segment is read unfiltered only when the
// store's dead set has no seq in its range; a replaced record shows one version, never both or none.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Snapshot } from '../../../src/storage/snapshot/snapshot.js';
import { openRecordStore, ROWS_PROJECT, ROWS_RUN, rowId, toolRows } from '../../support/helpers.js';
import { ident, sql } from '../../../src/query/sql.js';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Database } from '../../../src/db/database.js';
import { RecordStore } from '../../../src/storage/record-store.js';
import { DEAD_ROWS_FILE } from '../../../src/storage/snapshot/segment-dead-rows.js';

const scope = { projectId: ROWS_PROJECT, runId: ROWS_RUN, kinds: ['span'] as const };
const rows = (from: number, n: number, name = 'r') => toolRows(from, n, { name });

async function setUp(t: Parameters<typeof openRecordStore>[0]) {
  const { db, store } = await openRecordStore(t);
  await store.append(rows(0, 10), true);
  await store.seal();
  await store.append(rows(10, 10), true);
  await store.seal();
  await store.append(rows(20, 5), true);
  await store.settled(); // appends return before their insert: a snapshot taken directly waits for them
  const first = store.snapshot();
  const [a, b] = first
    .segmentsFor(scope)
    .sort((x, y) => x.min_seq - y.min_seq)
    .map((s) => s.file) as [string, string];
  first.release();
  /** What a snapshot shows: the names of records k, the live total, the segments it reads unfiltered. */
  const read = async (snap: Snapshot, ...ks: number[]) => {
    const src = snap.source(scope);
    const got = await db.all(sql`SELECT name FROM ${src.sql} r WHERE id IN (SELECT unnest(${ks.map(rowId)}::VARCHAR[])) ORDER BY name`);
    const total = await db.all(sql`SELECT count(*) AS n FROM ${src.sql} r`);
    return { names: got.map((r) => String(r['name'])), total: Number(total[0]!['n']), free: [...snap.deadFreeFiles()].sort() };
  };
  return { db, store, a, b, read };
}

test('a snapshot ignores replacements and deletes logged after it, in clean and dirty segments alike', async (t) => {
  const { store, a, read } = await setUp(t);
  // Segment b gets a dead row first, so it is read with the dead-row filter; a stays clean. So does
  // the memory table, by replacing a record it holds (21).
  await store.append(rows(12, 1, 'new'), true);
  await store.append(rows(21, 1, 'new'), true);
  // Released before the store closes (close waits for readers).
  await store.settled();
  const old = store.snapshot();
  const before = await read(old, 5, 12, 15, 21, 22);
  assert.deepEqual(before.free, [a], 'only segment a is free of dead rows');
  assert.deepEqual(before.names, ['new12', 'new21', 'r15', 'r22', 'r5']);
  assert.equal(before.total, 25);

  // After the snapshot: records 5 (clean segment a), 15 (dirty segment b) and 22 (memory) replaced,
  // record 3 deleted.
  await store.append([...rows(5, 1, 'new'), ...rows(15, 1, 'new'), ...rows(22, 1, 'new')], true);
  const sealed3 = await store.lookup(ROWS_PROJECT, ROWS_RUN, [rowId(3)]);
  await store.deleteSeqs([Number(sealed3[0]!['seq'])]);

  const same = await read(old, 3, 5, 12, 15, 21, 22);
  old.release();
  assert.deepEqual(same.names, ['new12', 'new21', 'r15', 'r22', 'r3', 'r5'], 'the old snapshot shows the records as they were, each once');
  assert.equal(same.total, 25);

  await store.settled();
  const now = store.snapshot();
  const fresh = await read(now, 3, 5, 12, 15, 21, 22);
  now.release();
  assert.deepEqual(fresh.free, [], 'both segments have dead rows now');
  assert.deepEqual(fresh.names, ['new12', 'new15', 'new21', 'new22', 'new5']);
  assert.equal(fresh.total, 24);
});

test('after a seal the replaced record still shows once, and clean segments are read unfiltered', async (t) => {
  const { store, a, b, read } = await setUp(t);
  await store.settled();
  const snap0 = store.snapshot();
  assert.deepEqual((await read(snap0, 5)).free, [a, b].sort(), 'no dead rows: both segments unfiltered');
  snap0.release();
  await store.append(rows(5, 1, 'new'), true);
  await store.seal();
  await store.settled();
  const snap = store.snapshot();
  const got = await read(snap, 5);
  snap.release();
  assert.ok(!got.free.includes(a) && got.free.includes(b), 'a stays filtered while its dead row is stored');
  assert.deepEqual(got.names, ['new5']);
  assert.equal(got.total, 25);
});

test('a metric stored only by dirty segments reads as null from the clean ones (they lack its column)', async (t) => {
  const { db, store } = await openRecordStore(t);
  await store.append(
    toolRows(0, 5).map((r, i) => ({ ...r, metrics: { score: i / 10 } })),
    true,
  );
  await store.seal();
  await store.append(rows(5, 5), true);
  await store.seal();
  // A record of the first segment replaced: that segment is dirty, the second (no score column) clean.
  await store.append(rows(1, 1, 'new'), true);
  await store.settled();
  const snap = store.snapshot();
  const free = snap.deadFreeFiles().size;
  const src = snap.source(scope, ['score']);
  const got = await db.all(sql`SELECT name, ${ident(src.metricColumn('score'))} AS s FROM ${src.sql} r ORDER BY s DESC NULLS LAST, name`);
  snap.release();
  assert.equal(free, 1, 'one segment clean, one dirty');
  assert.deepEqual(
    got.map((r) => [r['name'], r['s']]),
    [
      ['r4', 0.4],
      ['r3', 0.3],
      ['r2', 0.2],
      ['r0', 0],
      ['new1', null],
      ['r5', null],
      ['r6', null],
      ['r7', null],
      ['r8', null],
      ['r9', null],
    ],
  );
});

// Each dirty segment read on its own tests only the marks within its seq range: none of its rows'
// marks may be left out, whichever segment or snapshot holds the others.
test('segments read one by one drop exactly their dead rows, at every snapshot', async (t) => {
  const { db, store } = await openRecordStore(t);
  for (const from of [0, 10, 20]) {
    await store.append(rows(from, 10), true);
    await store.seal();
  }
  await store.settled();
  const seqsOf = async (ids: number[]) =>
    (await store.lookup(ROWS_PROJECT, ROWS_RUN, ids.map(rowId))).map((r) => Number(r['seq'])).sort((x, y) => x - y);
  /** Per segment (by first seq) its live rows' names, each segment read alone. */
  const perSegment = async (snap: Snapshot) => {
    const out: string[][] = [];
    const segs = snap.segmentsFor(scope).sort((x, y) => x.min_seq - y.min_seq);
    for (const s of segs) {
      const src = snap.source(scope, [], [], null, { files: new Set([s.file]), only: true, memory: false });
      out.push((await db.all(sql`SELECT name FROM ${src.sql} r ORDER BY seq`)).map((r) => String(r['name'])));
    }
    return out;
  };
  // The first and last row of every segment (the ends of its seq range) and one inside, in two
  // deletes: the snapshot taken between them honours the first only.
  await store.deleteSeqs(await seqsOf([0, 9, 15]));
  await store.settled();
  const between = store.snapshot();
  await store.deleteSeqs(await seqsOf([10, 19, 20, 29, 5]));
  await store.settled();
  const after = store.snapshot();
  const names = (from: number, n: number, gone: number[]) =>
    Array.from({ length: n }, (_, i) => from + i)
      .filter((k) => !gone.includes(k))
      .map((k) => `r${k}`);
  assert.notEqual(between.deadView, after.deadView, 'a delete changes the view of dead rows');
  assert.deepEqual(await perSegment(between), [names(0, 10, [0, 9]), names(10, 10, [15]), names(20, 10, [])]);
  assert.deepEqual(await perSegment(after), [names(0, 10, [0, 5, 9]), names(10, 10, [10, 15, 19]), names(20, 10, [20, 29])]);
  between.release();
  after.release();
});

// A segment's live rows counted from its dead-row list (no read of it) are those a read of it keeps, at
// a snapshot before a delete as after it, and whatever the list file beside the manifest holds.
test('live rows from dead-row lists match a read of the segments, at every snapshot', async (t) => {
  const { dir, db, store } = await openRecordStore(t);
  for (const from of [0, 10, 20]) {
    await store.append(rows(from, 10), true);
    await store.seal();
  }
  await store.settled();
  const seqsOf = async (ids: number[]) => (await store.lookup(ROWS_PROJECT, ROWS_RUN, ids.map(rowId))).map((r) => Number(r['seq']));
  const both = async (on: Database, snap: Snapshot) => {
    const segs = snap.segmentsFor(scope);
    const src = snap.source(scope, [], [], null, { files: new Set(segs.map((s) => s.file)), only: true, memory: false });
    const read = Number((await on.all(sql`SELECT count(*) AS n FROM ${src.sql} r`))[0]!['n']);
    const lists = await snap.liveRows(segs);
    // Each segment's dead rows by their place in its file: the rows a read of it alone leaves out.
    const places = await snap.deadFileRows(segs);
    for (const s of segs) {
      const alone = snap.source(scope, [], [], null, { files: new Set([s.file]), only: true, memory: false });
      const gone = await on.all(
        sql`SELECT file_row_number AS r FROM read_parquet(${join(dir, s.file)}, hive_partitioning = false)
            WHERE seq NOT IN (SELECT seq FROM ${alone.sql} x) ORDER BY r`,
      );
      const want = gone.map((r) => Number(r['r']));
      assert.deepEqual(
        [...(places.get(s.file) ?? [])].sort((x, y) => x - y),
        want,
        `${s.file}: dead rows by place`,
      );
    }
    snap.release();
    return { read, lists: lists.rows, made: lists.made };
  };
  await store.deleteSeqs(await seqsOf([0, 9, 15]));
  // A replaced version is dead too (record 12's first one).
  await store.append(rows(12, 1, 'new'), true);
  await store.settled();
  const between = store.snapshot();
  assert.deepEqual(await both(db, store.snapshot()), { read: 26, lists: 26, made: 2 });
  const file = join(dir, DEAD_ROWS_FILE);
  const stale = readFileSync(file, 'utf8');
  await store.deleteSeqs(await seqsOf([10, 19, 20, 29, 5]));
  await store.settled();
  const after = store.snapshot();
  // The later snapshot remakes the lists with its marks: the earlier one must leave those out.
  assert.deepEqual(await both(db, after), { read: 21, lists: 21, made: 3 });
  assert.deepEqual(await both(db, between), { read: 26, lists: 26, made: 0 });
  await store.close();
  // Reopened (record 12's new version sealed on close, in a segment of its own without dead rows): with
  // the lists saved, with lists made before the second delete, with a damaged file.
  // Lists of the first format had no places: not used, made again (the current lists, so a reader
  // that took them would make none).
  const saved = JSON.parse(readFileSync(file, 'utf8')) as { segments: Record<string, { digest: string; seqs: string }> };
  const placeless = JSON.stringify({
    format: 1,
    segments: Object.fromEntries(Object.entries(saved.segments).map(([f, l]) => [f, { digest: l.digest, seqs: l.seqs }])),
  });
  for (const [content, made] of [
    [null, 0],
    [stale, 3],
    [stale.slice(0, stale.length / 2), 3],
    [placeless, 3],
  ] as const) {
    if (content !== null) writeFileSync(file, content);
    const db2 = await Database.open({ tempDirectory: join(dir, 'tmp') });
    const again = await RecordStore.open(dir, db2, { autoCompact: false });
    try {
      assert.deepEqual(await both(db2, again.snapshot()), { read: 22, lists: 22, made }, `file: ${content?.length}`);
    } finally {
      await again.close();
      await db2.close();
    }
  }
});

// A large delete has the lists made in the background, so the next count reads no segment.
test('a large delete makes the dead-row lists of the segments it touched in the background', async (t) => {
  const { dir, store } = await openRecordStore(t, { deadRowLists: { afterDelete: 3, fromRows: 10 } });
  for (const from of [0, 10, 20]) {
    await store.append(rows(from, 10), true);
    await store.seal();
  }
  await store.settled();
  const seqsOf = async (ids: number[]) => (await store.lookup(ROWS_PROJECT, ROWS_RUN, ids.map(rowId))).map((r) => Number(r['seq']));
  await store.deleteSeqs(await seqsOf([1, 12, 25]));
  const file = join(dir, DEAD_ROWS_FILE);
  for (let i = 0; i < 200 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(existsSync(file), 'the lists were made and saved');
  await store.settled();
  const snap = store.snapshot();
  const got = await snap.liveRows(snap.segmentsFor(scope));
  snap.release();
  assert.deepEqual(got, { rows: 27, made: 0 });
});

// Once compared, a list is trusted while the dead set reports no change in its segment's range: a
// further delete or replacement in the same process must still be seen, and only that segment's list
// made again.
test('a list trusted without its digest is still remade after a further delete or replacement of its rows', async (t) => {
  const { db, store } = await openRecordStore(t);
  for (const from of [0, 10, 20]) {
    await store.append(rows(from, 10), true);
    await store.seal();
  }
  await store.settled();
  const seqsOf = async (ids: number[]) => (await store.lookup(ROWS_PROJECT, ROWS_RUN, ids.map(rowId))).map((r) => Number(r['seq']));
  const both = async () => {
    await store.settled();
    const snap = store.snapshot();
    try {
      const segs = snap.segmentsFor(scope).filter((s) => s.min_seq <= 30);
      const src = snap.source(scope, [], [], null, { files: new Set(segs.map((s) => s.file)), only: true, memory: false });
      const read = Number((await db.all(sql`SELECT count(*) AS n FROM ${src.sql} r`))[0]!['n']);
      const lists = await snap.liveRows(segs);
      return { read, lists: lists.rows, made: lists.made };
    } finally {
      snap.release();
    }
  };
  await store.deleteSeqs(await seqsOf([1, 11, 21]));
  assert.deepEqual(await both(), { read: 27, lists: 27, made: 3 });
  assert.deepEqual(await both(), { read: 27, lists: 27, made: 0 }, 'compared once, then trusted');
  // Rows in memory marked dead: no segment's range, no list made again.
  await store.append(rows(100, 5), true);
  await store.deleteSeqs(await seqsOf([101, 102]));
  assert.deepEqual(await both(), { read: 27, lists: 27, made: 0 });
  // A further delete in the middle segment: its list alone is made again.
  await store.deleteSeqs(await seqsOf([15]));
  assert.deepEqual(await both(), { read: 26, lists: 26, made: 1 });
  // A replacement marks the old version of a row of the first segment.
  await store.append(rows(3, 1, 'new'), true);
  assert.deepEqual(await both(), { read: 25, lists: 25, made: 1 });
  // Two deletes in a row, each in another segment, between two counts.
  await store.deleteSeqs(await seqsOf([4]));
  await store.deleteSeqs(await seqsOf([24]));
  assert.deepEqual(await both(), { read: 23, lists: 23, made: 2 });
  assert.deepEqual(await both(), { read: 23, lists: 23, made: 0 });
});
