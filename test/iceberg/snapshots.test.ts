// Guarantees: each publish commits a snapshot that stays readable by id (time travel) after the store
// merges away the segments it names and a later publish: the table folder keeps hard links to them.
// Expiry by count drops older snapshots and removes the files only they named. A publish with
// nothing new commits nothing.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { chdbQueries, testDepsMissing } from '../support/chdb.js';
import { everyKindTrace, openStore, tempDir } from '../support/helpers.js';
import { idsByTable, TABLES } from '../support/iceberg.js';

const skip = testDepsMissing();

function segmentsUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true })
    .map(String)
    .filter((f) => /seg-\d+\.parquet$/.test(f))
    .map((f) => f.split('/').pop()!)
    .sort();
}

test('a snapshot published before a merge reads the same after the merge and a later publish; expiry removes what only it named', {
  skip,
}, async (t) => {
  const root = tempDir(t, 'tracelake-iceberg-snap-');
  const { store, projectId, logStreamId: ls } = await openStore(t, { autoCompact: false }, join(root, 'store'));
  const dir = join(root, 'store');
  for (let k = 0; k < 4; k++) {
    await store.logTraces(projectId, {
      log_stream_id: ls,
      traces: Array.from({ length: 4 }, (_, i) => everyKindTrace(`s${k}x${i}`)) as never,
    });
    await store.flush();
  }
  const first = await store.iceberg.publish();
  const ids1 = await idsByTable(store);
  const segs1 = segmentsUnder(join(dir, 'records'));
  assert.equal((await store.iceberg.publish()).tables.spans.committed, false, 'nothing new: no snapshot');

  await store.records.delete('trace', projectId, {
    log_stream_id: ls,
    filters: [{ type: 'text', name: 'name', operator: 'eq', value: 'trace-s1x1' }],
  } as never);
  await store.logTraces(projectId, { log_stream_id: ls, traces: [everyKindTrace('later')] as never });
  assert.ok((await store.maintenance.compact()).merges > 0);
  const merged = segs1.filter((f) => !segmentsUnder(join(dir, 'records')).includes(f));
  assert.ok(merged.length >= 4, 'the merge removed the first snapshot’s segments from the store');
  const second = await store.iceberg.publish();
  const ids2 = await idsByTable(store);
  assert.notEqual(second.tables.spans.snapshotId, first.tables.spans.snapshotId);
  for (const f of merged)
    assert.ok(
      segmentsUnder(join(dir, 'iceberg', 'spans')).includes(f) ||
        segmentsUnder(join(dir, 'iceberg', 'traces')).includes(f) ||
        segmentsUnder(join(dir, 'iceberg', 'sessions')).includes(f),
      `${f} is still linked under a table`,
    );

  const queries = (snapshot: (table: string) => number | null) =>
    TABLES.map(
      (table) =>
        `SELECT id FROM icebergLocal('store/iceberg/${table}') ORDER BY id` +
        `${snapshot(table) === null ? '' : ` SETTINGS iceberg_snapshot_id = ${snapshot(table)}`}`,
    );
  const rows = await chdbQueries(root, [...queries((table) => first.tables[table as 'spans'].snapshotId), ...queries(() => null)]);
  const asIds = (r: Record<string, unknown>[]) => r.map((x) => String(x['id']));
  TABLES.forEach((table, i) => {
    assert.deepEqual(asIds(rows[i]!), ids1[table], `${table} at the first snapshot`);
    assert.deepEqual(asIds(rows[TABLES.length + i]!), ids2[table], `${table} now`);
  });

  // Keep one snapshot: the first ones expire, and the links only they named go.
  await store.logTraces(projectId, { log_stream_id: ls, traces: [everyKindTrace('last')] as never });
  const third = await store.iceberg.publish({ keepSnapshots: 1 });
  assert.ok(third.tables.spans.filesRemoved > 0);
  const linked = [...segmentsUnder(join(dir, 'iceberg'))];
  for (const f of merged) assert.ok(!linked.includes(f), `${f} was named only by expired snapshots`);
  const meta = JSON.parse(readFileSync(join(dir, 'iceberg', 'spans', 'metadata', `v3.metadata.json`), 'utf8'));
  assert.deepEqual(
    meta.snapshots.map((s: { 'snapshot-id': number }) => s['snapshot-id']),
    [third.tables.spans.snapshotId],
  );
  assert.ok(!existsSync(join(dir, 'iceberg', 'spans', 'metadata', `snap-${first.tables.spans.snapshotId}-list.avro`)));
  const now = await chdbQueries(
    root,
    queries(() => null),
  );
  const ids3 = await idsByTable(store);
  TABLES.forEach((table, i) => {
    assert.deepEqual(asIds(now[i]!), ids3[table], `${table} after expiry`);
  });
});
