// Guarantees of the store's id filter (src/storage/indexes/store-id-filter.ts) and of the id index
// using it: it passes every hash added and few others; its checkpoint round-trips and a cut or foreign
// one is ignored; with it, the index's answers stay exactly those of a Set of the ids across many
// segments, whether a segment came with its hashes (a seal, a merge) or was covered in the
// background (an open), across removals, a rebuild when it fills, and a reopen from its checkpoint.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { IdFilter, probe, readIdFences, writeIdFilter } from '../../../src/storage/indexes/id-filter.js';
import { idHash, SealedIdIndex, sortedHashes } from '../../../src/storage/indexes/id-index.js';
import { CHECKPOINT, FULL, StoreIdFilter } from '../../../src/storage/indexes/store-id-filter.js';
import { tempDir } from '../../support/helpers.js';

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

/** A segment's `.ids` and `.idf` files written under `dir`, as a seal writes them. */
function segment(dir: string, key: string, names: readonly string[]) {
  const hashes = sortedHashes(names);
  const parquet = join(dir, `${key.replace(/\W/g, '_')}.parquet`);
  const path = parquet.replace(/\.parquet$/, '.ids');
  writeFileSync(path, hashes);
  const filter = IdFilter.of(hashes);
  writeIdFilter(parquet, filter);
  return { key, partition: key, filter, ids: path, names, hashes, parquet };
}

type Seg = ReturnType<typeof segment>;

/** Every answer of `index` for `asked` under each prefix equals a Set's over `segs`. */
function assertExact(
  index: SealedIdIndex,
  segs: readonly Seg[],
  asked: readonly string[],
  prefixes: readonly string[],
  what: string,
): void {
  const sets = segs.map((s) => ({ key: s.key, set: new Set(s.names) }));
  for (const prefix of prefixes)
    for (const id of asked) {
      const expected = sets
        .filter((s) => s.key.startsWith(prefix) && s.set.has(id))
        .map((s) => s.key)
        .sort();
      assert.deepEqual(index.candidates(id, prefix).sort(), expected, `${what}: ${id} under ${prefix}`);
    }
}

test('the store filter passes every hash added and few others; its checkpoint round-trips, a cut or foreign one is none', async (t) => {
  const dir = tempDir(t);
  const f = StoreIdFilter.sized(200_000);
  const held = sortedHashes(ids('held', 200_000));
  f.add(held, probe);
  for (const h of held) assert.ok(f.hasProbe(probe(h)));
  let maybe = 0;
  for (let i = 0; i < 100_000; i++) if (f.hasProbe(probe(idHash(`absent-${i}`)))) maybe++;
  // Sized with room to grow: fewer false hits than a segment's filter at first.
  assert.ok(maybe / 100_000 < 0.015, `false positive rate ${maybe / 100_000}`);
  assert.ok(f.fill > 0.3 && f.fill < 0.6, `fill ${f.fill}`);
  f.covered.set('records/a/seg-1.parquet', 200_000);
  await f.save(dir);
  const back = StoreIdFilter.load(dir)!;
  assert.ok(back);
  assert.equal(back.blocks, f.blocks);
  assert.equal(back.fill, f.fill);
  assert.deepEqual([...back.covered], [['records/a/seg-1.parquet', 200_000]]);
  assert.ok(Buffer.from(back.bits.buffer).equals(Buffer.from(f.bits.buffer)));
  const path = join(dir, CHECKPOINT);
  const bytes = readFileSync(path);
  truncateSync(path, bytes.length - 1);
  assert.equal(StoreIdFilter.load(dir), null, 'cut short');
  const foreign = Buffer.from(bytes);
  foreign[0] = 0;
  writeFileSync(path, foreign);
  assert.equal(StoreIdFilter.load(dir), null, 'wrong magic');
  assert.equal(StoreIdFilter.load(join(dir, 'none')), null, 'missing');
});

