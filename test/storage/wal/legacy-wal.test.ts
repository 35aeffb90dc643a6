// Converting the NDJSON log of earlier versions: a request the new log refuses goes to
// wal/rejected.ndjson, which is capped; past the cap the old log files are kept instead of deleted,
// so a refused request is never dropped.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { TraceStore } from '../../../src/engine/trace-store.js';
import { keepRejected } from '../../../src/storage/wal/legacy-wal.js';
import { tempDir } from '../../support/helpers.js';

/** The documented limit of wal/rejected.ndjson (README, docs/storage-format.md). */
const LIMIT = 64 * 1024 * 1024;

test('keepRejected writes nothing that would take the file past its limit', (t) => {
  const path = join(tempDir(t), 'rejected.ndjson');
  const rows = [{ id: 'a', note: 'x'.repeat(100) }];
  const line = JSON.stringify(rows[0]).length + 1;
  assert.equal(keepRejected(path, rows, 3 * line), true);
  assert.equal(keepRejected(path, rows, 3 * line), true);
  assert.equal(keepRejected(path, rows, 3 * line), true);
  assert.equal(keepRejected(path, rows, 3 * line), false, 'the fourth does not fit');
  assert.equal(statSync(path).size, 3 * line);
  assert.deepEqual(
    readFileSync(path, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown),
    [rows[0], rows[0], rows[0]],
  );
});

/** A folder with a project, a log stream and an old-format log file holding one good and one refused request. */
async function legacyFolder(dir: string): Promise<{ projectId: string; runId: string; good: string; bad: string }> {
  const store = await TraceStore.open(dir);
  const project = store.createProject({ name: 'legacy' });
  const stream = store.createLogStream(project.id, 'default');
  await store.close();
  const at = Date.now() * 1000;
  const row = (seq: number, id: string, extra: Record<string, unknown>) => ({
    seq,
    id,
    type: 'trace',
    project_id: project.id,
    run_id: stream.id,
    trace_id: id,
    name: id,
    input: 'i',
    output: 'o',
    created_at: at,
    updated_at: at,
    ...extra,
  });
  const good = randomUUID();
  const bad = randomUUID();
  const lines = [row(1, good, {}), { commit: 1 }, row(2, bad, { step_number: 2 ** 40 }), { commit: 2 }];
  writeFileSync(join(dir, 'wal', 'wal-000000001.ndjson'), `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
  return { projectId: project.id, runId: stream.id, good, bad };
}

test('a refused request is kept in rejected.ndjson and the old log file goes', async (t) => {
  const dir = tempDir(t);
  const { projectId, good, bad } = await legacyFolder(dir);
  const store = await TraceStore.open(dir);
  try {
    assert.equal((await store.count('trace', projectId, {})).total_count, 1, 'the good request is converted');
    const kept = readFileSync(join(dir, 'wal', 'rejected.ndjson'), 'utf8');
    assert.ok(kept.includes(bad) && !kept.includes(good));
    assert.deepEqual(
      readdirSync(join(dir, 'wal')).filter((f) => f.includes('ndjson') && f !== 'rejected.ndjson'),
      [],
    );
  } finally {
    await store.close();
  }
});

test('past the limit of rejected.ndjson the old log files are kept, not the refused request dropped', async (t) => {
  const dir = tempDir(t);
  const { projectId, bad } = await legacyFolder(dir);
  const rejected = join(dir, 'wal', 'rejected.ndjson');
  writeFileSync(rejected, '');
  truncateSync(rejected, LIMIT - 10); // earlier conversions filled it (sparse: no real disk used)
  const store = await TraceStore.open(dir);
  try {
    assert.equal((await store.count('trace', projectId, {})).total_count, 1, 'the good request is converted');
    assert.ok(statSync(rejected).size <= LIMIT, `rejected.ndjson stays within its limit (${statSync(rejected).size})`);
    const keptFile = join(dir, 'wal', 'wal-000000001.ndjson.kept');
    assert.ok(existsSync(keptFile), 'the old log file is kept');
    assert.ok(readFileSync(keptFile, 'utf8').includes(bad));
    assert.equal(existsSync(join(dir, 'wal', 'wal-000000001.ndjson')), false, 'and no longer read as a log');
  } finally {
    await store.close();
  }
  const again = await TraceStore.open(dir);
  try {
    assert.equal((await again.count('trace', projectId, {})).total_count, 1, 'nothing converted twice');
    assert.ok(existsSync(join(dir, 'wal', 'wal-000000001.ndjson.kept')), 'the kept file survives later opens');
  } finally {
    await again.close();
  }
});
