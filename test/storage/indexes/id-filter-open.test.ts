// Guarantees of opening a store with its id filters (src/storage/segments/segments.ts segmentFilter):
// a folder of an earlier version (segments with `.ids` but no `.idf`) or with a damaged filter opens,
// its sealed records are still found and replaced by a re-logged id, and the filter is written back;
// a sealed segment's filter file matches its `.ids` file.
import assert from 'node:assert/strict';
import { readFileSync, rmSync, truncateSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Database } from '../../../src/db/database.js';
import { idFilterPath, readIdFilter } from '../../../src/storage/indexes/id-filter.js';
import { idHash } from '../../../src/storage/indexes/id-index.js';
import { loadManifest } from '../../../src/storage/manifest/manifest.js';
import { RecordStore } from '../../../src/storage/record-store.js';
import { idsPath } from '../../../src/storage/segments/segments.js';
import { ROWS_PROJECT, ROWS_RUN, rowId, tempDir, toolRows } from '../../support/helpers.js';

test('a folder without id filters (or with a damaged one) opens, finds sealed ids and writes the filters back', async (t) => {
  const dir = tempDir(t);
  const db = await Database.open({ tempDirectory: join(dir, 'tmp') });
  t.after(() => db.close());
  let store = await RecordStore.open(dir, db, { autoCompact: false });
  await store.append(toolRows(0, 1_500), true);
  await store.seal();
  await store.append(toolRows(1_500, 1_500), true);
  await store.seal();
  await store.close();
  const segs = loadManifest(dir).segments;
  assert.equal(segs.length, 2);
  for (const g of segs) {
    const abs = join(dir, g.file);
    const filter = readIdFilter(abs)!;
    assert.ok(filter, `${g.file} has a filter`);
    const ids = new Float64Array(readFileSync(idsPath(abs)).buffer.slice(0));
    assert.equal(filter.count, ids.length);
    for (const h of ids) assert.ok(filter.has(h));
  }
  // As an earlier version left it: no filter for the first segment; the second one's cut short.
  rmSync(idFilterPath(join(dir, segs[0]!.file)));
  truncateSync(idFilterPath(join(dir, segs[1]!.file)), 100);

  // A new database, as a new process has (the first one still holds the closed store's tables).
  const db2 = await Database.open({ tempDirectory: join(dir, 'tmp') });
  t.after(() => db2.close());
  store = await RecordStore.open(dir, db2, { autoCompact: false });
  try {
    for (const g of segs) {
      const back = readIdFilter(join(dir, g.file));
      assert.ok(back && back.count === g.rows, `${g.file}: the filter is written back`);
    }
    for (const k of [0, 777, 1_499, 1_500, 2_999]) assert.ok(store.mayExist(ROWS_PROJECT, ROWS_RUN, rowId(k)), `row ${k}`);
    let maybe = 0;
    for (let k = 10_000; k < 20_000; k++) if (store.mayExist(ROWS_PROJECT, ROWS_RUN, rowId(k))) maybe++;
    assert.equal(maybe, 0, 'new ids pass a filter and then miss in .ids');
    // Re-logged ids replace their sealed versions (the index found them): one live row each.
    await store.append(toolRows(700, 100, { name: 'again' }), true);
    await store.append(toolRows(2_900, 100, { name: 'again' }), true);
    const rows = await store.lookup(ROWS_PROJECT, ROWS_RUN, [rowId(750), rowId(2_950), rowId(10)]);
    assert.deepEqual(rows.map((r) => `${r.id}:${r.name}`).sort(), [
      `${rowId(10)}:r10`,
      `${rowId(750)}:again750`,
      `${rowId(2_950)}:again2950`,
    ]);
  } finally {
    await store.close();
  }
});

test("a merge writes the filter of its output and removes its inputs' filters", async (t) => {
  const dir = tempDir(t);
  const db = await Database.open({ tempDirectory: join(dir, 'tmp') });
  t.after(() => db.close());
  const store = await RecordStore.open(dir, db, { autoCompact: false });
  try {
    for (const from of [0, 300, 600, 450]) {
      await store.append(toolRows(from, 300), false);
      await store.seal();
    }
    const before = loadManifest(dir).segments;
    assert.ok((await store.compact()) >= 1);
    const [merged] = loadManifest(dir).segments;
    const filter = readIdFilter(join(dir, merged!.file))!;
    assert.equal(filter.count, 900);
    for (let k = 0; k < 900; k++) assert.ok(filter.has(idHash(rowId(k))));
    for (let k = 0; k < 900; k += 37) assert.deepEqual(store.mayExist(ROWS_PROJECT, ROWS_RUN, rowId(k)), true);
    assert.equal(store.mayExist(ROWS_PROJECT, ROWS_RUN, rowId(5_000)), false);
    await store.close();
    // Retired inputs go once no reader needs them; their filters go with them.
    for (const g of before) if (!existsSync(join(dir, g.file))) assert.ok(!existsSync(idFilterPath(join(dir, g.file))), g.file);
  } finally {
    await store.close();
  }
});
