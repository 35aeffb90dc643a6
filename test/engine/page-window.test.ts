// Guarantees: newest-first (and oldest-first) pages read through small created_at windows return
// exactly what a full scan returns, for filters of any selectivity and at any offset.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateBatches } from '../support/generator.js';
import { openStore } from '../support/helpers.js';

test('windowed pages equal full-scan pages', { timeout: 60_000 }, async (t) => {
  const small = await openStore(t, { rowGroupSize: 64, sealRows: 1500, walRollBytes: 200_000, pageWindowRows: 100 });
  const full = await openStore(t, { rowGroupSize: 64, sealRows: 1500, walRollBytes: 200_000, pageWindowRows: 10_000_000 });
  for (const fx of [small, full]) {
    for (const batch of generateBatches({ spans: 4000, batchSpans: 500, seed: 21 })) {
      await fx.store.logTraces(fx.projectId, { log_stream_id: fx.logStreamId, traces: batch as never });
    }
  }
  await small.store.flush();
  await full.store.flush();
  // Sealed into row groups of 64 rows: a window of 100 rows spans a few of them.
  assert.ok(small.store.stats.sealedRows > 4000, JSON.stringify(small.store.stats));
  const filters = [
    [],
    [{ type: 'text', column_id: 'type', operator: 'eq', value: 'llm' }],
    [{ type: 'number', column_id: 'status_code', operator: 'eq', value: 500 }],
    [{ type: 'text', column_id: 'name', operator: 'eq', value: 'no such name' }],
  ];
  for (const f of filters) {
    for (const ascending of [false, true]) {
      for (const offset of [0, 37, 2000]) {
        const body = { log_stream_id: small.logStreamId, filters: f, starting_token: offset, limit: 25, ...(ascending ? { sort: { column_id: 'created_at', ascending } } : {}) };
        const a = await small.store.search('span', small.projectId, body);
        const b = await full.store.search('span', full.projectId, { ...body, log_stream_id: full.logStreamId });
        assert.deepEqual(a.records.map((r) => r['id']), b.records.map((r) => r['id']), `${JSON.stringify(f)} asc=${ascending} offset=${offset}`);
        assert.equal(a.next_starting_token, b.next_starting_token);
      }
    }
  }
});
