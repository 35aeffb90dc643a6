// Guarantees: a delete that takes a parent's last child shows the parent with has_children false
// everywhere (search, partial search, count and filters, the trace tree, store.sql, export) without
// writing a new version of the parent: the override goes into the delete's own log entry, survives a
// crash and a reopen, moves to the manifest with the seal and into the file with a merge. A newer
// version of the parent (a child logged again, a PATCH) is not hidden by the older override.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { TraceStore } from '../../../src/engine/trace-store.js';
import type { LogTracesRequest } from '../../../src/schemas/ingest.js';
import { openStore, tempDir } from '../../support/helpers.js';
import { nodeEntry } from '../../support/node-entry.js';

const T = '00000000-0000-4000-8000-0000000000a1';
const W = '00000000-0000-4000-8000-0000000000b1';
const C = '00000000-0000-4000-8000-0000000000c1';
const X = '00000000-0000-4000-8000-0000000000d1';
const NO_COMPACT = { autoCompact: false };

/** A trace with a workflow span W (one child C, tagged 'gone') and a tool span X beside it. */
const trace = (ls: object): LogTracesRequest =>
  ({
    ...ls,
    traces: [
      {
        id: T,
        name: 't',
        spans: [
          { id: W, type: 'workflow', name: 'wf', spans: [{ id: C, type: 'tool', name: 'child', tags: ['gone'], metrics: { score: 2 } }] },
          { id: X, type: 'tool', name: 'x' },
        ],
      },
    ],
  }) as LogTracesRequest;
const deleteChild = (ls: object) => ({ ...ls, filters: [{ type: 'collection', column_id: 'tags', operator: 'contains', value: 'gone' }] });
const hcIs = (value: boolean) => ({ filters: [{ type: 'boolean', column_id: 'has_children', operator: 'eq', value }] });

/** has_children of W as every read shows it (they must agree), and W's updated_at. */
async function readW(store: TraceStore, projectId: string, ls: object): Promise<{ hc: boolean; updatedAt: unknown }> {
  const spans = (await store.search('span', projectId, ls)).records;
  const w = spans.find((r) => r['id'] === W)!;
  const partial = (await store.partialSearch('span', projectId, { ...ls, select_columns: { column_ids: ['has_children'] } })).records.find(
    (r) => r['id'] === W,
  )!;
  const tree = await store.records.getRecord('trace', projectId, T);
  const inTree = (tree['spans'] as Record<string, unknown>[]).find((s) => s['id'] === W)!;
  const [sql] = await store.data.sql('SELECT has_children FROM spans WHERE id = $1', [W]);
  const exported: Record<string, unknown>[] = [];
  for await (const b of store.data.export(projectId, ls)) for (const row of b) exported.push(row.toJSON() as Record<string, unknown>);
  const withChildren = (await store.search('span', projectId, { ...ls, ...hcIs(true) })).records.map((r) => r['id']);
  const without = (await store.count('span', projectId, { ...ls, ...hcIs(false) })).total_count;
  const hc = w['has_children'] as boolean;
  const all = {
    search: hc,
    partial: partial['has_children'],
    tree: inTree['has_children'],
    sql: sql!['has_children'],
    export: exported.find((r) => r['id'] === W)!['has_children'],
    filterTrue: withChildren.includes(W),
    filterFalse: without === spans.filter((r) => r['has_children'] === false).length,
  };
  assert.deepEqual(
    all,
    { search: hc, partial: hc, tree: hc, sql: hc, export: hc, filterTrue: hc, filterFalse: true },
    'every read shows the same has_children',
  );
  return { hc, updatedAt: w['updated_at'] };
}

const manifest = (dir: string) =>
  JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { childless?: number[]; segments: unknown[] };

