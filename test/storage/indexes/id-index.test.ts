// Guarantees of the id index's packed form (src/storage/indexes/id-index.ts): every stored hash is found, an
// absent hash is reported only when the 32 + bits compared bits all agree with a stored one (so the
// caller's DuckDB check runs about never), and the index stays right across removals and rebuilds of
// its Bloom filter.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { idHash, IdBloom, PackedHashes, SealedIdIndex, sortedHashes } from '../../../src/storage/indexes/id-index.js';
import { Rng } from '../../support/fuzz/rng.js';

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

/** The bits a PackedHashes of `bits` bucket bits compares: the top 32 + bits of the 53. */
const compared = (h: number, bits: number) => Math.floor(h / 2 ** (21 - bits));

test('packed hashes find every stored hash and no absent one whose compared bits differ', () => {
  for (const n of [0, 1, 7, 100, 5_000, 70_000]) {
    const present = sortedHashes(ids(`p${n}`, n));
    const packed = new PackedHashes(present);
    assert.equal(packed.length, n);
    for (const h of present) assert.ok(packed.has(h), `stored hash ${h} of ${n} not found`);
    const keys = new Set(Array.from(present, (h) => compared(h, packed.bits)));
    let falseHits = 0;
    for (const id of ids(`absent${n}`, 5_000)) {
      const h = idHash(id);
      const expected = keys.has(compared(h, packed.bits));
      assert.equal(packed.has(h), expected, `absent ${id} in a set of ${n}`);
      if (expected) falseHits++;
    }
    assert.equal(falseHits, 0);
    // Fewer bytes than the 8 of a Float64 per hash (a handful of bytes of offsets for tiny sets).
    if (n >= 100) assert.ok(packed.bytes < n * 5, `${packed.bytes} bytes for ${n} hashes`);
  }
});

test('hashes at the edges of the 53-bit range and equal in their compared bits are found', () => {
  const rng = new Rng(17);
  const edge = [0, 1, 2 ** 21 - 1, 2 ** 21, 2 ** 32, 2 ** 53 - 1, 2 ** 52, 2 ** 53 - 2 ** 21];
  const random = Array.from({ length: 3_000 }, () => Math.floor(rng.next() * 2 ** 32) * 2 ** 21 + rng.int(0, 2 ** 21 - 1));
  const sorted = Float64Array.from([...edge, ...random]).sort();
  const packed = new PackedHashes(sorted);
  for (const h of sorted) assert.ok(packed.has(h), `hash ${h}`);
  // A hash sharing a stored one's compared bits is a candidate (the caller confirms it): never missed.
  const twin = Math.floor(edge[5]! / 2 ** (21 - packed.bits)) * 2 ** (21 - packed.bits);
  assert.ok(packed.has(twin));
});

test('the index finds ids across segments, forgets removed ones and survives Bloom rebuilds', () => {
  const index = new SealedIdIndex();
  const segs = Array.from({ length: 6 }, (_, i) => ({
    key: `records/p/r${i % 2}/seg-${i}.parquet`,
    partition: `records/p/r${i % 2}/seg-${i}.parquet`,
    names: ids(`s${i}`, 40_000),
  }));
  // 240k hashes: the 64k-key filter is rebuilt (from the packed hashes) several times on the way.
  for (const s of segs) index.add({ key: s.key, partition: s.partition, hashes: sortedHashes(s.names) });
  assert.equal(index.size, 240_000);
  for (const s of segs)
    for (const id of s.names.filter((_, i) => i % 97 === 0))
      assert.deepEqual(index.candidates(id, s.key.slice(0, 'records/p/r0'.length)), [s.key]);
  // Another run's prefix does not see them.
  assert.deepEqual(index.candidates(segs[0]!.names[0]!, 'records/p/r1'), []);
  let hits = 0;
  for (const id of ids('new', 20_000)) hits += index.candidates(id, 'records/p/').length;
  assert.equal(hits, 0);
  index.remove(segs[0]!.key);
  assert.equal(index.size, 200_000);
  assert.deepEqual(index.candidates(segs[0]!.names[5]!, 'records/p/'), []);
  // Adding a key again replaces it (size counts it once).
  index.add({ key: segs[1]!.key, partition: segs[1]!.partition, hashes: sortedHashes(segs[1]!.names) });
  assert.equal(index.size, 200_000);
  assert.ok(index.bytes < 200_000 * 8);
});

