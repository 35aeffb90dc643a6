// Guarantees: a merge that picked its inputs keeps them readable when the run they belong to is
// deleted before its copy starts: the merge ends without an error (its output is stale and goes), and
// the inputs' files go once it lets them go.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Connection } from '../../../src/db/database.js';
import { openStore } from '../../support/helpers.js';
import { holdSql } from '../../support/hold-sql.js';
import { waitFor } from '../../support/wait-for.js';

function segmentFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    if (!existsSync(d)) return;
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (e.name.endsWith('.parquet')) out.push(join(d, e.name));
    }
  };
  walk(join(dir, 'records'));
  return out;
}

test('a run deleted while a merge of its segments waits to copy: the merge ends cleanly, the files go after it', async (t) => {
  const { dir, store, projectId } = await openStore(t);
  const run = store.createLogStream(projectId, 'doomed').id;
  for (let i = 0; i < 4; i++) {
    await store.logTraces(projectId, { log_stream_id: run, traces: [{ name: `t${i}`, spans: [{ type: 'tool', name: `s${i}` }] }] });
    await store.flush();
  }
  assert.ok(segmentFiles(dir).length >= 8, 'several segments per kind to merge');
  // A sealed trace deleted: its dead rows are forgotten by the drop's cleanup, which shows it has run.
  await store.records.delete('trace', projectId, {
    log_stream_id: run,
    filters: [{ type: 'text', column_id: 'name', operator: 'eq', value: 't0' }],
  });
  assert.ok(store.records.stats.dead > 0);

  // Hold the merge's COPY at its start (DuckDB and the files stay real; only the timing is ours).
  const hold = holdSql(t, Connection.prototype as never, (sql) => sql.startsWith('COPY (') && sql.includes(run));

  const compaction = store.maintenance.compact();
  await hold.reached;
  await store.catalog.deleteRun(projectId, run);
  // The drop's cleanup runs while the merge still holds the files: it leaves them to the merge.
  await waitFor(() => store.records.stats.dead === 0, { what: "the drop's cleanup" });
  assert.ok(segmentFiles(dir).length > 0, 'the files the held merge reads are left to it');
  hold.release();
  await compaction; // rejected with "No files found" when the drop deleted the inputs under it
  hold.restore();
  await waitFor(() => segmentFiles(dir).length === 0 || `left: ${segmentFiles(dir).join(', ')}`, {
    what: 'every file of the deleted run to go once the merge let go',
  });
  assert.equal((await store.count('span', projectId, {})).total_count, 0);
});
