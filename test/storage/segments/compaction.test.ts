// Guarantees: compaction merges small segments and drops dead rows without changing what queries
// return, before or after a reopen; replaced and deleted records stay replaced and deleted; the merge
// policy picks what it says.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { TraceStore } from '../../../src/engine/trace-store.js';
import { MAX_TIER_FANIN, PAUSE_MERGE_RATIO, pickMerge, pickTiered } from '../../../src/storage/segments/compaction.js';
import type { SegmentEntry } from '../../../src/storage/manifest/manifest.js';
import { generateBatches } from '../../support/generator.js';
import { everyKindTrace, openStore } from '../../support/helpers.js';

const seg = (file: string, rows: number, extra: Partial<SegmentEntry> = {}): SegmentEntry => ({
  file,
  project_id: 'p',
  run_id: 'r',
  kind: 'span',
  rows,
  bytes: rows,
  min_seq: 0,
  max_seq: 0,
  min_created_us: 0,
  max_created_us: 0,
  metrics: [],
  row_groups: [],
  ...extra,
});

test('the merge policy: four small segments of a partition merge; mostly dead ones are rewritten alone', () => {
  assert.equal(
    pickMerge([seg('a', 10), seg('b', 10), seg('c', 10)], () => 0),
    null,
  );
  assert.deepEqual(
    pickMerge([seg('a', 40), seg('b', 10), seg('c', 30), seg('d', 20), seg('e', 3_000_000)], () => 0)!.map((s) => s.file),
    ['b', 'd', 'c', 'a'],
  );
  assert.equal(
    pickMerge([seg('a', 10), seg('b', 10), seg('c', 10, { kind: 'trace' }), seg('d', 10, { run_id: 'x' })], () => 0),
    null,
    'partitions merge apart',
  );
  assert.deepEqual(
    pickMerge([seg('a', 100), seg('b', 100)], (s) => (s.file === 'b' ? 40 : 0))!.map((s) => s.file),
    ['b'],
  );
});

test('a quiet merge leaves out a segment far larger than the smaller ones together', () => {
  const files = (pick: SegmentEntry[] | null) => pick?.map((s) => s.file) ?? null;
  // 900k rows would be rewritten to add 85k: the four small ones merge without it.
  assert.deepEqual(
    files(pickMerge([seg('big', 900_000), seg('a', 25_000), seg('b', 25_000), seg('c', 25_000), seg('d', 10_000)], () => 0)),
    ['d', 'a', 'b', 'c'],
  );
  assert.equal(
    pickMerge([seg('big', 900_000), seg('a', 25_000), seg('b', 25_000), seg('c', 25_000)], () => 0),
    null,
    'three small ones wait',
  );
  // Each left out in turn, largest first; a big one joins once the rest add a quarter of its rows.
  assert.deepEqual(files(pickMerge([seg('x', 4000), seg('y', 900), seg('a', 10), seg('b', 10), seg('c', 10), seg('d', 10)], () => 0)), [
    'a',
    'b',
    'c',
    'd',
  ]);
  assert.deepEqual(files(pickMerge([seg('x', 400), seg('a', 25), seg('b', 25), seg('c', 25), seg('d', 25)], () => 0)), [
    'a',
    'b',
    'c',
    'd',
    'x',
  ]);
  // In the pauses of logging a segment joins only when the rest hold as many rows: it at least doubles.
  const pause = (list: SegmentEntry[]) => files(pickMerge(list, () => 0, undefined, PAUSE_MERGE_RATIO));
  assert.deepEqual(pause([seg('x', 175), seg('a', 25), seg('b', 25), seg('c', 25), seg('d', 25)]), ['a', 'b', 'c', 'd']);
  assert.deepEqual(pause([seg('x', 100), seg('a', 25), seg('b', 25), seg('c', 25), seg('d', 25)]), ['a', 'b', 'c', 'd', 'x']);
});