test('a delete of the last child (parent still in memory) marks the parent childless without a new version of it', async (t) => {
  const { store, projectId, logStreamId } = await openStore(t, NO_COMPACT);
  const ls = { log_stream_id: logStreamId };
  await store.logTraces(projectId, trace(ls));
  const before = await readW(store, projectId, ls);
  assert.equal(before.hc, true);
  // A metric filter: W matches through the roll-up of its child's value (the planner reads has_children).
  const scored = { ...ls, filters: [{ type: 'number', column_id: 'metrics/score', operator: 'gte', value: 2 }] };
  assert.deepEqual((await store.search('span', projectId, scored)).records.map((r) => r['id']).sort(), [W, C].sort());
  const rows = store.records.stats.memRows;
  assert.equal((await store.records.delete('span', projectId, deleteChild(ls))).deleted, 1);
  assert.deepEqual((await store.search('span', projectId, scored)).records, [], 'nothing left to roll up');
  assert.equal((await store.count('span', projectId, scored)).total_count, 0);
  const after = await readW(store, projectId, ls);
  assert.equal(after.hc, false);
  assert.equal(after.updatedAt, before.updatedAt, 'the parent row is the same version');
  assert.equal(store.records.stats.memRows, rows, 'no row was written for the parent');
  // The trace keeps a child (X): it is not marked.
  assert.equal((await store.search('trace', projectId, ls)).records[0]!['has_children'], true);
});

test('a sealed parent left childless: the override survives reopen, the seal and a merge, then leaves the manifest', async (t) => {
  const { dir, store, projectId, logStreamId } = await openStore(t, NO_COMPACT);
  const ls = { log_stream_id: logStreamId };
  await store.logTraces(projectId, trace(ls));
  await store.flush();
  const before = await readW(store, projectId, ls);
  await store.records.delete('span', projectId, deleteChild(ls));
  assert.equal(store.records.stats.memRows, 0, 'nothing but the tombstone and the override was logged');
  assert.deepEqual(await readW(store, projectId, ls), { hc: false, updatedAt: before.updatedAt });
  await store.close(); // seals: the override of a row sealed earlier goes to the manifest
  assert.equal(manifest(dir).childless?.length, 1);
  let again = await TraceStore.open(dir, NO_COMPACT);
  try {
    assert.deepEqual(await readW(again, projectId, ls), { hc: false, updatedAt: before.updatedAt });
    // The segment holding W is a third dead (C): the merge rewrites it and writes the value in.
    assert.ok((await again.maintenance.compact()).merges >= 1);
    assert.deepEqual(manifest(dir).childless, []);
    assert.deepEqual(await readW(again, projectId, ls), { hc: false, updatedAt: before.updatedAt });
  } finally {
    await again.close();
  }
  again = await TraceStore.open(dir, NO_COMPACT);
  try {
    assert.deepEqual(await readW(again, projectId, ls), { hc: false, updatedAt: before.updatedAt });
    const [stored] = await again.data.sql('SELECT count(*) AS n FROM spans WHERE id = $1', [W]);
    assert.equal(Number(stored!['n']), 1);
  } finally {
    await again.close();
  }
});

test('after a crash right after the delete, the replayed log keeps the parent childless', async (t) => {
  const dir = tempDir(t);
  let store = await TraceStore.open(dir);
  const p = store.createProject({ name: 'p' });
  const ls = { log_stream_id: store.createLogStream(p.id, 's').id };
  await store.close();
  const ops = [['log', p.id, trace(ls)], ['flush'], ['delete', 'span', p.id, deleteChild(ls)]];
  const child = spawnSync(process.execPath, [...nodeEntry('test/support/ops-then-die.ts'), dir, JSON.stringify(ops)], { encoding: 'utf8' });
  assert.equal(child.signal, 'SIGKILL', child.stderr);
  store = await TraceStore.open(dir, NO_COMPACT);
  try {
    assert.equal((await readW(store, p.id, ls)).hc, false);
    assert.deepEqual((await store.search('span', p.id, ls)).records.map((r) => r['name']).sort(), ['wf', 'x']);
    await store.flush();
    assert.equal((await readW(store, p.id, ls)).hc, false, 'and once the log is sealed');
  } finally {
    await store.close();
  }
});

