// Guarantees of a merge's id hashes: the merged segment's .ids file and the id index hold exactly the
// union of its inputs' hashes, sorted and without repeats, though they are now merged in one pass and
// read only after the merged file is written (not held through its COPY).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { idHash } from '../../../src/storage/indexes/id-index.js';
import { loadManifest } from '../../../src/storage/manifest/manifest.js';
import { idsPath, unionHashes } from '../../../src/storage/segments/segments.js';
import { openRecordStore, rowId, toolRows } from '../../support/helpers.js';

test('unionHashes: sorted, distinct, every input value', () => {
  // Fixed pseudo-random inputs with values shared between arrays and repeated within one.
  let x = 12345;
  const next = () => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0) % 5000) * 1024 + 0.5;
  const parts = [0, 1, 2, 3, 4].map((k) => Float64Array.from({ length: 200 * k + 3 }, next).sort());
  parts.push(new Float64Array(0), Float64Array.of(1, 1, 1));
  const want = [...new Set(parts.flatMap((p) => [...p]))].sort((a, b) => a - b);
  assert.deepEqual([...unionHashes(parts)], want);
  assert.deepEqual([...unionHashes([])], []);
  assert.deepEqual([...unionHashes([Float64Array.of(2, 5), Float64Array.of(1, 5, 9)])], [1, 2, 5, 9]);
});

test("a merged segment's .ids file holds exactly its rows' id hashes", async (t) => {
  const { dir, store } = await openRecordStore(t, { rowGroupSize: 64 });
  // Four seals of overlapping ids: a re-logged id replaces its older row, so some hashes repeat across inputs.
  for (const from of [0, 300, 600, 450]) {
    await store.append(toolRows(from, 300), false);
    await store.seal();
  }
  assert.ok(loadManifest(dir).segments.length >= 4);
  assert.ok((await store.compact()) >= 1, 'the segments merge');
  const segs = loadManifest(dir).segments;
  assert.equal(segs.length, 1);
  const buf = readFileSync(idsPath(join(dir, segs[0]!.file)));
  const got = [...new Float64Array(buf.buffer, buf.byteOffset, buf.byteLength / 8)];
  const want = [...new Set(Array.from({ length: 900 }, (_, k) => idHash(rowId(k))))].sort((a, b) => a - b);
  assert.deepEqual(got, want);
});
