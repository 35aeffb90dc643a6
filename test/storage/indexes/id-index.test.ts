// Guarantees of the id index (src/storage/indexes/id-index.ts, id-filter.ts, ids-file.ts): a segment's
// filter passes every hash it was built from and few others, survives its file's round trip, and the
// index's answers over real `.ids` files searched in place are exactly those of a Set of the ids.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { FENCE_STEP, IdFilter, readIdFilter, writeIdFilter } from '../../../src/storage/indexes/id-filter.js';
import { idHash, SealedIdIndex, sortedHashes } from '../../../src/storage/indexes/id-index.js';
import { IdsFile } from '../../../src/storage/indexes/ids-file.js';
import { tempDir } from '../../support/helpers.js';
import { Rng } from '../../support/fuzz/rng.js';

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

/** A segment's `.ids` file and filter written under `dir`, as a seal writes them. */
function segment(dir: string, key: string, names: readonly string[]) {
  const hashes = sortedHashes(names);
  const path = join(dir, `${key.replace(/\W/g, '_')}.ids`);
  writeFileSync(path, hashes);
  return { key, partition: key, filter: IdFilter.of(hashes), ids: path, names };
}

test('a filter passes every hash it holds and about 1% of others (10 bits a key)', () => {
  for (const n of [0, 1, 100, 5_000, 200_000]) {
    const held = sortedHashes(ids(`f${n}`, n));
    const filter = IdFilter.of(held);
    assert.equal(filter.count, n);
    for (const h of held) assert.ok(filter.has(h), `held hash ${h} of ${n}`);
    if (n < 5_000) continue;
    let maybe = 0;
    const asked = 100_000;
    for (let i = 0; i < asked; i++) if (filter.has(idHash(`absent-${n}-${i}`))) maybe++;
    // An ideal 7-probe filter at 10 bits a key: 0.8%; 64-byte blocks cost a little more. A filter
    // with every bit set (or probes that ignore the hash) would pass nearly everything.
    assert.ok(maybe / asked < 0.02, `false positive rate ${maybe / asked} at ${n}`);
    assert.ok(filter.bytes < n * 1.4, `${filter.bytes} bytes for ${n} ids`);
  }
});

test("a filter's file gives back the same filter; a truncated or foreign file is no filter", (t) => {
  const dir = tempDir(t);
  const held = sortedHashes(ids('rt', 3_000));
  const filter = IdFilter.of(held);
  const seg = join(dir, 'seg-1.parquet');
  writeIdFilter(seg, filter);
  const back = readIdFilter(seg)!;
  assert.ok(back);
  assert.equal(back.count, 3_000);
  assert.deepEqual([...back.fences], [...filter.fences]);
  assert.deepEqual([...back.bits], [...filter.bits]);
  const bytes = filter.encode();
  assert.equal(IdFilter.decode(bytes.subarray(0, bytes.length - 1)), null, 'truncated');
  const foreign = bytes.slice();
  foreign[0] = 0;
  assert.equal(IdFilter.decode(foreign), null, 'wrong magic');
  // An unaligned copy (a small file read into a shared pool) decodes too.
  const shifted = new Uint8Array(bytes.length + 3);
  shifted.set(bytes, 3);
  assert.deepEqual([...IdFilter.decode(shifted.subarray(3))!.bits], [...filter.bits]);
  assert.equal(readIdFilter(join(dir, 'none.parquet')), null);
});

test('the .ids file searched in place finds every stored hash, at block edges too, and no other', (t) => {
  const dir = tempDir(t);
  const rng = new Rng(17);
  // Edges of the 53-bit range plus random hashes: several blocks, a partial last one.
  const edge = [0, 1, 2 ** 21, 2 ** 53 - 2, 2 ** 53 - 1];
  const random = Array.from({ length: FENCE_STEP * 5 + 37 }, () => Math.floor(rng.next() * 2 ** 32) * 2 ** 21 + rng.int(0, 2 ** 21 - 1));
  const sorted = Float64Array.from(new Set([...edge, ...random])).sort();
  const path = join(dir, 'a.ids');
  writeFileSync(path, sorted);
  const file = new IdsFile(path, IdFilter.of(sorted));
  const held = new Set(sorted);
  for (const h of sorted) assert.ok(file.has(h), `stored ${h}`);
  // Neighbours of every stored hash (just below and above a fence included) are absent.
  for (const h of sorted) {
    for (const d of [-1, 1]) if (!held.has(h + d) && h + d >= 0) assert.equal(file.has(h + d), false, `absent ${h + d}`);
  }
  file.close();
  const empty = join(dir, 'e.ids');
  writeFileSync(empty, new Float64Array(0));
  assert.equal(new IdsFile(empty, IdFilter.of(new Float64Array(0))).has(5), false);
});

