// Guarantees: an integer field beyond the 32-bit column range (status_code,
// control_id, step_number) is either refused with a 422 or stored; it never makes an acknowledged
// write disappear, takes other acknowledged records of the same write-ahead log file with it, or
// makes the next query fail. Found while checking the filter language with extreme numbers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidRequestError } from '../../../src/errors.js';
import { openStore } from '../../support/helpers.js';

for (const field of ['status_code', 'control_id', 'step_number'] as const) {
  test(`${field} = 2^31 is refused or stored, and never loses acknowledged records`, async (t) => {
    const { store, projectId, logStreamId } = await openStore(t);
    const L = { log_stream_id: logStreamId };
    const names = async () => (await store.search('span', projectId, L)).records.map((r) => r['name']).sort();
    await store.logTraces(projectId, {
      ...L,
      traces: [{ name: 't1', created_at: '2026-03-01T00:00:00Z', spans: [{ type: 'tool', name: 'before' }] }],
    } as any);
    assert.deepEqual(await names(), ['before']);
    const span = { type: 'control', name: 'big', [field]: 2 ** 31 };
    let refused = false;
    try {
      await store.logTraces(projectId, { ...L, traces: [{ name: 't2', created_at: '2026-03-01T00:00:00Z', spans: [span] }] } as any);
    } catch (err) {
      assert.ok(err instanceof InvalidRequestError, `refused with a 422, not ${(err as Error).message}`);
      refused = true;
    }
    await store.logTraces(projectId, {
      ...L,
      traces: [{ name: 't3', created_at: '2026-03-01T00:00:00Z', spans: [{ type: 'tool', name: 'after' }] }],
    } as any);
    assert.deepEqual(await names(), refused ? ['after', 'before'] : ['after', 'before', 'big']);
  });
}

test('a lone UTF-16 surrogate is stored as U+FFFD instead of poisoning the log', async (t) => {
  const { store, projectId, logStreamId } = await openStore(t);
  const L = { log_stream_id: logStreamId };
  await store.logTraces(projectId, {
    ...L,
    traces: [{ name: 'a', spans: [{ type: 'tool', name: 'bad\ud800name', input: { k: 'x\udc00' } }] }],
  } as any);
  await store.logTraces(projectId, { ...L, traces: [{ name: 'b', spans: [{ type: 'tool', name: 'fine' }] }] } as any);
  const names = (await store.search('span', projectId, L)).records.map((r) => r['name']).sort();
  assert.deepEqual(names, ['bad\ufffdname', 'fine']);
});

test('a log file the database refuses is loaded request by request; the refused request is kept aside', async (t) => {
  const { dir, store, projectId, logStreamId } = await openStore(t);
  const L = { log_stream_id: logStreamId };
  await store.logTraces(projectId, { ...L, traces: [{ name: 'kept-1', spans: [{ type: 'tool', name: 'one' }] }] } as any);
  await store.close();
  // Forge a request validation would have refused, between two good ones, in a new log file.
  const { readdirSync, readFileSync, writeFileSync, existsSync } = await import('node:fs');
  const walDir = `${dir}/wal`;
  const files = readdirSync(walDir)
    .filter((f) => f.startsWith('wal-'))
    .sort();
  const last = files[files.length - 1]!;
  const n = Number(/\d+/.exec(last)![0]) + 1;
  const line = (seq: number, extra: Record<string, unknown>) =>
    JSON.stringify({
      seq,
      id: `0b7e54c2-7d5b-4a0f-8d6e-3b2a1c0f9e${String(seq).padStart(2, '0')}`,
      type: 'tool',
      project_id: projectId,
      run_id: logStreamId,
      created_at: 1_700_000_000_000_000,
      name: `forged-${seq}`,
      ...extra,
    });
  writeFileSync(
    `${walDir}/wal-${String(n).padStart(9, '0')}.ndjson`,
    [line(90, {}), '{"commit":90}', line(91, { status_code: 2 ** 40 }), '{"commit":91}', line(92, {}), '{"commit":92}', ''].join('\n'),
  );
  const { TraceStore } = await import('../../../src/engine/trace-store.js');
  const again = await TraceStore.open(dir);
  const names = (await again.search('span', projectId, L)).records.map((r) => r['name']).sort();
  await again.close(); // before the fixture removes the folder
  assert.deepEqual(names, ['forged-90', 'forged-92', 'one']);
  assert.ok(existsSync(`${walDir}/rejected.ndjson`));
  assert.match(readFileSync(`${walDir}/rejected.ndjson`, 'utf8'), /forged-91/);
});
