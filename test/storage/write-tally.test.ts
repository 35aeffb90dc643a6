// Guarantees: the store's count of bytes it wrote (stats.written) matches the files it left: the log's
// bytes, each seal's Parquet and side files, each merge's output, the manifest; so write amplification
// reported from it is what the disk received; side files rebuilt after open count as repairs.
import assert from 'node:assert/strict';
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { RecordStore } from '../../src/storage/record-store.js';
import { openRecordStore, toolRows } from '../support/helpers.js';
import { waitFor } from '../support/wait-for.js';

/** Bytes of the files under `dir` whose names end with one of `ends`. */
function bytesUnder(dir: string, ends: readonly string[]): number {
  let n = 0;
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (ends.some((x) => e.name.endsWith(x))) n += statSync(join(d, e.name)).size;
    }
  };
  walk(dir);
  return n;
}

const SIDE = ['.ids', '.idf', '.kids', '.kidrows', '.tix', '.tok'];

test('the write tally counts the log, seals, merges and the manifest as the files on disk hold them', async (t) => {
  const { dir, store } = await openRecordStore(t, { textIndex: true });
  const empty = store.stats.written;
  assert.equal(empty.sealParquet + empty.mergeParquet + empty.loadParquet, 0);

  await store.append(toolRows(0, 500, { input: 'a'.repeat(100) }), true);
  await store.append(toolRows(500, 500, { input: 'b'.repeat(100) }), true);
  const logged = store.stats.written.log;
  assert.equal(logged, bytesUnder(join(dir, 'wal'), ['.arrows']), 'the log counts what its files hold');
  assert.ok(logged > 1000 * 100, `the log holds every row's input (${logged} bytes)`);

  await store.seal();
  for (let i = 2; i < 5; i++) {
    await store.append(toolRows(i * 500, 500), true);
    await store.seal();
  }
  const sealed = store.stats.written;
  assert.equal(store.stats.segments, 4);
  assert.equal(sealed.sealParquet, bytesUnder(join(dir, 'records'), ['.parquet']));
  assert.equal(sealed.sealIndexes, bytesUnder(join(dir, 'records'), SIDE));
  assert.ok(sealed.sealIndexes > 0, 'id hashes and text indexes are counted');
  assert.ok(sealed.manifest > 0);
  assert.equal(sealed.mergeParquet, 0);

  // A merge of the four writes one file; the old ones go, the tally keeps what was written.
  assert.ok((await store.compact()) > 0);
  const merged = store.stats.written;
  assert.equal(store.stats.segments, 1);
  assert.equal(merged.mergeParquet, bytesUnder(join(dir, 'records'), ['.parquet']));
  assert.equal(merged.mergeIndexes, bytesUnder(join(dir, 'records'), SIDE));
  assert.equal(merged.sealParquet, sealed.sealParquet, 'seals written before stay counted');
  assert.ok(merged.manifest > sealed.manifest, 'the merge rewrote the manifest');
  assert.ok(merged.log >= logged);
});

test('side files rebuilt after open are counted as repairs, as the files hold them', async (t) => {
  const { dir, db, store } = await openRecordStore(t, { textIndex: true });
  await store.append(toolRows(0, 800, { input: 'some words to index' }), true);
  await store.seal();
  await store.close();
  const side = (ends: readonly string[]) => bytesUnder(join(dir, 'records'), ends);
  const lost = ['.kidrows', '.tok'];
  const written = side(lost);
  assert.ok(written > 0);
  const walk = (d: string): string[] =>
    readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : [join(d, e.name)]));
  for (const f of walk(join(dir, 'records'))) if (lost.some((x) => f.endsWith(x))) rmSync(f);

  const again = await RecordStore.open(dir, db, { autoCompact: false, textIndex: true });
  t.after(() => again.close());
  assert.ok((await again.indexesRepaired()) >= 2, 'the row file and the token index were rebuilt');
  // A text index rebuild writes both of its files (the trigram sets are renamed over theirs only when unsound).
  assert.equal(again.stats.written.repairIndexes, side(lost) + side(['.tix']));
  assert.equal(side(lost), written, 'rebuilt as large as written');
  assert.equal(again.stats.written.sealIndexes + again.stats.written.mergeIndexes, 0);
});

test('compact() merges new small segments without rewriting a big merged one', async (t) => {
  const { dir, store } = await openRecordStore(t);
  for (let i = 0; i < 4; i++) {
    await store.append(toolRows(i * 1000, 1000), true);
    await store.seal();
  }
  await store.compact();
  const parquet = () =>
    readdirSync(join(dir, 'records'), { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.parquet'))
      .sort();
  const [big] = parquet();
  const once = store.stats.written.mergeParquet;
  assert.equal(parquet().length, 1);
  // Four seals of 50 rows: a twentieth of the big segment.
  for (let i = 0; i < 4; i++) {
    await store.append(toolRows(10_000 + i * 50, 50), true);
    await store.seal();
  }
  assert.equal(await store.compact(), 1);
  const after = parquet();
  assert.equal(after.length, 2);
  assert.ok(after.includes(big!), 'the big segment stays as it was');
  const added = store.stats.written.mergeParquet - once;
  assert.ok(added > 0 && added < once / 2, `the second compaction wrote ${added} bytes, the first ${once}`);
});

test('a merge in a pause of logging leaves out a segment holding more rows than the new ones together', async (t) => {
  const { dir, store } = await openRecordStore(t, { autoCompact: true, mergePauseMs: 10 });
  const parquet = () =>
    readdirSync(join(dir, 'records'), { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.parquet'))
      .sort();
  for (let i = 0; i < 4; i++) {
    await store.append(toolRows(i * 1000, 1000), true);
    await store.seal();
  }
  await waitFor(() => store.stats.segments === 1, { what: 'the four seals merged' });
  const [big] = parquet();
  const once = store.stats.written.mergeParquet;
  // 1,200 new rows: over a quarter of the big segment's 4,000 (compact() would take it), under all of it.
  for (let i = 0; i < 4; i++) {
    await store.append(toolRows(10_000 + i * 300, 300), true);
    await store.seal();
  }
  await waitFor(() => store.stats.written.mergeParquet > once && store.stats.segments < 5, { what: 'a merge of the new segments' });
  const after = parquet();
  assert.equal(store.stats.segments, 2);
  assert.ok(after.includes(big!), 'the big segment stays as it was');
});
