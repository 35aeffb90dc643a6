// Guarantee: a delete's seqs are deduplicated, filtered and sorted, and searched by value, as a Set would.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { distinctSorted, sortedHas, sortedUnion } from '../../../src/storage/memtable/seq-lists.js';

test('distinctSorted keeps each accepted seq once, ascending; sortedHas finds exactly its members', () => {
  const seqs = [9, 3, 3, 12, 0, 9, 2 ** 40, 7, 1, 12];
  const out = distinctSorted(seqs, (q) => q !== 7);
  assert.deepEqual(out, [0, 1, 3, 9, 12, 2 ** 40]);
  assert.deepEqual(
    distinctSorted([], () => true),
    [],
  );
  for (let q = -1; q <= 13; q++) assert.equal(sortedHas(out, q), out.includes(q), `seq ${q}`);
  assert.equal(sortedHas(out, 2 ** 40), true);
  assert.equal(sortedHas([], 0), false);
  // Lists already in order (taken as they are) and one out of order only at its end (sorted).
  assert.deepEqual(
    distinctSorted([1, 1, 2, 5, 5, 9], (q) => q !== 2),
    [1, 5, 9],
  );
  assert.deepEqual(
    distinctSorted([1, 2, 5, 9, 4], () => true),
    [1, 2, 4, 5, 9],
  );
  // A large list in random order: the same as a Set's members, sorted.
  const many = Array.from({ length: 50_000 }, (_, i) => (i * 7919) % 20_011);
  const want = [...new Set(many)].filter((q) => q % 3 !== 0).sort((a, b) => a - b);
  assert.deepEqual(
    distinctSorted(many, (q) => q % 3 !== 0),
    want,
  );
});

test('sortedUnion gives the distinct values of both lists ascending, sorted or not', () => {
  assert.deepEqual(sortedUnion([1, 3, 5], [2, 3, 6]), [1, 2, 3, 5, 6]);
  assert.deepEqual(sortedUnion([9, 1, 9, 4], [4, 0]), [0, 1, 4, 9]);
  assert.deepEqual(sortedUnion([], [7, 7]), [7]);
  assert.deepEqual(sortedUnion([2, 2], []), [2]);
  const a = Array.from({ length: 5_000 }, (_, i) => (i * 7919) % 20_000);
  const b = Array.from({ length: 5_000 }, (_, i) => i * 3);
  assert.deepEqual(
    sortedUnion(a, b),
    [...new Set([...a, ...b])].sort((x, y) => x - y),
  );
});