test("the index's candidates are exactly the segments whose ids hold the asked one, per run prefix", (t) => {
  const dir = tempDir(t);
  const index = new SealedIdIndex();
  const segs = Array.from({ length: 6 }, (_, i) => segment(dir, `records/p/r${i % 2}/seg-${i}.parquet`, ids(`s${i}`, 20_000)));
  // An id kept by two segments of one run (a replaced version not yet merged away).
  const shared = segment(dir, 'records/p/r0/seg-9.parquet', [segs[0]!.names[7]!, 'only-9']);
  for (const s of [...segs, shared]) index.add(s);
  assert.equal(index.size, 6 * 20_000 + 2);
  const sets = [...segs, shared].map((s) => ({ key: s.key, set: new Set(s.names) }));
  const expected = (id: string, prefix: string) =>
    sets
      .filter((s) => s.key.startsWith(prefix) && s.set.has(id))
      .map((s) => s.key)
      .sort();
  const asked = [...segs.flatMap((s) => s.names.filter((_, i) => i % 53 === 0)), ...ids('new', 30_000), 'only-9'];
  for (const prefix of ['records/p/r0', 'records/p/r1', 'records/p/']) {
    for (const id of asked) assert.deepEqual(index.candidates(id, prefix).sort(), expected(id, prefix), `${id} under ${prefix}`);
  }
  assert.deepEqual(index.candidates(segs[0]!.names[7]!, 'records/p/r0').sort(), [segs[0]!.key, shared.key].sort());
  index.remove(segs[0]!.key);
  assert.equal(index.size, 5 * 20_000 + 2);
  assert.deepEqual(index.candidates(segs[0]!.names[5]!, 'records/p/'), []);
  // Adding a key again replaces it (size counts it once).
  index.add(segment(dir, segs[1]!.key, segs[1]!.names));
  assert.equal(index.size, 5 * 20_000 + 2);
  assert.ok(index.bytes < index.size * 1.4, `${index.bytes} bytes in memory for ${index.size} ids`);
  index.close();
  assert.equal(index.size, 0);
});

test('mayHoldAny names the segments holding one of the hashes, none for new ids, and keeps segments it does not index', (t) => {
  const dir = tempDir(t);
  const index = new SealedIdIndex();
  const a = segment(dir, 'A', ids('a', 20_000));
  const b = segment(dir, 'B', ids('b', 20_000));
  index.add(a);
  index.add(b);
  assert.deepEqual([...index.mayHoldAny(['A', 'B'], sortedHashes(ids('new', 50_000)))], []);
  assert.deepEqual([...index.mayHoldAny(['A', 'B'], sortedHashes([...ids('new', 1_000), b.names[12_345]!]))], ['B']);
  assert.deepEqual(new Set(index.mayHoldAny(['A', 'B'], sortedHashes([a.names[0]!, b.names[19_999]!]))), new Set(['A', 'B']));
  // Only the keys asked about, and one the index has never seen stays in (nothing is known of it).
  assert.deepEqual(new Set(index.mayHoldAny(['B', 'C'], sortedHashes([a.names[0]!]))), new Set(['C']));
  index.remove('B');
  assert.deepEqual(
    new Set(index.mayHoldAny(['A', 'B'], sortedHashes([b.names[5]!]))),
    new Set(['B']),
    'a removed segment is unknown again',
  );
  index.close();
});

test('a sorted batch merged with an .ids file of several chunks meets it exactly when it shares a hash', (t) => {
  const dir = tempDir(t);
  const rng = new Rng(5);
  // Three 1 MiB chunks and a part, of even hashes: odd ones are certainly absent.
  const stored = Float64Array.from({ length: 300_000 }, () => 2 * Math.floor(rng.next() * 2 ** 51)).sort();
  const path = join(dir, 'big.ids');
  writeFileSync(path, stored);
  const file = new IdsFile(path, IdFilter.of(stored));
  const odd = (n: number) => Float64Array.from({ length: n }, () => 2 * Math.floor(rng.next() * 2 ** 51) + 1);
  for (const n of [1, 10, 5_000, 400_000]) {
    const absent = odd(n).sort();
    assert.equal(file.meetsAny(absent), false, `${n} absent hashes`);
    // One stored hash from each region (first, each chunk's edges, last) makes it meet.
    for (const at of [0, 131_071, 131_072, 262_144, 299_999]) {
      const batch = Float64Array.from([...absent, stored[at]!]).sort();
      assert.equal(file.meetsAny(batch), true, `${n} absent and stored[${at}]`);
    }
  }
  assert.equal(file.meetsAny(new Float64Array(0)), false);
  file.close();
});
