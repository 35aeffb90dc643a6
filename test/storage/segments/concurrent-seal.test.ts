// Guarantees: a request that replaces records (a client's retry) while a seal commits stays whole and
// replaces exactly the older versions: the retry looks its ids up in the sealed segments (ids still in
// memory it finds in the recent-ids map), and a seal committing during that look-up moves ids from
// memory into segments, so the retry must look again or the version it missed stays live beside the
// new one. The look-up is held (hold-sql.ts) while newer traces are logged and sealed, so the
// interleaving happens in every round; the sequence numbers in the segments show it did. Checked
// live, after what a SIGKILL would leave (the log replayed), and after a reopen. Found by the fuzzer's
// ledger: acknowledged spans went missing when a retried request was overtaken by a newer request
// and a seal.
import assert from 'node:assert/strict';
import { cpSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { DuckDBInstance, listValue } from '../../../src/vendor/duckdb.js';
import { Database } from '../../../src/db/database.js';
import { TraceStore } from '../../../src/engine/trace-store.js';
import { counts, scan } from '../../support/consistency.js';
import { openStore, tempDir } from '../../support/helpers.js';
import { holdSql } from '../../support/hold-sql.js';

/** name, output and seq of every trace row in the sealed segments (dead versions included). */
async function sealedTraceRows(dir: string): Promise<{ name: string; output: string | null; seq: number }[]> {
  const files = (readdirSync(join(dir, 'records'), { recursive: true }) as string[])
    .filter((f) => f.endsWith('.parquet') && f.includes('kind=trace'))
    .map((f) => join(dir, 'records', f));
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    const rows = (
      await c.runAndReadAll('SELECT name, output, seq FROM read_parquet($1::VARCHAR[], union_by_name = true)', [listValue(files)])
    ).getRowObjectsJS();
    return rows.map((r) => ({ name: String(r['name']), output: r['output'] === null ? null : String(r['output']), seq: Number(r['seq']) }));
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

test('a retried request overtaken by newer writes and a seal is not lost', { timeout: 300_000 }, async (t) => {
  const { dir, store, projectId, logStreamId } = await openStore(t, { sealRows: 1_000_000 });
  const traceOf = (i: number, spanIds: string[]) => ({
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    name: `t${i}`,
    input: 'q',
    spans: spanIds.map((id, k) => ({ id, type: 'tool' as const, name: `s${k}`, input: 'x' })),
  });
  const SPANS = 3000;
  const spanId = (i: number, k: number) => `00000000-0000-4000-9000-${String(i * 10_000 + k).padStart(12, '0')}`;
  const ROUNDS = 8;
  const NEWER = 3;
  for (let round = 0; round < ROUNDS; round++) {
    // A: sealed, then its first half sent again (that version in memory), then all of it again (the
    // retry): the retry finds the first half in memory and looks the second half up in the segments.
    const spans = Array.from({ length: SPANS }, (_, k) => spanId(round, k));
    const a = traceOf(round, spans);
    await store.logTraces(projectId, { log_stream_id: logStreamId, traces: [a] });
    await store.flush();
    await store.logTraces(projectId, {
      log_stream_id: logStreamId,
      traces: [{ ...traceOf(round, spans.slice(0, SPANS / 2)), output: `half ${round}` }],
    });
    const last = spans[SPANS - 1]!;
    const hold = holdSql(
      t,
      Database.prototype as never,
      (sql, params) => sql.includes('read_parquet') && JSON.stringify(params ?? []).includes(last),
      { method: 'all' },
    );
    const retry = store.logTraces(projectId, { log_stream_id: logStreamId, traces: [{ ...a, output: `retried ${round}` }] });
    const held = await Promise.race([hold.reached.then(() => true), retry.then(() => false)]);
    assert.ok(held, `round ${round}: the retry never looked its ids up in the segments`);
    // B: new traces logged and sealed while A looks its ids up; the first seal also takes A's half.
    for (let k = 0; k < NEWER; k++) {
      const i = 1000 + round * 100 + k;
      await store.logTraces(projectId, { log_stream_id: logStreamId, traces: [traceOf(i, [spanId(i, 0)])] });
      await store.flush();
    }
    hold.release();
    await retry;
    hold.restore();
  }
  const check = async (s: TraceStore, when: string) => {
    const c = await counts(s, projectId, { log_stream_id: logStreamId });
    const extra = ROUNDS * NEWER;
    assert.deepEqual(
      c,
      { trace: ROUNDS + extra, span: ROUNDS * SPANS + extra, session: ROUNDS + extra },
      `${when}: every acknowledged record is there`,
    );
    const retried = (await scan(s, 'trace', projectId, { log_stream_id: logStreamId })).filter((r) =>
      String(r['output']).startsWith('retried'),
    );
    assert.equal(retried.length, ROUNDS, `${when}: every retried trace holds its newest version`);
  };
  await check(store, 'live');
  // What a SIGKILL now would leave (the folder as it is, but the lock): the last retry is only in the
  // log, and replaying it must not skip it for the newer rows sealed meanwhile.
  const killed = join(tempDir(t), 'killed');
  cpSync(dir, killed, { recursive: true, filter: (src) => !src.endsWith('/LOCK') });
  const replayed = await TraceStore.open(killed);
  try {
    await check(replayed, 'after a crash');
  } finally {
    await replayed.close();
  }
  await store.close();
  const again = await TraceStore.open(dir);
  try {
    await check(again, 'after reopening');
  } finally {
    await again.close();
  }
  // The interleaving happened as meant: in every round the newer traces, sealed while the retry was
  // in flight, have smaller sequence numbers than the retry's rows (read from the segments).
  const rows = await sealedTraceRows(dir);
  const seqOf = (pred: (r: { name: string; output: string | null }) => boolean) => rows.find(pred)?.seq;
  for (let round = 0; round < ROUNDS; round++) {
    const retrySeq = seqOf((r) => r.output === `retried ${round}`);
    assert.ok(retrySeq !== undefined, `round ${round}: the retried version is in the segments`);
    for (let k = 0; k < NEWER; k++) {
      const name = `t${1000 + round * 100 + k}`;
      assert.ok(seqOf((r) => r.name === name)! < retrySeq, `round ${round}: ${name} was written and sealed ahead of the retry`);
    }
  }
});
