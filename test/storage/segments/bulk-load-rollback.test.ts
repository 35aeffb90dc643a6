// A bulk load marks the versions it replaces dead before its manifest write; when that write fails it
// takes back only its own marks. A delete that marked the same rows meanwhile (deletes do not wait for
// a load) keeps its marks: the deleted record stays deleted.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { TraceStore } from '../../../src/engine/trace-store.js';
import { MemInserter } from '../../../src/storage/memtable/mem-tables.js';
import { arm, disarm, injected, installFaults } from '../../support/fs-faults.js';
import { everyKindTrace, openStore, tempDir } from '../../support/helpers.js';
import { holdSql } from '../../support/hold-sql.js';

const uuidFor = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

async function traceIds(store: TraceStore, projectId: string, logStreamId: string): Promise<string[]> {
  const { records } = await store.search('trace', projectId, { log_stream_id: logStreamId, limit: 100 });
  return records.map((r) => String(r['id'])).sort();
}

test("a bulk load whose manifest write fails takes back its dead marks, not a delete's marks of the same rows", async (t) => {
  installFaults();
  const src = await openStore(t);
  const traces = Array.from({ length: 3 }, (_, i) => ({ ...everyKindTrace(`t${i}`), id: uuidFor(i) }));
  await src.store.logTraces(src.projectId, { log_stream_id: src.logStreamId, traces: traces as never });
  await src.store.flush();
  const file = join(tempDir(t), 'all.parquet');
  await src.store.data.exportFile(src.projectId, file, { format: 'parquet' });

  // No background merges: they would rewrite the segments under the test.
  const target = await openStore(t, { autoCompact: false } as never, join(tempDir(t), 'b'));
  const { store, projectId, logStreamId } = target;
  await store.data.importFile(file, { project: 'test-project', logStream: 'default' });
  assert.deepEqual(await traceIds(store, projectId, logStreamId), [uuidFor(0), uuidFor(1), uuidFor(2)]);

  // The second import replaces every record: it marks the first import's rows dead, then stops there.
  const hold = holdSql(t, MemInserter.prototype as never, (text) => text.startsWith('INSERT INTO dead (seq, gen)'), { after: true });
  const importing = store.data.importFile(file, { project: 'test-project', logStream: 'default' });
  await hold.reached;
  // Meanwhile a delete marks the same rows of trace 0 (still its live versions: the load is not listed).
  const byId = { log_stream_id: logStreamId, filters: [{ type: 'id', column_id: 'id', operator: 'eq', value: uuidFor(0) }] };
  assert.ok((await store.records.delete('trace', projectId, byId as never)).deleted > 1, 'the trace and its spans');
  // Then the load's manifest write fails.
  arm(
    target.dir,
    (c) => c.cls === 'rename' && c.path.includes('manifest'),
    () => 'EIO',
  );
  hold.release();
  await assert.rejects(importing);
  disarm();
  assert.ok(injected(), 'the manifest write was the one that failed');
  hold.restore();

  assert.deepEqual(await traceIds(store, projectId, logStreamId), [uuidFor(1), uuidFor(2)], 'the deleted trace stays deleted');
  const spans = await store.data.sql('SELECT count(*) AS n FROM spans WHERE trace_id = $1', [uuidFor(0)]);
  assert.equal(Number(spans[0]!['n']), 0, "the deleted trace's spans stay deleted");
  const others = await store.data.sql('SELECT count(*) AS n FROM traces');
  assert.equal(Number(others[0]!['n']), 2, 'the failed load left the other records as they were');

  await store.close();
  const again = await TraceStore.open(target.dir);
  t.after(() => again.close());
  assert.deepEqual(await traceIds(again, projectId, logStreamId), [uuidFor(1), uuidFor(2)], 'also after a reopen');
});