for (const sealed of [false, true]) {
  test(`a newer version of the parent wins over the older override (${sealed ? 'sealed' : 'in memory'})`, async (t) => {
    const { dir, store, projectId, logStreamId } = await openStore(t, NO_COMPACT);
    const ls = { log_stream_id: logStreamId };
    await store.logTraces(projectId, trace(ls));
    if (sealed) await store.flush();
    await store.records.delete('span', projectId, deleteChild(ls));
    // A PATCH writes a new version from what reads show: still childless, with the new output.
    await store.records.updateRecord('span', projectId, W, { ...ls, output: 'patched' });
    assert.equal((await readW(store, projectId, ls)).hc, false);
    if (sealed) await store.flush();
    // A child logged again under it: the new version has children, whatever the override says.
    await store.records.logSpans(projectId, { ...ls, trace_id: T, parent_id: W, spans: [{ type: 'tool', name: 'again' }] });
    assert.equal((await readW(store, projectId, ls)).hc, true);
    await store.close();
    const again = await TraceStore.open(dir, NO_COMPACT);
    try {
      await again.maintenance.compact();
      const w = await readW(again, projectId, ls);
      assert.equal(w.hc, true);
      const spans = (await again.search('span', projectId, ls)).records;
      assert.equal(spans.find((r) => r['id'] === W)!['output'], 'patched');
    } finally {
      await again.close();
    }
  });
}

test('deleting a whole run-wide selection: traces left without spans read as empty, and a filter finds them', async (t) => {
  const { store, projectId, logStreamId } = await openStore(t, NO_COMPACT);
  const ls = { log_stream_id: logStreamId };
  const traces = Array.from({ length: 6 }, (_, i) => ({
    name: `t${i}`,
    spans: [{ type: 'tool' as const, name: `s${i}`, tags: i % 2 === 0 ? ['gone'] : [] }],
  }));
  await store.logTraces(projectId, { ...ls, traces });
  await store.flush();
  const rows = store.records.stats.sealedRows + store.records.stats.memRows;
  assert.equal((await store.records.delete('span', projectId, deleteChild(ls))).deleted, 3);
  assert.equal(store.records.stats.sealedRows + store.records.stats.memRows, rows, 'no trace was rewritten');
  const empty = (await store.search('trace', projectId, { ...ls, ...hcIs(false) })).records.map((r) => r['name']).sort();
  assert.deepEqual(empty, ['t0', 't2', 't4']);
  assert.equal((await store.count('trace', projectId, { ...ls, ...hcIs(true) })).total_count, 3);
  const [n] = await store.data.sql('SELECT count(*) AS n FROM traces WHERE NOT has_children');
  assert.equal(Number(n!['n']), 3);
});

test('overrides past the policy bound make the compactor rewrite the segment holding them, however little of it is dead', async (t) => {
  // deadShare above 1: no segment is ever rewritten for its dead rows; maxChildless 0: any override is too many.
  const options = { autoCompact: false, compaction: { maxSegmentRows: 2_000_000, deadShare: 1.5, maxChildless: 0 } };
  const { dir, store, projectId, logStreamId } = await openStore(t, options);
  const ls = { log_stream_id: logStreamId };
  await store.logTraces(projectId, trace(ls));
  await store.flush();
  await store.records.delete('span', projectId, deleteChild(ls));
  await store.close();
  assert.equal(manifest(dir).childless?.length, 1);
  const again = await TraceStore.open(dir, options);
  try {
    assert.equal((await again.maintenance.compact()).merges, 1);
    assert.deepEqual(manifest(dir).childless, []);
    assert.equal((await readW(again, projectId, ls)).hc, false);
    assert.equal((await again.maintenance.compact()).merges, 0, 'nothing left to fold');
  } finally {
    await again.close();
  }
});
