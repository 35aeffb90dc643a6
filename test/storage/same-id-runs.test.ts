// Guarantees: record ids are unique per run, not per store. Two runs (of one project or of two
// projects) may hold records with the same id, and neither replaces the other: not when the log is
// loaded with de-duplication (a retry somewhere), not when the log is replayed after a restart.
// Found by the fuzzer's ledger: a fuzz request in another project logging an id the ledger had used
// made the ledger's acknowledged record vanish, so a client could remove another tenant's records.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TraceStore } from '../../src/engine/trace-store.js';
import { spawnSync } from 'node:child_process';
import { openStore, tempDir } from '../support/helpers.js';
import { nodeEntry } from '../support/node-entry.js';

const ID = '11111111-2222-4333-8444-555555555555';
const SPAN = '11111111-2222-4333-8444-666666666666';

test('the same record ids in two runs and two projects are four records, live and after reopening', async (t) => {
  const { dir, store, projectId, logStreamId } = await openStore(t);
  const other = store.createProject({ name: 'other-tenant' });
  const otherStream = store.createLogStream(other.id, 'theirs');
  const experiment = store.catalog.createExperiment(projectId, 'exp');
  const trace = (tag: string) => ({ id: ID, name: tag, input: tag, spans: [{ id: SPAN, type: 'tool' as const, name: tag, input: tag }] });
  await store.logTraces(projectId, { log_stream_id: logStreamId, traces: [trace('mine')] });
  await store.logTraces(projectId, { experiment_id: experiment.id, traces: [trace('experiment')] });
  await store.logTraces(other.id, { log_stream_id: otherStream.id, traces: [trace('theirs')] });
  // A client retry (the same request again) makes the next load de-duplicate.
  await store.logTraces(other.id, { log_stream_id: otherStream.id, traces: [trace('theirs')] });
  const names = async (s: TraceStore, p: string, ids: Record<string, string>) =>
    (await s.search('span', p, ids)).records.map((r) => r['name']);
  const check = async (s: TraceStore, when: string) => {
    assert.deepEqual(await names(s, projectId, { log_stream_id: logStreamId }), ['mine'], `${when}: my log stream keeps its span`);
    assert.deepEqual(await names(s, projectId, { experiment_id: experiment.id }), ['experiment'], `${when}: my experiment keeps its span`);
    assert.deepEqual(await names(s, other.id, { log_stream_id: otherStream.id }), ['theirs'], `${when}: the other project keeps its span`);
    assert.equal((await s.count('trace', projectId, {})).total_count, 2, `${when}: two traces in my project`);
  };
  await check(store, 'live');
  await store.close();
  {
    // Reopen without sealing: the log is replayed (with de-duplication).
    const again = await TraceStore.open(dir);
    await check(again, 'replayed');
    await again.flush();
    await check(again, 'sealed');
    await again.close();
  }
});

test('replaying the log after a crash keeps same-id records of different runs and projects apart', async (t) => {
  const dir = tempDir(t);
  const store = await TraceStore.open(dir);
  const p1 = store.createProject({ name: 'one' });
  const p2 = store.createProject({ name: 'two' });
  const s1 = store.createLogStream(p1.id, 'a');
  const e1 = store.catalog.createExperiment(p1.id, 'b');
  const s2 = store.createLogStream(p2.id, 'c');
  await store.close();
  const trace = (name: string) => ({ id: ID, name, input: name, spans: [{ id: SPAN, type: 'tool', name, input: name }] });
  const requests = [
    [p1.id, { log_stream_id: s1.id, traces: [trace('a')] }],
    [p1.id, { experiment_id: e1.id, traces: [trace('b')] }],
    [p2.id, { log_stream_id: s2.id, traces: [trace('c')] }],
  ];
  const child = spawnSync(process.execPath, [...nodeEntry('test/support/log-then-die.ts'), dir, JSON.stringify(requests)], {
    encoding: 'utf8',
  });
  assert.equal(child.signal, 'SIGKILL', child.stderr);
  const again = await TraceStore.open(dir);
  try {
    assert.equal((await again.count('trace', p1.id, {})).total_count, 2, 'two traces in project one');
    assert.equal((await again.count('span', p1.id, {})).total_count, 2, 'two spans in project one');
    assert.equal((await again.count('span', p2.id, {})).total_count, 1, 'one span in project two');
  } finally {
    await again.close();
  }
});
