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

// A cache built from the set's part in a range is current while changedIn says false: the members in
// the range must then be those at the version it was built at, through every kind of change.
test('changedIn: false only when the members in the range are those of that version; null once the changes are not kept', () => {
  const r = rng(20261128 + 36);
  const set = new DeadSet();
  const truth = new Set<number>();
  const seen: { version: number; members: number[] }[] = [];
  const inRange = (members: Iterable<number>, lo: number, hi: number) =>
    [...members].filter((q) => q >= lo && q <= hi).sort((a, b) => a - b);
  let falses = 0;
  let trues = 0;
  for (let step = 0; step < 4_000; step++) {
    const op = r(100);
    const before = set.version;
    let changes = false;
    if (op < 30) {
      const q = r(100_000);
      changes = !truth.has(q);
      set.add(q);
      truth.add(q);
    } else if (op < 34) {
      // Mostly narrow batches; now and then one past the pending size.
      const base = r(100_000);
      const batch = Array.from({ length: r(8) === 0 ? 1_500 + r(1_000) : 1 + r(20) }, () => base + r(300));
      changes = batch.some((q) => !truth.has(q));
      set.addAll(batch);
      for (const q of batch) truth.add(q);
    } else if (op < 38 && truth.size > 0) {
      const members = [...truth];
      const batch = Array.from({ length: r(8) === 0 ? 1_500 + r(500) : 1 + r(20) }, () =>
        r(2) === 0 ? members[r(members.length)]! : r(100_000),
      );
      changes = batch.some((q) => truth.has(q));
      set.deleteAll(batch);
      for (const q of batch) truth.delete(q);
    } else if (op < 50 && truth.size > 0) {
      const q = [...truth][r(truth.size)]!;
      changes = true;
      set.delete(q);
      truth.delete(q);
    } else if (op === 50 && step % 7 === 0) {
      changes = truth.size > 0;
      set.clear();
      truth.clear();
    } else if (op < 60) {
      seen.push({ version: set.version, members: [...truth] });
      if (seen.length > 20) seen.shift();
    } else if (seen.length > 0) {
      const then = seen[r(seen.length)]!;
      const lo = r(100_000);
      const hi = lo + r(op < 90 ? 300 : 20_000);
      const changed = set.changedIn(then.version, lo, hi);
      if (changed === false) {
        falses++;
        assert.deepEqual(inRange(truth, lo, hi), inRange(then.members, lo, hi), `step ${step}: [${lo}, ${hi}] since ${then.version}`);
      } else if (changed === true) trues++;
    }
    // The version moves exactly when the members change.
    if (changes) assert.ok(set.version > before, `step ${step}: a change bumps the version`);
    else assert.equal(set.version, before, `step ${step}: no change, no new version`);
  }
  assert.ok(falses > 100 && trues > 100, `both answers were checked (${falses} false, ${trues} true)`);
  // Past the changes kept, an old version is answered with null.
  const old = set.version;
  for (let i = 0; i < 3_000; i++) set.add(200_000 + i);
  assert.equal(set.changedIn(old, 0, 10), null);
  assert.equal(set.changedIn(set.version, 0, Number.MAX_SAFE_INTEGER), false);
});
