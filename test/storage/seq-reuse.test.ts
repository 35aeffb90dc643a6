// Guarantees: sequence numbers are never reused across a restart. Rows deleted while still only in the
// log are skipped when the log is replayed, but their numbers stay taken: a row given one of them
// would be dead on arrival (an acknowledged record invisible for good). Found by the extended crash
// test: after a crash right after a delete of the newest records, what was logged next vanished.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { TraceStore } from '../../src/engine/trace-store.js';
import { tempDir } from '../support/helpers.js';
import { nodeEntry } from '../support/node-entry.js';

test('after a crash that followed a delete of the newest records, new records are visible and the deleted stay gone', async (t) => {
  const dir = tempDir(t);
  let store = await TraceStore.open(dir);
  const p = store.createProject({ name: 'p' });
  const ls = { log_stream_id: store.createLogStream(p.id, 's').id };
  await store.close();
  const ops = [
    ['log', p.id, { ...ls, traces: [{ name: 'kept' }] }],
    ['flush'],
    ['log', p.id, { ...ls, traces: [{ name: 'gone', tags: ['gone'], spans: [{ type: 'tool', name: 'gone-span' }] }] }],
    ['delete', 'trace', p.id, { ...ls, filters: [{ type: 'collection', column_id: 'tags', operator: 'contains', value: 'gone' }] }],
  ];
  const child = spawnSync(process.execPath, [...nodeEntry('test/support/ops-then-die.ts'), dir, JSON.stringify(ops)], { encoding: 'utf8' });
  assert.equal(child.signal, 'SIGKILL', child.stderr);
  const names = async (s: TraceStore) => (await s.search('trace', p.id, ls)).records.map((r) => r['name']).sort();
  store = await TraceStore.open(dir);
  assert.deepEqual(await names(store), ['kept']);
  await store.close();
  store = await TraceStore.open(dir);
  try {
    await store.logTraces(p.id, { ...ls, traces: [{ name: 'after', spans: [{ type: 'tool', name: 'a' }] }] });
    assert.deepEqual(await names(store), ['after', 'kept'], 'the trace logged after the restarts is visible');
    await store.flush();
    assert.deepEqual(await names(store), ['after', 'kept'], 'and stays so once sealed');
    await store.close();
    store = await TraceStore.open(dir);
    assert.deepEqual(await names(store), ['after', 'kept'], 'and after reopening; the deleted trace never comes back');
    assert.deepEqual(
      (await store.search('span', p.id, ls)).records.map((r) => r['name']),
      ['a'],
    );
  } finally {
    await store.close();
  }
});
