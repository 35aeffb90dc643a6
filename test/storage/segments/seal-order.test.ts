// Guarantees: a seal writes a partition whose rows came nearly in created_at order as they came (no
// sort), still leaving out the table's dead rows and writing its has_children overrides; a partition
// with a row far out of order, or rows without a time (a replayed log), is sorted by created_at, id.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import type { RecordStore } from '../../../src/storage/record-store.js';
import type { LogRow } from '../../../src/record/record.js';
import { MemTable } from '../../../src/storage/memtable/mem-tables.js';
import { nearlyOrdered } from '../../../src/storage/segments/seal.js';
import { openRecordStore } from '../../support/helpers.js';
import { sql } from '../../../src/query/sql.js';

const P = '11111111-1111-4111-8111-111111111111';
const R = '22222222-2222-4222-8222-222222222222';
const T0 = 1_700_000_000_000_000;

function row(k: number, createdUs: number, name = `r${k}`): LogRow {
  const id = `00000000-0000-4000-8000-${String(k).padStart(12, '0')}`;
  return {
    seq: 0,
    id,
    type: 'tool',
    project_id: P,
    run_id: R,
    trace_id: id,
    name,
    input: 'x',
    created_at: createdUs,
    updated_at: 0,
    is_complete: true,
    has_children: true,
  };
}

async function fileRows(store: RecordStore, dir: string) {
  const files = (await store.db.all(sql`SELECT file FROM glob(${join(dir, 'records/**/kind=span/*.parquet')})`)).map((r) =>
    String(r['file']),
  );
  assert.equal(files.length, 1);
  return (
    await store.db.all(
      sql`SELECT seq, id, name, epoch_us(created_at) AS c, has_children FROM read_parquet(${files[0]!}) ORDER BY file_row_number`,
    )
  ).map((r) => ({
    seq: Number(r['seq']),
    name: String(r['name']),
    c: Number(r['c']),
    has_children: r['has_children'],
  }));
}

test('rows that came in time order are sealed as they came, without dead rows, overrides written', async (t) => {
  const { dir, store } = await openRecordStore(t);
  // Ties on created_at with ids descending: a sort by (created_at, id) would reverse each pair.
  const rows: LogRow[] = [];
  for (let k = 0; k < 40; k++) rows.push(row(1000 - k, T0 + Math.floor(k / 2) * 1000));
  await store.append(rows, true);
  // A replaced version (dead in the same table) and a row made childless.
  await store.append([row(1000, T0 + 50_000, 'v2')], true);
  await store.deleteSeqs([], [2]);
  await store.seal();
  const got = await fileRows(store, dir);
  assert.deepEqual(
    got.map((r) => r.seq),
    Array.from({ length: 40 }, (_, i) => i + 1)
      .filter((q) => q !== 1)
      .concat([41]),
    'arrival (seq) order, the replaced version left out',
  );
  assert.equal(got.find((r) => r.seq === 2)!.has_children, false);
  assert.equal(got.find((r) => r.seq === 3)!.has_children, true);
  assert.equal(got.at(-1)!.name, 'v2');
});

test('a row far out of time order makes the seal sort', async (t) => {
  // Row groups of 4 rows: 31 rows over ~10 s, a group holds ~1.3 s of time; the late row lags 10 s.
  const { dir, store } = await openRecordStore(t, { rowGroupSize: 4 });
  const rows: LogRow[] = [];
  for (let k = 0; k < 30; k++) rows.push(row(k, T0 + k * 1000));
  rows.push(row(99, T0 - 10_000_000));
  await store.append(rows, true);
  await store.seal();
  const got = await fileRows(store, dir);
  assert.equal(got.length, 31);
  for (let i = 1; i < got.length; i++) assert.ok(got[i - 1]!.c <= got[i]!.c, `row ${i} in created_at order`);
});

test('nearlyOrdered: lags up to a few row groups of time pass; more, or rows without a time, do not', () => {
  const t = new MemTable(1, 1, Promise.resolve());
  const rowsAt = (cs: unknown[]) => cs.map((c, i) => ({ id: `id${i}`, type: 'tool', created_at: c }));
  // 100 rows over 99 s, row groups of 10 rows: 9.9 s of time a group; a lag of 30 s is within 4 groups.
  const times = Array.from({ length: 100 }, (_, i) => i * 1_000_000);
  times[50] = 20_000_000;
  t.noteRows(P, R, rowsAt(times), new Map(), 0, []);
  const part = [...t.partitions.values()][0]!;
  assert.equal(part.behindUs, 29_000_000);
  assert.equal(nearlyOrdered(part, 10), true);
  assert.equal(nearlyOrdered(part, 2), false, 'groups of 2 rows: 2 s a group, 29 s is too far');
  const u = new MemTable(2, 1, Promise.resolve());
  u.noteRows(P, R, rowsAt([1, 2, undefined, 4]), new Map(), 0, []);
  assert.equal(nearlyOrdered([...u.partitions.values()][0]!, 10), false);
});
