// Guarantees: a span delete removes the matching spans and every span below them, each once, whether
// the subtree lies in sealed segments, in memory or both, and when a matching span also lies below
// another matching span. A delete of leaf spans removes exactly them. (A span delete reads the
// subtrees of only the matches that have children: src/query/exec/record-delete.ts.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LogSpansRequest, LogTracesRequest } from '../../../src/schemas/ingest.js';
import { openStore } from '../../support/helpers.js';

const id = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
const T1 = id(0x100);
const T2 = id(0x200);
// Trace 1: W (workflow) -> A (agent) -> C1, C2 (tools, C1 tagged 'x'); L (llm, tagged 'leaf') under W;
// K (llm, tagged 'leaf') directly under the trace. Trace 2: a workflow V with one tool child D.
const [W, A, C1, C2, L, K, V, D, M] = [1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => id(n));
const traces = (ls: object): LogTracesRequest =>
  ({
    ...ls,
    traces: [
      {
        id: T1,
        name: 't1',
        spans: [
          {
            id: W,
            type: 'workflow',
            name: 'w',
            tags: ['root'],
            spans: [
              {
                id: A,
                type: 'agent',
                name: 'a',
                spans: [
                  { id: C1, type: 'tool', name: 'c1', tags: ['x'] },
                  { id: C2, type: 'tool', name: 'c2' },
                ],
              },
              { id: L, type: 'llm', name: 'l', tags: ['leaf'] },
            ],
          },
          { id: K, type: 'llm', name: 'k', tags: ['leaf'] },
        ],
      },
      { id: T2, name: 't2', spans: [{ id: V, type: 'workflow', name: 'v', spans: [{ id: D, type: 'tool', name: 'd' }] }] },
    ],
  }) as LogTracesRequest;

const spanIds = async (store: import('../../../src/engine/trace-store.js').TraceStore, projectId: string, ls: object) =>
  (await store.search('span', projectId, { ...ls, pagination: { limit: 100 } } as never)).records.map((r) => String(r['id'])).sort();
const tagged = (ls: object, ...tags: string[]) => ({
  ...ls,
  filter_tree: { or: tags.map((value) => ({ filter: { type: 'collection', column_id: 'tags', operator: 'contains', value } })) },
});

for (const sealed of [false, true]) {
  test(`a span delete takes each matching span's whole subtree once (${sealed ? 'sealed, plus a child in memory' : 'in memory'})`, async (t) => {
    const { store, projectId, logStreamId } = await openStore(t, { autoCompact: false });
    const ls = { log_stream_id: logStreamId };
    await store.logTraces(projectId, traces(ls));
    if (sealed) await store.flush();
    // A later child of A, logged on its own (in memory while the rest may be sealed).
    await store.records.logSpans(projectId, {
      ...ls,
      trace_id: T1,
      parent_id: A,
      spans: [{ id: M, type: 'tool', name: 'm' }],
    } as unknown as LogSpansRequest);
    // W and C1 both match; C1 is also under W: W's subtree (W, A, C1, C2, M, L) goes, each counted once.
    const r = await store.records.delete('span', projectId, tagged(ls, 'root', 'x') as never);
    assert.equal(r.deleted, 6);
    assert.deepEqual(await spanIds(store, projectId, ls), [K, V, D].sort());
    assert.equal((await store.count('span', projectId, ls)).total_count, 3);
  });
}

test('a delete of leaf spans removes exactly them and leaves their parents and siblings', async (t) => {
  const { store, projectId, logStreamId } = await openStore(t, { autoCompact: false });
  const ls = { log_stream_id: logStreamId };
  await store.logTraces(projectId, traces(ls));
  await store.flush();
  const r = await store.records.delete('span', projectId, tagged(ls, 'leaf') as never);
  assert.equal(r.deleted, 2);
  assert.deepEqual(await spanIds(store, projectId, ls), [W, A, C1, C2, V, D].sort());
  // W keeps A as a child; the trace keeps W.
  const w = (await store.search('span', projectId, { ...ls, filters: [{ type: 'id', column_id: 'id', value: W }] } as never)).records[0]!;
  assert.equal(w['has_children'], true);
});

test('a span whose last children a delete took, given a new child later, loses it to a delete of the span', async (t) => {
  const { store, projectId, logStreamId } = await openStore(t, { autoCompact: false });
  const ls = { log_stream_id: logStreamId };
  await store.logTraces(projectId, traces(ls));
  await store.flush();
  // V's only child D goes: V is marked childless. A new child of V then arrives, and V is deleted.
  assert.equal(
    (await store.records.delete('span', projectId, { ...ls, filters: [{ type: 'id', column_id: 'id', value: D }] } as never)).deleted,
    1,
  );
  await store.records.logSpans(projectId, {
    ...ls,
    trace_id: T2,
    parent_id: V,
    spans: [{ id: M, type: 'tool', name: 'm' }],
  } as unknown as LogSpansRequest);
  assert.equal(
    (await store.records.delete('span', projectId, { ...ls, filters: [{ type: 'id', column_id: 'id', value: V }] } as never)).deleted,
    2,
  );
  assert.deepEqual(await spanIds(store, projectId, ls), [W, A, C1, C2, L, K].sort());
});
