// Guarantees: a child span logged (reliable: false) before its parent gives the parent has_children
// when it arrives, also across a restart in between: after a crash (the child only in the log), and
// after a clean close (the child sealed). The awaited id leaves the manifest once the parent is sealed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { TraceStore } from '../../../src/engine/trace-store.js';
import { tempDir } from '../../support/helpers.js';
import { nodeEntry } from '../../support/node-entry.js';

const T = '00000000-0000-4000-8000-0000000000e1';
const P = '00000000-0000-4000-8000-0000000000f1';

async function setup(dir: string): Promise<{ projectId: string; ls: { log_stream_id: string } }> {
  const store = await TraceStore.open(dir);
  const p = store.createProject({ name: 'p' });
  const ls = { log_stream_id: store.createLogStream(p.id, 's').id };
  await store.logTraces(p.id, { ...ls, traces: [{ id: T, name: 't' }] });
  await store.close();
  return { projectId: p.id, ls };
}

const child = (ls: object) => ({ ...ls, trace_id: T, parent_id: P, reliable: false, spans: [{ type: 'tool' as const, name: 'child' }] });
const parent = (ls: object) => ({ ...ls, trace_id: T, parent_id: T, spans: [{ id: P, type: 'workflow' as const, name: 'parent' }] });
const awaited = (dir: string) => (JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { awaited?: unknown[] }).awaited;

async function parentHasChildren(store: TraceStore, projectId: string, ls: object): Promise<unknown> {
  const spans = (await store.search('span', projectId, ls)).records;
  assert.deepEqual(spans.map((s) => s['name']).sort(), ['child', 'parent']);
  return spans.find((s) => s['id'] === P)!['has_children'];
}

test('a crash between a child logged before its parent and the parent: the parent still gets has_children', async (t) => {
  const dir = tempDir(t);
  const { projectId, ls } = await setup(dir);
  const run = spawnSync(
    process.execPath,
    [...nodeEntry('test/support/ops-then-die.ts'), dir, JSON.stringify([['spans', projectId, child(ls)]])],
    { encoding: 'utf8' },
  );
  assert.equal(run.signal, 'SIGKILL', run.stderr);
  const store = await TraceStore.open(dir);
  try {
    await store.records.logSpans(projectId, parent(ls));
    assert.equal(await parentHasChildren(store, projectId, ls), true);
  } finally {
    await store.close();
  }
});

test('a child sealed before a clean restart: the parent logged afterwards gets has_children, and the awaited id then goes', async (t) => {
  const dir = tempDir(t);
  const { projectId, ls } = await setup(dir);
  let store = await TraceStore.open(dir);
  await store.records.logSpans(projectId, child(ls));
  await store.close(); // seals the child; the awaited parent goes to the manifest
  assert.equal(awaited(dir)?.length, 1);
  store = await TraceStore.open(dir);
  try {
    await store.records.logSpans(projectId, parent(ls));
    assert.equal(await parentHasChildren(store, projectId, ls), true);
    await store.flush();
    assert.deepEqual(awaited(dir), [], 'the parent arrived: nothing is awaited any more');
  } finally {
    await store.close();
  }
  store = await TraceStore.open(dir);
  try {
    assert.equal(await parentHasChildren(store, projectId, ls), true);
  } finally {
    await store.close();
  }
});
