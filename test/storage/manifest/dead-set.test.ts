// The dead set's range question (anyIn) must answer as a scan of the whole set would, through
// additions kept unsorted, merges of them into the sorted copy, removals and re-additions.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DeadSet } from '../../../src/storage/manifest/dead-set.js';

/** A small seeded generator (xorshift32): the same ops on every run. */
function rng(seed: number): (n: number) => number {
  let x = seed >>> 0 || 1;
  return (n) => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x % n;
  };
}

test('anyIn agrees with a scan of the set through adds, merges, removals and clears', () => {
  const r = rng(20261124);
  const set = new DeadSet();
  const truth = new Set<number>();
  const removed: number[] = [];
  let checked = 0;
  for (let step = 0; step < 20_000; step++) {
    const op = step === 6_000 ? 63 : r(100);
    if (op < 60) {
      const q = r(50_000);
      set.add(q);
      truth.add(q);
    } else if (op < 63 && step > 12_000 && truth.size > 0) {
      // Removals only late: each one makes the next question rebuild, so early on additions pile up
      // past the merge size.
      const q = [...truth][r(truth.size)]!;
      assert.equal(set.delete(q), true);
      truth.delete(q);
      removed.push(q);
    } else if (step === 6_000) {
      set.clear();
      truth.clear();
    } else {
      // Random ranges, and single points on a member or on a seq removed earlier (a stale copy would keep it).
      const members = op < 75 ? [...truth] : op < 85 ? removed : [];
      const point = members.length > 0 ? members[r(members.length)]! : null;
      const lo = point ?? r(50_000);
      const hi = point ?? lo + r(op < 95 ? 40 : 5_000);
      const expected = [...truth].some((q) => q >= lo && q <= hi);
      assert.equal(set.anyIn(lo, hi), expected, `step ${step}: [${lo}, ${hi}]`);
      checked++;
    }
  }
  assert.equal(set.size, truth.size);
  // Every member found and every removed seq (not re-added) not found, one point at a time.
  for (const q of truth) assert.equal(set.anyIn(q, q), true, `member ${q}`);
  for (const q of removed) assert.equal(set.anyIn(q, q), truth.has(q), `removed ${q}`);
  assert.ok(checked > 5_000 && truth.size > 1_024, `the run asked enough (${checked}) over a set past the merge size (${truth.size})`);
  assert.equal(set.anyIn(0, 50_000), truth.size > 0);
  assert.equal(new DeadSet().anyIn(0, Number.MAX_SAFE_INTEGER), false);
});

test('has, size and iteration agree with a Set through single and bulk adds and removals', () => {
  const r = rng(20261128);
  const set = new DeadSet();
  const truth = new Set<number>();
  for (let step = 0; step < 1_500; step++) {
    const op = r(100);
    if (op < 40) {
      const q = r(200_000);
      set.add(q);
      truth.add(q);
    } else if (op < 50) {
      // A bulk add past the pending size, unsorted and with repeats (some already members).
      const batch = Array.from({ length: 1_000 + r(3_000) }, () => r(200_000));
      set.addAll(batch);
      for (const q of batch) truth.add(q);
    } else if (op < 60 && truth.size > 0) {
      const members = [...truth];
      const batch = Array.from({ length: r(op < 55 ? 50 : 3_000) }, () => (r(2) === 0 ? members[r(members.length)]! : r(200_000)));
      set.deleteAll(batch);
      for (const q of batch) truth.delete(q);
    } else if (op < 75 && truth.size > 0) {
      const q = r(3) === 0 ? r(200_000) : [...truth][r(truth.size)]!;
      assert.equal(set.delete(q), truth.delete(q));
    } else {
      const q = r(200_000);
      assert.equal(set.has(q), truth.has(q), `step ${step}: ${q}`);
    }
    assert.equal(set.size, truth.size, `step ${step}`);
  }
  assert.ok(truth.size > 5_000, `the set grew past bulk sizes (${truth.size})`);
  assert.deepEqual(
    [...set].sort((a, b) => a - b),
    [...truth].sort((a, b) => a - b),
  );
  assert.deepEqual(
    Array.from(set.sorted()),
    [...truth].sort((a, b) => a - b),
  );
  for (const q of truth) assert.equal(set.has(q), true);
});
