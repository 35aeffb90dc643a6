// Guarantee: seals write row groups of sealRowGroupSize rows (a seal's COPY buffers one row group, so
// smaller groups keep its transient memory small), while merges keep writing rowGroupSize groups (reads
// skip by row group: merged files, which hold almost all rows, keep the size reads were tuned for).
// DuckDB cuts row groups at the vectors it is given (2,048 rows or fewer), so a group may run up to one
// vector past its size; the checks allow that.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadManifest } from '../../../src/storage/manifest/manifest.js';
import { openRecordStore, toolRows } from '../../support/helpers.js';

const groupRows = (dir: string) => loadManifest(dir).segments.map((g) => g.row_groups.map((r) => r[2]));

test('sealed segments have sealRowGroupSize row groups; merged ones rowGroupSize', { timeout: 120_000 }, async (t) => {
  const { dir, store } = await openRecordStore(t, { rowGroupSize: 8192, sealRowGroupSize: 2048 });
  for (let k = 0; k < 4; k++) {
    for (let i = 0; i < 10_000; i += 1000) await store.append(toolRows(k * 10_000 + i, 1000), false);
    await store.seal();
  }
  const sealed = groupRows(dir);
  assert.equal(sealed.length, 4);
  for (const groups of sealed) {
    assert.equal(
      groups.reduce((a, b) => a + b, 0),
      10_000,
    );
    assert.ok(groups.length >= 4 && Math.max(...groups) < 2048 + 2048, `each seal: groups of about 2,048 rows (${groups.join(', ')})`);
  }
  assert.ok((await store.compact()) >= 1);
  const merged = groupRows(dir);
  assert.equal(merged.length, 1);
  const groups = merged[0]!;
  assert.equal(
    groups.reduce((a, b) => a + b, 0),
    40_000,
  );
  assert.ok(groups.slice(0, -1).every((n) => n >= 8192) && groups.length <= 5, `the merge: groups of 8,192 rows (${groups.join(', ')})`);
});

test('sealRowGroupSize defaults to 8,192 and never exceeds rowGroupSize', { timeout: 120_000 }, async (t) => {
  const { dir, store } = await openRecordStore(t, { rowGroupSize: 4096 });
  for (let i = 0; i < 10_000; i += 1000) await store.append(toolRows(i, 1000), false);
  await store.seal();
  const [small] = groupRows(dir);
  assert.ok(small!.length >= 2 && Math.max(...small!) < 4096 + 2048, `capped at rowGroupSize (${small!.join(', ')})`);
  const other = await openRecordStore(t);
  for (let i = 0; i < 20_000; i += 1000) await other.store.append(toolRows(i, 1000), false);
  await other.store.seal();
  const [dflt] = groupRows(other.dir);
  assert.ok(dflt!.length >= 2 && Math.max(...dflt!) < 8192 + 2048, `8,192 by default (${dflt!.join(', ')})`);
});
