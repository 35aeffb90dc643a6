// Guarantees: records sealed into segments that carry shredded metric columns (different columns per
// segment) can still be looked up for writes: spans logged into a sealed trace, PATCHes of sealed
// traces and spans, and deletes that leave a sealed parent childless. Found by the fuzzer: each of
// these answered 500 (a UNION of the in-memory batch with segments of more columns).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TraceStore } from '../../../src/engine/trace-store.js';
import { openStore } from '../../support/helpers.js';

const T1 = '00000000-0000-4000-8000-000000000001';
const T2 = '00000000-0000-4000-8000-000000000002';
const S1 = '00000000-0000-4000-8000-000000000011';

test('writes that look up sealed records work when segments carry different metric columns', async (t) => {
  const { dir, store, projectId, logStreamId } = await openStore(t);
  const ls = { log_stream_id: logStreamId };
  await store.logTraces(projectId, {
    ...ls,
    traces: [{ id: T1, name: 't1', metrics: { a: 1 }, spans: [{ id: S1, type: 'workflow', name: 'wf', metrics: { c: 3 } }] }],
  });
  await store.flush();
  await store.logTraces(projectId, { ...ls, traces: [{ id: T2, name: 't2', metrics: { b: 2 } }] });
  await store.flush();
  // A span into a sealed trace, and into a sealed span (its parent gets has_children).
  await store.records.logSpans(projectId, {
    ...ls,
    trace_id: T1,
    parent_id: T1,
    spans: [{ type: 'tool', name: 'late', metrics: { d: 4 } }],
  });
  await store.records.logSpans(projectId, { ...ls, trace_id: T1, parent_id: S1, spans: [{ type: 'tool', name: 'child' }] });
  await store.records.logSpans(projectId, {
    ...ls,
    trace_id: T2,
    parent_id: T2,
    spans: [{ type: 'llm', name: 'chat', input: [{ role: 'user', content: 'q' }] }],
  });
  // PATCHes of sealed records.
  await store.records.updateRecord('trace', projectId, T2, { ...ls, output: 'done', duration_ns: 5 });
  await store.records.updateRecord('span', projectId, S1, { ...ls, output: 'wf done' });
  assert.equal((await store.count('span', projectId, ls)).total_count, 4);
  await store.flush();
  // A delete that leaves the sealed workflow span childless marks it so (an override, no rewrite).
  const del = await store.records.delete('span', projectId, {
    ...ls,
    filters: [{ type: 'text', column_id: 'name', operator: 'eq', value: 'child' }],
  });
  assert.equal(del.deleted, 1);
  const check = async (s: TraceStore) => {
    const spans = (await s.search('span', projectId, ls)).records;
    assert.deepEqual(spans.map((r) => r['name']).sort(), ['chat', 'late', 'wf']);
    assert.equal(spans.find((r) => r['name'] === 'wf')!['has_children'], false);
    assert.equal(spans.find((r) => r['name'] === 'wf')!['output'], 'wf done');
    const t2 = (await s.search('trace', projectId, { ...ls, filters: [{ type: 'id', column_id: 'id', value: T2 }] })).records[0]!;
    assert.equal(t2['output'], 'done');
    assert.deepEqual(t2['metrics'], { b: 2, duration_ns: 5 });
  };
  await check(store);
  await store.close();
  const again = await TraceStore.open(dir);
  try {
    await check(again);
  } finally {
    await again.close();
  }
});
