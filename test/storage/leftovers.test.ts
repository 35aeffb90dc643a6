// What crashed processes leave behind (temporary files of atomic writes, old per-request log reloads,
// DuckDB spill files, empty partition folders) is removed when the folder is next opened, and only
// by the process that holds the folder's lock.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { TraceStore } from '../../src/engine/trace-store.js';
import { tempDir } from '../support/helpers.js';

const LEFTOVERS = [
  'manifest.json.tmp-4242',
  'catalog.json.tmp-17',
  'api-key.tmp-99',
  'token-secret.tmp-123456',
  'wal/wal-000000003.ndjson.part',
  'tmp/duckdb_temp_storage_DEFAULT-0.tmp',
  'tmp/duckdb_temp_block-4611686018427388032.block',
];
/** Not ours to remove: look alike but are no temporary file of an atomic write. */
const KEPT = ['notes.tmp-1', 'manifest.json.bak', 'LOCK.tmp-4242'];

function plant(dir: string, files: readonly string[]): void {
  for (const f of files) {
    mkdirSync(join(dir, f, '..'), { recursive: true });
    writeFileSync(join(dir, f), 'x'.repeat(1000));
  }
}

test('open removes leftovers of crashed processes and keeps the data', async (t) => {
  const dir = tempDir(t);
  let projectId: string;
  let dropped: string;
  {
    const store = await TraceStore.open(dir);
    const project = store.createProject({ name: 'p' });
    projectId = project.id;
    const stream = store.createLogStream(project.id, 'default');
    const other = store.createLogStream(project.id, 'other');
    dropped = other.id;
    await store.logTraces(project.id, { log_stream_id: stream.id, reliable: true, traces: [{ name: 'kept', input: 'i', output: 'o' }] });
    await store.logTraces(project.id, { log_stream_id: other.id, reliable: true, traces: [{ name: 'dropped', input: 'i', output: 'o' }] });
    await store.flush();
    await store.catalog.deleteRun(project.id, other.id);
    await store.close();
  }
  plant(dir, [...LEFTOVERS, ...KEPT]);
  // An empty partition folder, as a drop interrupted between its files and its folders leaves.
  const emptyPartition = join(dir, 'records', `project_id=${projectId}`, `run_id=${dropped}`, 'kind=span');
  mkdirSync(emptyPartition, { recursive: true });

  const store = await TraceStore.open(dir);
  try {
    for (const f of LEFTOVERS) assert.equal(existsSync(join(dir, f)), false, `${f} is removed`);
    for (const f of KEPT) assert.equal(existsSync(join(dir, f)), true, `${f} is kept`);
    assert.equal(
      existsSync(join(dir, 'records', `project_id=${projectId}`, `run_id=${dropped}`)),
      false,
      'empty partition folders are removed',
    );
    assert.ok(existsSync(join(dir, 'tmp')), 'the spill folder itself stays');
    assert.deepEqual(readdirSync(join(dir, 'tmp')), []);
    const traces = await store.count('trace', projectId, {});
    assert.equal(traces.total_count, 1, 'the logged trace is still there');
  } finally {
    await store.close();
  }
});

test('a process refused the lock removes nothing', async (t) => {
  const dir = tempDir(t);
  const owner = await TraceStore.open(dir);
  try {
    plant(dir, LEFTOVERS); // stand-ins for the live owner's own temporary and spill files
    await assert.rejects(TraceStore.open(dir), { code: 'STORE_LOCKED' });
    for (const f of LEFTOVERS) assert.equal(existsSync(join(dir, f)), true, `${f} is not touched by the refused opener`);
  } finally {
    await owner.close();
  }
});