test('mayHoldAny names the segments holding one of the hashes, none for new ids, and keeps segments it does not index', () => {
  const index = new SealedIdIndex();
  const a = ids('a', 20_000);
  const b = ids('b', 20_000);
  index.add({ key: 'A', partition: 'A', hashes: sortedHashes(a) });
  index.add({ key: 'B', partition: 'B', hashes: sortedHashes(b) });
  assert.deepEqual([...index.mayHoldAny(['A', 'B'], sortedHashes(ids('new', 50_000)))], []);
  assert.deepEqual([...index.mayHoldAny(['A', 'B'], sortedHashes([...ids('new', 1_000), b[12_345]!]))], ['B']);
  assert.deepEqual(new Set(index.mayHoldAny(['A', 'B'], sortedHashes([a[0]!, b[19_999]!]))), new Set(['A', 'B']));
  // Only the keys asked about, and one the index has never seen stays in (nothing is known of it).
  assert.deepEqual(new Set(index.mayHoldAny(['B', 'C'], sortedHashes([a[0]!]))), new Set(['C']));
  index.remove('B');
  assert.deepEqual(new Set(index.mayHoldAny(['A', 'B'], sortedHashes([b[5]!]))), new Set(['B']), 'a removed segment is unknown again');
});

test('the id filter finds every key it holds and answers "maybe" for few others, at its fullest (10 bits a key)', () => {
  // Capacity 2^20 gives 2^20 * 10 bits rounded up to a power of two words: 16M bits. Fill it to 10
  // bits a key, the point where the index rebuilds it bigger.
  const bloom = new IdBloom(1 << 20);
  const keys = (bloom.bits.length * 32) / 10;
  const top = (i: number) => Math.floor(idHash(`k-${i}`) / 0x200000);
  for (let i = 0; i < keys; i++) bloom.add(top(i));
  for (let i = 0; i < keys; i += 7) assert.ok(bloom.has(top(i)), `key ${i}`);
  let maybe = 0;
  const asked = 200_000;
  for (let i = 0; i < asked; i++) if (bloom.has(Math.floor(idHash(`absent-${i}`) / 0x200000))) maybe++;
  // An ideal filter with 7 bits and 10 bits a key answers "maybe" 0.8% of the time; blocks of 512
  // bits cost a little more. Every bit set in one place would answer "maybe" almost always.
  assert.ok(maybe / asked < 0.02, `false positive rate ${maybe / asked}`);
});

test('the filter grows in slices, a turn of the event loop each, and answers right while it does', async () => {
  const index = new SealedIdIndex();
  const segs = Array.from({ length: 4 }, (_, i) => ({ key: `records/p/r/seg-${i}.parquet`, names: ids(`g${i}`, 100_000) }));
  for (const s of segs) index.add({ key: s.key, partition: s.key, hashes: sortedHashes(s.names) });
  // 400k keys outgrew the first filter (65,536 keys at 10 bits): a bigger one is being filled.
  assert.ok(index.growing);
  const before = index.bytes;
  for (const s of segs) assert.deepEqual(index.candidates(s.names[17]!, 'records/p/'), [s.key]);
  let turns = 0;
  while (index.growing) {
    await new Promise((r) => setImmediate(r));
    turns++;
    // Between slices: every held id is still found, new ones are not.
    const s = segs[turns % 4]!;
    assert.deepEqual(index.candidates(s.names[turns]!, 'records/p/'), [s.key]);
    assert.deepEqual(index.candidates(`new-${turns}`, 'records/p/'), []);
  }
  assert.ok(turns >= 4, `filled in ${turns} turns`);
  assert.ok(index.bytes > before);
  for (const s of segs) for (const id of s.names.filter((_, i) => i % 101 === 0)) assert.ok(index.maybe(id), id);
  let maybe = 0;
  for (const id of ids('absent', 50_000)) if (index.maybe(id)) maybe++;
  // The grown filter holds 400k keys at 10 bits or more each (the first one held them at under 3).
  assert.ok(maybe / 50_000 < 0.02, `false positive rate ${maybe / 50_000}`);
});

test('segments added without filling the filter are found before and after one refill', () => {
  const index = new SealedIdIndex();
  const segs = Array.from({ length: 3 }, (_, i) => ({ key: `records/p/r/seg-${i}.parquet`, names: ids(`f${i}`, 50_000) }));
  for (const s of segs) index.add({ key: s.key, partition: s.key, hashes: sortedHashes(s.names) }, false);
  assert.ok(!index.growing);
  for (const s of segs) assert.deepEqual(index.candidates(s.names[3]!, 'records/p/'), [s.key]);
  index.refill();
  for (const s of segs)
    for (const id of s.names.filter((_, i) => i % 97 === 0)) assert.deepEqual(index.candidates(id, 'records/p/'), [s.key]);
  let maybe = 0;
  for (const id of ids('absent', 50_000)) if (index.maybe(id)) maybe++;
  assert.ok(maybe / 50_000 < 0.01, `false positive rate ${maybe / 50_000}`);
});
