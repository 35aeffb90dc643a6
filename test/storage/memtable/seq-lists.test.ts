// Guarantee: a delete's seqs are deduplicated, filtered and sorted, and searched by value, as a Set would.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { distinctSorted, sortedHas } from '../../../src/storage/memtable/seq-lists.js';

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
  // A large list in random order: the same as a Set's members, sorted.
  const many = Array.from({ length: 50_000 }, (_, i) => (i * 7919) % 20_011);
  const want = [...new Set(many)].filter((q) => q % 3 !== 0).sort((a, b) => a - b);
  assert.deepEqual(
    distinctSorted(many, (q) => q % 3 !== 0),
    want,
  );
});
