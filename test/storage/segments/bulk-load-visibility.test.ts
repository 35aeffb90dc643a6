// Guarantee: a direct import that replaces records (a file imported again) is seen whole or not at
// all. Its dead marks reach DuckDB before its manifest lists the new segments; a read in between
// still sees the old versions (not none of them).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { MemInserter } from '../../../src/storage/memtable/mem-tables.js';
import { everyKindTrace, openStore, tempDir } from '../../support/helpers.js';
import { holdSql } from '../../support/hold-sql.js';

test('a read between a re-import marking the old rows dead and listing the new ones sees the old versions', async (t) => {
  const src = await openStore(t);
  const traces = Array.from({ length: 5 }, (_, i) => ({
    ...everyKindTrace(`t${i}`),
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
  }));
  await src.store.logTraces(src.projectId, { log_stream_id: src.logStreamId, traces: traces as never });
  await src.store.flush();
  const file = join(tempDir(t), 'all.parquet');
  await src.store.data.exportFile(src.projectId, file, { format: 'parquet' });

  const { store, projectId } = await openStore(t);
  await store.data.importFile(file, { project: 'test-project', logStream: 'default' });
  const count = async () => (await store.count('trace', projectId, {})).total_count;
  assert.equal(await count(), 5);

  // Hold the re-import right after its dead marks are in (DuckDB and the files stay real).
  const hold = holdSql(t, MemInserter.prototype as never, (sql) => sql.startsWith('INSERT INTO dead'), { after: true });

  const again = store.data.importFile(file, { project: 'test-project', logStream: 'default' });
  await hold.reached;
  const during = await count();
  hold.release();
  await again;
  hold.restore();
  assert.equal(during, 5, 'the old versions stay visible until the new segments are listed');
  assert.equal(await count(), 5);
});
