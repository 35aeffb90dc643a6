// Guarantees: deleting a run (or a project) forgets only the dead rows of the segments it removes.
// Segments of different runs cover overlapping ranges of sequence numbers; a record deleted earlier
// in another run, whose number falls in a removed segment's range, stays deleted, live and after
// reopening. Found by the extended crash test (acknowledged deletes came back after a run deletion).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TraceStore } from '../../src/engine/trace-store.js';
import { openStore } from '../support/helpers.js';

test('deleting a run does not bring back records deleted in another run', async (t) => {
  const { dir, store, projectId } = await openStore(t);
  const a = store.createLogStream(projectId, 'a').id;
  const b = store.createLogStream(projectId, 'b').id;
  // Interleaved, so run a's segment spans the numbers of run b's records.
  await store.logTraces(projectId, { log_stream_id: a, traces: [{ name: 'a1' }] });
  await store.logTraces(projectId, {
    log_stream_id: b,
    traces: [{ name: 'b-deleted', tags: ['x'], spans: [{ type: 'tool', name: 's' }] }, { name: 'b-kept' }],
  });
  await store.logTraces(projectId, { log_stream_id: a, traces: [{ name: 'a2' }] });
  await store.flush();
  const del = await store.records.delete('trace', projectId, {
    log_stream_id: b,
    filters: [{ type: 'collection', column_id: 'tags', operator: 'contains', value: 'x' }],
  });
  assert.equal(del.deleted, 2);
  await store.catalog.deleteRun(projectId, a);
  const names = async (s: TraceStore) => (await s.search('trace', projectId, { log_stream_id: b })).records.map((r) => r['name']);
  assert.deepEqual(await names(store), ['b-kept']);
  await store.close();
  const again = await TraceStore.open(dir);
  try {
    assert.deepEqual(await names(again), ['b-kept'], 'after reopening, the deleted trace is still gone');
    assert.equal((await again.count('span', projectId, {})).total_count, 0);
  } finally {
    await again.close();
  }
});

test('compacting one run does not bring back records deleted in another run', { timeout: 60_000 }, async (t) => {
  const { dir, store, projectId } = await openStore(t);
  const compact = () => store.maintenance.compact();
  const a = store.createLogStream(projectId, 'a').id;
  const b = store.createLogStream(projectId, 'b').id;
  // Several small segments in run a, each spanning the numbers of a record of run b.
  for (let i = 0; i < 6; i++) {
    await store.logTraces(projectId, { log_stream_id: a, traces: [{ name: `a${i}` }] });
    await store.logTraces(projectId, { log_stream_id: b, traces: [{ name: `b${i}`, tags: [`b${i}`] }] });
    await store.logTraces(projectId, { log_stream_id: a, traces: [{ name: `a${i}-2` }] });
    await store.flush();
  }
  for (let i = 0; i < 6; i += 2)
    await store.records.delete('trace', projectId, {
      log_stream_id: b,
      filters: [{ type: 'collection', column_id: 'tags', operator: 'contains', value: `b${i}` }],
    });
  await store.records.delete('trace', projectId, {
    log_stream_id: a,
    filters: [{ type: 'text', column_id: 'name', operator: 'eq', value: 'a0' }],
  });
  await compact();
  await compact();
  const names = async (s: TraceStore) =>
    (await s.search('trace', projectId, { log_stream_id: b })).records.map((r) => String(r['name'])).sort();
  assert.deepEqual(await names(store), ['b1', 'b3', 'b5']);
  await store.close();
  const again = await TraceStore.open(dir);
  try {
    assert.deepEqual(await names(again), ['b1', 'b3', 'b5'], 'after reopening, the deleted traces of run b are still gone');
    assert.equal((await again.count('trace', projectId, { log_stream_id: a })).total_count, 11);
  } finally {
    await again.close();
  }
});