test('the merge policy while logging goes on: segments of one size tier merge, one merge per partition', () => {
  const files = (groups: SegmentEntry[][]) => groups.map((g) => g.map((s) => s.file).sort());
  // A big segment does not join a merge of new small ones (pickMerge would rewrite it with them).
  assert.deepEqual(files(pickTiered([seg('big', 1_500_000), seg('a', 24_000), seg('b', 24_000), seg('c', 23_000), seg('d', 25_000)])), [
    ['a', 'b', 'c', 'd'],
  ]);
  assert.deepEqual(
    files(pickTiered([seg('big', 1_500_000), seg('a', 24_000), seg('b', 24_000), seg('c', 23_000)])),
    [],
    'three of a size wait for a fourth',
  );
  // Sizes more than a factor four apart are different tiers; the smallest full tier goes first.
  assert.deepEqual(
    files(pickTiered([seg('a', 10), seg('b', 10), seg('c', 10), seg('m', 100), seg('n', 100), seg('o', 100), seg('p', 100)])),
    [['m', 'n', 'o', 'p']],
  );
  assert.deepEqual(files(pickTiered([seg('a', 10), seg('b', 20), seg('c', 30), seg('d', 40), seg('e', 41)])), [['a', 'b', 'c', 'd']]);
  // Every partition with a full tier gets its merge in the same round: trace and session segments
  // do not wait behind the spans'.
  const trace = { kind: 'trace' as const };
  const other = { run_id: 'x' };
  const round = pickTiered([
    ...['s1', 's2', 's3', 's4', 's5'].map((f) => seg(f, 24_000)),
    ...['t1', 't2', 't3', 't4'].map((f) => seg(f, 2_800, trace)),
    ...['x1', 'x2', 'x3', 'x4'].map((f) => seg(f, 500, other)),
  ]);
  assert.deepEqual(files(round), [
    ['s1', 's2', 's3', 's4', 's5'],
    ['t1', 't2', 't3', 't4'],
    ['x1', 'x2', 'x3', 'x4'],
  ]);
  // At most MAX_TIER_FANIN at once, and never past the size cap.
  const many = Array.from({ length: MAX_TIER_FANIN + 20 }, (_, i) => seg(`m${i}`, 1000));
  assert.equal(pickTiered(many)[0]!.length, MAX_TIER_FANIN);
  const capped = pickTiered(Array.from({ length: 6 }, (_, i) => seg(`c${i}`, 600_000)));
  assert.equal(capped[0]!.length, 4, 'four always merge; more only while under the cap');
  assert.deepEqual(pickTiered([seg('a', 10), seg('b', 10), seg('c', 10, trace), seg('d', 10, other)]), [], 'partitions merge apart');
});

test('compaction keeps every record, drops dead rows, and replaced/deleted records stay so after reopen', {
  timeout: 120_000,
}, async (t) => {
  const { dir, store, projectId, logStreamId } = await openStore(t, { sealRows: 300, walRollBytes: 100_000, autoCompact: false });
  const L = { log_stream_id: logStreamId };
  for (const batch of generateBatches({ spans: 3000, batchSpans: 250, seed: 5 })) {
    await store.logTraces(projectId, { ...L, traces: batch as never });
    await store.flush(); // many small segments
  }
  const fixed = { ...everyKindTrace('fixed'), id: '4c7e54c2-7d5b-4a0f-8d6e-3b2a1c0f9e41' };
  await store.logTraces(projectId, { ...L, traces: [fixed as never] });
  await store.flush();
  // Replace a sealed record (a retry with a changed output) and delete some spans.
  await store.logTraces(projectId, { ...L, traces: [{ ...fixed, output: 'changed' } as never] });
  const toolFilter = { ...L, filters: [{ type: 'text', column_id: 'type', operator: 'eq', value: 'tool' }] };
  const deletedIds = new Set<string>();
  for (let token: number | null = 0; token !== null; ) {
    const page = await store.search('span', projectId, { ...toolFilter, starting_token: token, limit: 1000 });
    for (const r of page.records) deletedIds.add(String(r['id']));
    token = page.next_starting_token;
  }
  const deleted = await store.records.delete('span', projectId, toolFilter);
  assert.ok(deleted.deleted >= deletedIds.size && deletedIds.size > 50);
  await store.flush();
  const before = store.records.stats;
  const snapshot = async (s: TraceStore) => {
    const all: Record<string, unknown>[] = [];
    for (const level of ['span', 'trace', 'session'] as const) {
      for (let token: number | null = 0; token !== null; ) {
        const page = await s.search(level, projectId, { ...L, starting_token: token, limit: 1000 });
        all.push(...page.records);
        token = page.next_starting_token;
      }
    }
    return all.map((r) => JSON.stringify(r)).sort();
  };
  const expected = await snapshot(store);
  assert.ok(before.segments > 12 && before.dead > 0, JSON.stringify(before));
  const { merges } = await store.maintenance.compact();
  assert.ok(merges > 0);
  const after = store.records.stats;
  assert.ok(after.segments < before.segments, `${before.segments} -> ${after.segments} segments`);
  assert.ok(after.dead < before.dead, `${before.dead} -> ${after.dead} dead seqs kept`);
  const actual = await snapshot(store);
  const missing = expected.filter((r) => !actual.includes(r));
  const extra = actual.filter((r) => !expected.includes(r));
  assert.deepEqual(
    [missing.length, extra.length],
    [0, 0],
    `queries return the same records; first missing: ${missing[0]?.slice(0, 400)}; first extra: ${extra[0]?.slice(0, 400)}`,
  );
  const trace = (await store.search('trace', projectId, { ...L, filters: [{ type: 'id', column_id: 'id', value: fixed.id }] })).records;
  assert.equal(trace.length, 1);
  assert.equal(trace[0]!['output'], 'changed');
  // A retry after compaction still replaces rather than duplicates (the id index follows the merge).
  await store.logTraces(projectId, { ...L, traces: [{ ...fixed, output: 'again' } as never] });
  assert.equal(
    (await store.count('trace', projectId, { ...L, filters: [{ type: 'id', column_id: 'id', value: fixed.id }] })).total_count,
    1,
  );
  assert.equal(
    (await store.count('span', projectId, { ...L, filters: [{ type: 'id', column_id: 'trace_id', value: fixed.id }] })).total_count,
    6,
    'spans of the retried trace: replaced, and the deleted tool span logged anew',
  );
  const final = await snapshot(store);
  await store.close();
  const again = await TraceStore.open(dir);
  const reopened = await snapshot(again);
  await again.close();
  assert.equal(reopened.length, final.length);
  assert.deepEqual(reopened, final, 'the same records after a reopen');
  // The last retry logged the fixed trace's tool span anew: only that one may be back.
  const back = reopened.filter((r) => deletedIds.has(String(JSON.parse(r).id)));
  assert.ok(
    back.length <= 1 && back.every((r) => JSON.parse(r).trace_id === fixed.id),
    `deleted tool spans stay deleted (${back.length} back)`,
  );
});