test('a filter sized for its ids takes a fifth more before it is full, and is full before false hits pass 3%', () => {
  const f = StoreIdFilter.sized(200_000);
  f.add(sortedHashes(ids('held', 200_000)), probe);
  assert.equal(f.full, false);
  // Its growth room is a quarter: a rebuild is not due again a few thousand ids later.
  f.add(sortedHashes(ids('later', 40_000)), probe);
  assert.equal(f.full, false, `full at fill ${f.fill} after a fifth more ids`);
  let added = 240_000;
  for (let i = 0; !f.full; i++, added += 10_000) f.add(sortedHashes(ids(`more${i}`, 10_000)), probe);
  assert.ok(added <= 320_000, `still not full after ${added} ids`);
  let maybe = 0;
  for (let i = 0; i < 100_000; i++) if (f.hasProbe(probe(idHash(`absent-${i}`)))) maybe++;
  assert.ok(maybe / 100_000 < 0.03, `false positive rate ${maybe / 100_000} when full`);
});

test("covered small segments keep their own bits (within a bound), a large one's are dropped; answers stay exact", async (t) => {
  const dir = tempDir(t);
  const index = new SealedIdIndex();
  index.useStoreFilter(null, 600_000);
  const small = [0, 1, 2].map((i) => segment(dir, `records/p/run_id=r/seg-${i}.parquet`, ids(`small${i}`, 20_000)));
  const large = segment(dir, 'records/p/run_id=r/seg-9.parquet', ids('large', 300_000));
  for (const s of [...small, large]) index.add(s);
  await index.settled();
  assert.equal(index.uncovered, 0);
  const smallBits = small.reduce((n, s) => n + s.filter.bits.byteLength, 0);
  assert.equal(index.keptBytes, smallBits, 'the small segments keep their bits, the large one none');
  const asked = [
    ...small.flatMap((s) => s.names.filter((_, i) => i % 101 === 0)),
    ...large.names.filter((_, i) => i % 997 === 0),
    ...ids('new', 50_000),
  ];
  assertExact(index, [...small, large], asked, ['records/p/run_id=r/', 'records/p/'], 'kept and dropped bits');
  // A removed small segment gives its kept bytes back.
  index.remove(small[0]!.key);
  assert.equal(index.keptBytes, smallBits - small[0]!.filter.bits.byteLength);
  await index.stop();
  index.close();
  assert.equal(index.keptBytes, 0);
});

