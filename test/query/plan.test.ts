// Guarantees: chooseWindow's created_at bound holds about the rows asked for, taking the last row group
// it reaches in part (its rows taken as spread evenly over its range), newest or oldest first; it
// keeps every row group taken before whole, counts memory rows first when their ranges are unknown,
// and gives no window when the rows asked for are all there is.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chooseWindow } from '../../src/query/plan.js';

/** Row groups as [min created_at, max created_at, rows]. */
const GROUPS: [number, number, number][] = [
  [0, 1000, 1000],
  [1000, 2000, 1000],
  [2000, 3000, 1000],
];

test('a window takes the last row group it reaches in part', () => {
  // Newest first: 500 rows are half of the newest group's range.
  assert.deepEqual(chooseWindow(GROUPS, 0, 500, false), { op: '>=', us: 2500 });
  // 1,500 rows: the newest group whole, half of the next.
  assert.deepEqual(chooseWindow(GROUPS, 0, 1500, false), { op: '>=', us: 1500 });
  // Oldest first, the same from the other end.
  assert.deepEqual(chooseWindow(GROUPS, 0, 250, true), { op: '<=', us: 250 });
  assert.deepEqual(chooseWindow(GROUPS, 0, 2000, true), { op: '<=', us: 2000 });
});

test('memory rows of unknown range count first; a group taken before stays whole', () => {
  // 400 rows in memory: 100 more from the newest group.
  assert.deepEqual(chooseWindow(GROUPS, 400, 500, false), { op: '>=', us: 2900 });
  // Overlapping groups: the second reaches back further than the part of the third wanted.
  const overlapping: [number, number, number][] = [
    [0, 2900, 1000],
    [2000, 3000, 1000],
  ];
  assert.deepEqual(chooseWindow(overlapping, 0, 1500, false), { op: '>=', us: 1450 });
  assert.deepEqual(chooseWindow(overlapping, 0, 1100, false), { op: '>=', us: 2000 }, 'the newest group stays whole');
});

test('no window when everything is asked for', () => {
  assert.equal(chooseWindow(GROUPS, 0, 3000, false), null);
  assert.deepEqual(chooseWindow(GROUPS, 10, 2500, false), { op: '>=', us: 510 });
});

test('an empty row group reached last ends the window where the rows before it did', () => {
  // 400 rows in memory already hold the 300 asked for: the empty newest group ends the walk.
  assert.deepEqual(chooseWindow([[5000, 6000, 0], ...GROUPS], 400, 300, false), { op: '>=', us: 5000 });
});
