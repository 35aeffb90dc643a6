// Guarantee: a direct import that replaces records (a file imported again) is seen whole or not at
// all. Its dead marks reach DuckDB before its manifest lists the new segments; a read in between
// still sees the old versions (not none of them).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { MemInserter } from '../../src/storage/mem-tables.js';
import { everyKindTrace, openStore, tempDir } from '../support/helpers.js';

test('a read between a re-import marking the old rows dead and listing the new ones sees the old versions', async (t) => {
  const src = await openStore(t);
  const traces = Array.from({ length: 5 }, (_, i) => ({ ...everyKindTrace(`t${i}`), id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}` }));
  await src.store.logTraces(src.projectId, { log_stream_id: src.logStreamId, traces: traces as never });
  await src.store.flush();
  const file = join(tempDir(t), 'all.parquet');
  await src.store.exportFile(src.projectId, file, { format: 'parquet' });

  const { store, projectId } = await openStore(t);
  await store.importFile(file, { project: 'test-project', logStream: 'default' });
  const count = async () => (await store.count('trace', projectId, {})).total_count;
  assert.equal(await count(), 5);

  // Hold the re-import right after its dead marks are in (DuckDB and the files stay real).
  const original = MemInserter.prototype.run;
  let marked!: () => void;
  const atMarks = new Promise<void>((r) => (marked = r));
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  let held = false;
  MemInserter.prototype.run = async function (this: MemInserter, sql: string, params?: Parameters<MemInserter['run']>[1]) {
    const done = await original.call(this, sql, params);
    if (!held && sql.startsWith('INSERT INTO dead')) {
      held = true;
      marked();
      await gate;
    }
    return done;
  } as MemInserter['run'];
  t.after(() => {
    MemInserter.prototype.run = original;
  });

  const again = store.importFile(file, { project: 'test-project', logStream: 'default' });
  await atMarks;
  const during = await count();
  open();
  await again;
  MemInserter.prototype.run = original;
  assert.equal(during, 5, 'the old versions stay visible until the new segments are listed');
  assert.equal(await count(), 5);
});