test("with the store filter the index's answers equal a Set's across many segments, covered at add or in the background, removed, rebuilt", async (t) => {
  const dir = tempDir(t);
  const index = new SealedIdIndex();
  // Sized for few ids: adding more fills it and makes it rebuild.
  index.useStoreFilter(null, 1_000);
  const segs: Seg[] = [];
  for (let i = 0; i < 12; i++) segs.push(segment(dir, `records/p/run_id=r${i % 2}/seg-${i}.parquet`, ids(`s${i}`, 15_000)));
  // An id kept by two segments of one run (a replaced version not yet merged away).
  const shared = segment(dir, 'records/p/run_id=r0/seg-90.parquet', [segs[0]!.names[7]!, 'only-90']);
  segs.push(shared);
  // Half come with their hashes (as a seal gives them), half with only their own filter (as an open).
  for (const [i, s] of segs.entries()) index.add(i % 2 === 0 ? s : { key: s.key, partition: s.partition, filter: s.filter, ids: s.ids });
  const prefixes = ['records/p/run_id=r0/', 'records/p/run_id=r1/', 'records/p/'];
  const asked = () => [...segs.flatMap((s) => s.names.filter((_, i) => i % 97 === 0)), ...ids('new', 20_000), 'only-90'];
  assertExact(index, segs, asked(), prefixes, 'mixed');
  await index.settled();
  assert.equal(index.uncovered, 0, 'every segment covered once the background work is done');
  // It filled past its size on the way and was rebuilt for the ids held.
  assert.ok(index.storeFill < FULL, `fill ${index.storeFill}`);
  assertExact(index, segs, asked(), prefixes, 'covered');
  // Beside the small covered segments' own bits (kept: their runs' false hits are asked in memory), only
  // the store filter and fences are in memory: about 1.25 bytes per id (plus growth room).
  assert.ok(index.keptBytes > 0 && index.keptBytes <= 8 << 20, `${index.keptBytes} bytes kept`);
  assert.ok(index.bytes - index.keptBytes < index.size * 2, `${index.bytes - index.keptBytes} bytes for ${index.size} ids`);
  // A merge: inputs removed, the output (their union) added with its hashes.
  const merged = segment(dir, 'records/p/run_id=r0/seg-100.parquet', [...segs[0]!.names, ...segs[2]!.names, 'merged-only']);
  index.add(merged);
  index.remove(segs[0]!.key);
  index.remove(segs[2]!.key);
  const after = [merged, ...segs.filter((s) => s !== segs[0] && s !== segs[2])];
  assertExact(index, after, [...asked(), 'merged-only'], prefixes, 'after a merge');
  // A removed segment's ids remain in the filter as extra hits only: no candidate names it.
  assert.deepEqual(index.candidates(segs[2]!.names[3]!, 'records/p/run_id=r1/'), []);
  // A bulk load's batch: new ids meet nothing; one stored id among many names its segment (more than
  // 64 filter hits read a covered segment's own bits from its `.idf`).
  const batch = sortedHashes(ids('bulk', 100_000));
  assert.deepEqual(
    [
      ...index.mayHoldAny(
        after.map((s) => s.key),
        batch,
      ),
    ],
    [],
  );
  const withOne = sortedHashes([...ids('bulk', 100_000), segs[5]!.names[4_321]!]);
  assert.deepEqual(
    [
      ...index.mayHoldAny(
        after.map((s) => s.key),
        withOne,
      ),
    ],
    [segs[5]!.key],
  );
  const many = sortedHashes([...segs[3]!.names.slice(0, 500), ...ids('bulk', 2_000)]);
  assert.deepEqual(
    [
      ...index.mayHoldAny(
        after.map((s) => s.key),
        many,
      ),
    ],
    [segs[3]!.key],
  );
  await index.stop();
  index.close();
});

test('a checkpoint names the segments it covers: a reopen needs only their fences, a changed segment is not trusted', async (t) => {
  const dir = tempDir(t);
  const segs = Array.from({ length: 6 }, (_, i) => segment(dir, `records/p/run_id=r/seg-${i}.parquet`, ids(`c${i}`, 10_000)));
  const first = new SealedIdIndex();
  first.useStoreFilter(dir, 0, 0);
  for (const s of segs) first.add(s);
  await first.settled();
  assert.ok(existsSync(join(dir, CHECKPOINT)), 'saved once it missed more than allowed');
  await first.stop();
  first.close();

  const again = new SealedIdIndex();
  again.useStoreFilter(dir, 0, 0);
  for (const s of segs.slice(0, 5)) {
    assert.ok(again.covers(s.key, 10_000));
    again.add({ key: s.key, partition: s.partition, filter: readIdFences(s.parquet)!, ids: s.ids });
  }
  // The last segment rewritten with other ids under its name: the count differs, its own filter is read.
  const changed = segment(dir, segs[5]!.key, ids('other', 9_000));
  assert.equal(again.covers(changed.key, 9_000), false);
  again.add({ key: changed.key, partition: changed.partition, filter: changed.filter, ids: changed.ids });
  assert.equal(again.uncovered, 1);
  const now = [...segs.slice(0, 5), changed];
  const asked = [...now.flatMap((s) => s.names.filter((_, i) => i % 31 === 0)), ...ids('c5', 200), ...ids('fresh', 10_000)];
  assertExact(again, now, asked, ['records/p/run_id=r/'], 'reopened');
  await again.settled();
  assert.equal(again.uncovered, 0);
  assertExact(again, now, asked, ['records/p/run_id=r/'], 'reopened, covered');
  // A segment given with fences only that the filter does not cover is refused (it could not be asked).
  assert.throws(() =>
    again.add({ key: 'records/p/run_id=r/seg-77.parquet', partition: 'x', filter: readIdFences(segs[0]!.parquet)!, ids: segs[0]!.ids }),
  );
  await again.stop();
  again.close();
});

