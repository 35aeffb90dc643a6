// The follower compares the dead seqs a new state honours with those it holds as two sorted arrays:
// the walk must give exactly what Set differences give, at any overlap.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { diffSorted } from '../../../src/storage/readers/follower.js';

function randomSorted(n: number, range: number, rnd: () => number): Float64Array {
  const s = new Set<number>();
  while (s.size < n) s.add(Math.floor(rnd() * range));
  return Float64Array.from([...s].sort((a, b) => a - b));
}

test('diffSorted gives what Set differences give: added and removed, ascending', () => {
  let x = 7;
  const rnd = () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const cases: [Float64Array, Float64Array][] = [
    [new Float64Array(0), new Float64Array(0)],
    [Float64Array.from([1, 2, 3]), new Float64Array(0)],
    [new Float64Array(0), Float64Array.from([1, 2, 3])],
    [Float64Array.from([1, 3, 5]), Float64Array.from([1, 3, 5])],
    [Float64Array.from([2, 4, 6]), Float64Array.from([1, 3, 5, 7])],
  ];
  for (let i = 0; i < 40; i++) cases.push([randomSorted(1 + i * 7, 400, rnd), randomSorted(1 + ((i * 13) % 97), 400, rnd)]);
  for (const [want, held] of cases) {
    const w = new Set(want);
    const h = new Set(held);
    const { added, removed } = diffSorted(want, held);
    assert.deepEqual(
      added,
      [...want].filter((q) => !h.has(q)),
    );
    assert.deepEqual(
      removed,
      [...held].filter((q) => !w.has(q)),
    );
  }
});
