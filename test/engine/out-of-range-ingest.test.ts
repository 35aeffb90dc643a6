// Guarantees (todo until fixed): an integer field beyond the 32-bit column range (status_code,
// control_id, step_number) is either refused with a 422 or stored; it never makes an acknowledged
// write disappear, takes other acknowledged records of the same write-ahead log file with it, or
// makes the next query fail. Found while checking the filter language with extreme numbers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidRequestError } from '../../src/errors.js';
import { openStore } from '../support/helpers.js';

const TODO =
  'an integer past 2^31-1 passes the ingest schema (Type.Integer, no bound), is acknowledged, then fails the WAL load ("Failed to cast value to numerical"): the record and the other records of its WAL file are lost, and the first query after fails with STORAGE_FAILURE';

for (const field of ['status_code', 'control_id', 'step_number'] as const) {
  test(`${field} = 2^31 is refused or stored, and never loses acknowledged records`, { todo: TODO }, async (t) => {
    const { store, projectId, logStreamId } = await openStore(t);
    const L = { log_stream_id: logStreamId };
    const names = async () => (await store.search('span', projectId, L)).records.map((r) => r['name']).sort();
    await store.logTraces(projectId, { ...L, traces: [{ name: 't1', created_at: '2026-03-01T00:00:00Z', spans: [{ type: 'tool', name: 'before' }] }] } as any);
    assert.deepEqual(await names(), ['before']);
    const span = { type: 'control', name: 'big', [field]: 2 ** 31 };
    let refused = false;
    try {
      await store.logTraces(projectId, { ...L, traces: [{ name: 't2', created_at: '2026-03-01T00:00:00Z', spans: [span] }] } as any);
    } catch (err) {
      assert.ok(err instanceof InvalidRequestError, `refused with a 422, not ${(err as Error).message}`);
      refused = true;
    }
    await store.logTraces(projectId, { ...L, traces: [{ name: 't3', created_at: '2026-03-01T00:00:00Z', spans: [{ type: 'tool', name: 'after' }] }] } as any);
    assert.deepEqual(await names(), refused ? ['after', 'before'] : ['after', 'before', 'big']);
  });
}