test("a loaded checkpoint's bits are read when first asked; a checkpoint gone by then makes every id a hit and the filter full", async (t) => {
  const dir = tempDir(t);
  const f = StoreIdFilter.sized(50_000);
  const held = sortedHashes(ids('held', 50_000));
  f.add(held, probe);
  f.covered.set('records/a/seg-1.parquet', 50_000);
  await f.save(dir);

  const lazy = StoreIdFilter.load(dir)!;
  assert.equal(lazy.loaded, false, 'only the header is read at load');
  assert.equal(lazy.bytes, 0);
  assert.equal(lazy.fill, f.fill, 'the fill comes from the header');
  assert.deepEqual([...lazy.covered], [['records/a/seg-1.parquet', 50_000]]);
  for (const h of held) assert.ok(lazy.hasProbe(probe(h)));
  assert.equal(lazy.loaded, true);
  assert.ok(Buffer.from(lazy.bits.buffer).equals(Buffer.from(f.bits.buffer)));

  // The file cut (or replaced) between the load and the first question: no bit can be trusted.
  const cut = StoreIdFilter.load(dir)!;
  const path = join(dir, CHECKPOINT);
  truncateSync(path, readFileSync(path).length - 64);
  for (let i = 0; i < 1_000; i++) assert.ok(cut.hasProbe(probe(idHash(`absent-${i}`))), 'every id a hit');
  assert.equal(cut.full, true, 'so it is rebuilt');
});

test('deferUntil holds the background cover until its wait settles; answers stay exact meanwhile, and a stop ends the wait', async (t) => {
  const dir = tempDir(t);
  const segs = Array.from({ length: 3 }, (_, i) => segment(dir, `records/p/run_id=r/seg-${i}.parquet`, ids(`d${i}`, 5_000)));
  const asked = [...segs.flatMap((s) => s.names.filter((_, i) => i % 97 === 0)), ...ids('fresh', 2_000)];
  let released = false;
  let waits = 0;
  const gate = (stopped: () => boolean) =>
    new Promise<void>((resolve) => {
      waits++;
      const tick = setInterval(() => {
        if (released || stopped()) {
          clearInterval(tick);
          resolve();
        }
      }, 2);
    });
  const index = new SealedIdIndex();
  index.useStoreFilter(null, 0);
  index.deferUntil(gate);
  // As an open adds them: filters and files, no hashes (a seal's outputs bring theirs, added at once).
  const opened = (s: Seg) => ({ key: s.key, partition: s.partition, filter: s.filter, ids: s.ids });
  for (const s of segs) index.add(opened(s));
  // Many turns later, nothing is covered: the work waits (without the deferral 15k hashes take a turn or two).
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(index.uncovered, 3);
  assertExact(index, segs, asked, ['records/p/run_id=r/'], 'deferred');
  released = true;
  await index.settled();
  assert.equal(index.uncovered, 0);
  assert.equal(waits, 1, 'only the first background work waits');
  const late = segment(dir, 'records/p/run_id=r/seg-9.parquet', ids('late', 5_000));
  index.add(opened(late));
  await index.settled();
  assert.equal(index.uncovered, 0, 'later work does not wait');
  assertExact(index, [...segs, late], [...asked, ...ids('late', 50)], ['records/p/run_id=r/'], 'covered');
  await index.stop();
  index.close();

  // A stop while the work waits ends the wait: the stop settles.
  const held = new SealedIdIndex();
  held.useStoreFilter(null, 0);
  held.deferUntil(gate);
  released = false;
  held.add(opened(segment(dir, 'records/p/run_id=r/seg-20.parquet', ids('h', 1_000))));
  await new Promise((r) => setTimeout(r, 20));
  await held.stop();
  assert.equal(held.uncovered, 1);
  held.close();
  t.after(() => {
    released = true;
  });
});
