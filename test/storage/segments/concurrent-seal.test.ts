// Guarantees: rows reach the write-ahead log in sequence-number order, so a seal that runs while a
// request is between taking its sequence numbers and writing its rows cannot leave those rows behind
// (the log loader skips rows at or below the sealed sequence number). Found by the fuzzer's ledger:
// acknowledged spans went missing when a retried request (whose ids needed a look-up in the sealed
// segments) was overtaken by a newer request and a seal.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TraceStore } from '../../../src/engine/trace-store.js';
import { counts, scan } from '../../support/consistency.js';
import { openStore } from '../../support/helpers.js';

test('a retried request overtaken by newer writes and a seal is not lost', { timeout: 120_000 }, async (t) => {
  const { dir, store, projectId, logStreamId } = await openStore(t, { sealRows: 1_000_000 });
  const traceOf = (i: number, spanIds: string[]) => ({
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    name: `t${i}`,
    input: 'q',
    spans: spanIds.map((id, k) => ({ id, type: 'tool' as const, name: `s${k}`, input: 'x' })),
  });
  const SPANS = 3000;
  const spanId = (i: number, k: number) => `00000000-0000-4000-9000-${String(i * 10_000 + k).padStart(12, '0')}`;
  const expected = new Map<string, number>();
  let extra = 0;
  const ROUNDS = 8;
  for (let round = 0; round < ROUNDS; round++) {
    // A: a trace sealed already, sent again (a client retry: its ids are looked up in the segments first).
    // Many spans, so looking their ids up in the segments takes a while.
    const a = traceOf(round, Array.from({ length: SPANS }, (_, k) => spanId(round, k)));
    await store.logTraces(projectId, { log_stream_id: logStreamId, traces: [a] });
    await store.flush();
    let done = false;
    const retry = store.logTraces(projectId, { log_stream_id: logStreamId, traces: [{ ...a, output: `retried ${round}` }] }).finally(() => (done = true));
    // B: new traces logged and sealed, again and again, while A looks its ids up.
    let k = 0;
    while (!done) {
      const id = 1000 + round * 100 + k++;
      await store.logTraces(projectId, { log_stream_id: logStreamId, traces: [traceOf(id, [spanId(id, 0)])] });
      extra++;
      await store.flush();
    }
    await retry;
    expected.set(a.id, 2);
  }
  const check = async (s: TraceStore, when: string) => {
    const c = await counts(s, projectId, { log_stream_id: logStreamId });
    assert.deepEqual(c, { trace: ROUNDS + extra, span: ROUNDS * SPANS + extra, session: ROUNDS + extra }, `${when}: every acknowledged record is there`);
    const retried = (await scan(s, 'trace', projectId, { log_stream_id: logStreamId })).filter((r) => String(r['output']).startsWith('retried'));
    assert.equal(retried.length, ROUNDS, `${when}: every retried trace holds its newest version`);
  };
  await check(store, 'live');
  await store.close();
  const again = await TraceStore.open(dir);
  try {
    await check(again, 'after reopening');
  } finally {
    await again.close();
  }
});
