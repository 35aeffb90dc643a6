// Guarantees of minted ids (src/ingest/flatten.ts, record.ts markMintedFresh): only ids minted from a
// fresh random seed are marked as new (no client id, no idempotency key, no ancestor with a client
// id), and the store trusts the mark only for them: a marked row skips the sealed-id lookup, a client
// id or a derived id that exists still replaces its record.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { flattenSpans, flattenTraces } from '../../src/ingest/flatten.js';
import { idSeed } from '../../src/ingest/ids.js';
import { markMintedFresh, takeMintedFresh } from '../../src/record/record.js';
import { openRecordStore, openStore, ROWS_PROJECT, ROWS_RUN, rowId, toolRows } from '../support/helpers.js';

const P = '11111111-1111-4111-8111-111111111111';
const R = '22222222-2222-4222-8222-222222222222';
const T1 = '00000000-0000-4000-8000-0000000000a1';
const S1 = '00000000-0000-4000-8000-0000000000b1';
const ctx = { projectId: P, runId: R, receivedUs: 1_700_000_000_000_000 };

test('only ids minted from a random seed are marked new, and the mark is taken once', () => {
  const body = {
    traces: [
      { name: 'minted', spans: [{ type: 'workflow' as const, name: 'w', spans: [{ type: 'tool' as const, name: 'x' }] }] },
      {
        id: T1,
        name: 'given',
        spans: [
          { type: 'tool' as const, name: 'under-given' },
          { id: S1, type: 'tool' as const, name: 'given-span' },
        ],
      },
    ],
  };
  const flat = flattenTraces(body, ctx);
  const marked = (d: object) => takeMintedFresh(d as never);
  assert.deepEqual(
    flat.traces.map((t) => marked(t.record)),
    [true, false],
  );
  // Spans: two minted under the minted trace; under the given trace one derived from it, one given.
  assert.deepEqual(
    flat.spans.map((s) => [s['name'], marked(s)]),
    [
      ['w', true],
      ['x', true],
      ['under-given', false],
      ['given-span', false],
    ],
  );
  assert.equal(marked(flat.traces[0]!.record), false, 'taken once');
  // An idempotency key's seed mints the same ids on a retry: none is marked.
  const keyed = flattenTraces(body, { ...ctx, idSeed: idSeed('key-1', P, R, 'traces') });
  assert.deepEqual([...keyed.traces.map((t) => t.record), ...keyed.spans].map(marked), [false, false, false, false, false, false]);
  const spans = flattenSpans(
    {
      trace_id: T1,
      parent_id: T1,
      spans: [
        { type: 'tool', name: 'a' },
        { id: S1, type: 'tool', name: 'b' },
      ],
    },
    ctx,
    1,
  );
  assert.deepEqual(spans.map(marked), [true, false]);
});

test('a marked row skips the sealed lookup; an unmarked one with a stored id replaces it', async (t) => {
  const { store } = await openRecordStore(t);
  await store.append(toolRows(0, 100), true);
  await store.seal();
  // The mark is a promise that the id is new: broken on purpose here, it shows the lookup is skipped.
  const [liar] = toolRows(5, 1, { name: 'marked-' });
  markMintedFresh(liar!);
  await store.append([liar!], true);
  assert.equal((await store.lookup(ROWS_PROJECT, ROWS_RUN, [rowId(5)])).length, 2);
  // Without the mark the stored version is found and replaced.
  await store.append(toolRows(6, 1, { name: 'client-' }), true);
  const six = await store.lookup(ROWS_PROJECT, ROWS_RUN, [rowId(6)]);
  assert.deepEqual(
    six.map((r) => r.name),
    ['client-6'],
  );
});

test('re-logging a sealed trace with its client id replaces it and its derived spans; traces without ids stay apart', async (t) => {
  const { store, projectId, logStreamId } = await openStore(t);
  const ls = { log_stream_id: logStreamId };
  const trace = {
    id: T1,
    name: 't',
    spans: [
      { type: 'tool' as const, name: 'derived' },
      { id: S1, type: 'tool' as const, name: 'given' },
    ],
  };
  await store.logTraces(projectId, { ...ls, traces: [trace, { name: 'anon', spans: [{ type: 'tool', name: 'anon-span' }] }] });
  await store.flush();
  await store.logTraces(projectId, {
    ...ls,
    traces: [
      { ...trace, name: 't2' },
      { name: 'anon', spans: [{ type: 'tool', name: 'anon-span' }] },
    ],
  });
  await store.flush();
  const traces = (await store.search('trace', projectId, ls)).records.map((r) => r['name']).sort();
  assert.deepEqual(traces, ['anon', 'anon', 't2']);
  const spans = (await store.search('span', projectId, ls)).records.map((r) => r['name']).sort();
  assert.deepEqual(spans, ['anon-span', 'anon-span', 'derived', 'given']);
});