test('segments of one seal share seq ranges: a rewrite purges only the dead rows its own files hold', async (t) => {
  // deadShare tiny: any segment with a dead row is rewritten, so a range-based guess would rewrite the
  // trace and session segments too and forget the span tombstones that fall inside their ranges.
  const { store, projectId, logStreamId } = await openStore(t, {
    autoCompact: false,
    compaction: { maxSegmentRows: 2_000_000, deadShare: 0.001 },
  });
  const L = { log_stream_id: logStreamId };
  for (let i = 0; i < 20; i++) await store.logTraces(projectId, { ...L, traces: [everyKindTrace(`r${i}`) as never] });
  await store.flush();
  const filter = { ...L, filters: [{ type: 'text', column_id: 'type', operator: 'one_of', value: ['tool', 'control'] }] };
  const { deleted } = await store.records.delete('span', projectId, filter);
  assert.equal(deleted, 40);
  // Merges purge only tombstones in the manifest, which they reach with the seal of their log file.
  await store.flush();
  await store.maintenance.compact();
  assert.equal((await store.count('span', projectId, filter)).total_count, 0, 'deleted spans stay deleted');
  assert.equal((await store.count('span', projectId, L)).total_count, 80);
  assert.equal(store.records.stats.dead, 0, 'the span segment was rewritten without its dead rows, so no tombstone is needed any more');
});

test('merged inputs leave the disk once no query can be reading them', { timeout: 120_000 }, async (t) => {
  const { dir, store, projectId, logStreamId } = await openStore(t, { sealRows: 200, autoCompact: false });
  for (const batch of generateBatches({ spans: 2000, batchSpans: 200, seed: 9 })) {
    await store.logTraces(projectId, { log_stream_id: logStreamId, traces: batch as never });
    await store.flush();
  }
  const onDisk = () =>
    readdirSync(join(dir, 'records'), { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.parquet')).length;
  const before = onDisk();
  // A query running while compaction swaps the manifest must still answer from the files it planned over.
  const counting = store.count('span', projectId, { log_stream_id: logStreamId });
  const { merges } = await store.maintenance.compact();
  assert.ok(merges > 0);
  const total = (await counting).total_count;
  assert.ok(total >= 2000, `the in-flight count answered ${total}`);
  assert.equal(
    onDisk(),
    store.records.stats.segments,
    `${before} files before, ${store.records.stats.segments} segments after: only live segments stay on disk`,
  );
  assert.ok(store.records.stats.segments < before);
  assert.equal((await store.count('span', projectId, { log_stream_id: logStreamId })).total_count, total);
});
