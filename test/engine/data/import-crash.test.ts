// Guarantees: an import killed (SIGKILL) part way leaves whole batches only: on reopen every record
// present equals its source, the count is a whole number of batches, nothing is corrupt, and
// importing again completes it to exactly the source.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../../../scripts/binary/config.js';
import { TraceStore } from '../../../src/engine/trace-store.js';
import { everyKindTrace, openStore, tempDir } from '../../support/helpers.js';
import { nodeEntry } from '../../support/node-entry.js';

const BATCH = 25;

test('SIGKILL mid-import keeps whole batches; a second import completes it', async (t) => {
  const { store, projectId, logStreamId } = await openStore(t);
  await store.logTraces(projectId, {
    log_stream_id: logStreamId,
    traces: Array.from({ length: 40 }, (_, i) => everyKindTrace(`t${i}`) as any),
  });
  const file = join(tempDir(t), 'all.parquet');
  const { rows } = await store.data.exportFile(projectId, file, { format: 'parquet' });
  const byId = new Map(
    (
      await store.data.sql(
        'SELECT id, name, input, output, created_at FROM spans UNION ALL SELECT id, name, input, output, created_at FROM traces ' +
          'UNION ALL SELECT id, name, input, output, created_at FROM sessions',
      )
    ).map((r) => [r['id'], r]),
  );
  assert.equal(byId.size, rows);

  const dir = join(tempDir(t), 'target');
  for (const afterBatches of [1, 4]) {
    const child = spawnSync(
      process.execPath,
      [...nodeEntry(join(ROOT, 'test', 'support', 'import-then-die.ts')), dir, file, String(BATCH), String(afterBatches)],
      { cwd: ROOT, encoding: 'utf8' },
    );
    assert.equal(child.signal, 'SIGKILL', child.stderr);
    assert.equal(child.stdout, '', 'killed before the import finished');
    const reopened = await TraceStore.open(dir);
    try {
      const project = reopened.findProjects({ name: 'imported' })[0]!;
      const got = await reopened.data.sql(
        'SELECT id, name, input, output, created_at FROM spans UNION ALL SELECT id, name, input, output, created_at FROM traces ' +
          'UNION ALL SELECT id, name, input, output, created_at FROM sessions',
      );
      assert.equal(got.length % BATCH, 0, `whole batches only (${got.length} records)`);
      assert.ok(got.length >= afterBatches * BATCH, `the ${afterBatches} acknowledged batch(es) are kept`);
      assert.ok(got.length < rows);
      for (const r of got) assert.deepEqual(r, byId.get(r['id']), 'a kept record equals its source');
      assert.equal(await reopened.records.countAll(project.id), got.length);
    } finally {
      await reopened.close();
    }
  }
  const again = await TraceStore.open(dir);
  t.after(() => again.close());
  await again.data.importFile(file, { project: 'imported', logStream: 'main', batchRows: BATCH });
  const all = await again.data.sql(
    'SELECT count(*) AS n, count(DISTINCT id) AS ids FROM (SELECT id FROM spans UNION ALL SELECT id FROM traces UNION ALL SELECT id FROM sessions)',
  );
  assert.deepEqual(
    all.map((r) => [Number(r['n']), Number(r['ids'])]),
    [[rows, rows]],
  );
});
