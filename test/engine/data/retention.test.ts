// Guarantees: retention_days on a project or a log stream (the stream's own value wins) hides expired
// records from every read at once (search, count, SQL, export), survives a reopen, and compaction takes
// them off the disk (an explicit compact() and the merges after seals alike); bad values are refused.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { DuckDBInstance } from '../../../src/vendor/duckdb.js';
import { TraceStore } from '../../../src/engine/trace-store.js';
import { InvalidRequestError } from '../../../src/errors.js';
import { everyKindTrace, openStore } from '../../support/helpers.js';

/** The trace with every created_at moved to `iso`. */
function at(trace: any, iso: string): any {
  const walk = (r: any) => {
    r.created_at = iso;
    for (const s of r.spans ?? []) walk(s);
  };
  walk(trace);
  return trace;
}

function parquetFiles(dir: string): string[] {
  return (readdirSync(join(dir, 'records'), { recursive: true }) as string[])
    .filter((f) => f.endsWith('.parquet'))
    .map((f) => join(dir, 'records', f));
}

async function idsOnDisk(dir: string): Promise<Set<string>> {
  const files = parquetFiles(dir);
  if (files.length === 0) return new Set();
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    const rows = (
      await c.runAndReadAll(`SELECT id FROM read_parquet([${files.map((f) => `'${f}'`).join(', ')}], union_by_name = true)`)
    ).getRowObjectsJS();
    return new Set(rows.map((r) => String(r['id'])));
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

test('expired records leave reads at once and the disk at compaction; a stream overrides its project', async (t) => {
  const { store, dir, projectId, logStreamId } = await openStore(t, { autoCompact: false });
  const other = store.createLogStream(projectId, 'other').id;
  const old = new Date(Date.now() - 40 * 86_400_000).toISOString();
  const recent = new Date(Date.now() - 2 * 86_400_000).toISOString();
  for (const run of [logStreamId, other])
    await store.logTraces(projectId, { log_stream_id: run, traces: [at(everyKindTrace('old'), old)] });
  await store.flush(); // the old records in segments of their own
  for (const run of [logStreamId, other])
    await store.logTraces(projectId, { log_stream_id: run, traces: [at(everyKindTrace('new'), recent)] });
  const oldIds = new Set(
    (await store.data.sql('SELECT id FROM spans WHERE created_at < now() - INTERVAL 30 DAY')).map((r) => String(r['id'])),
  );
  assert.equal(oldIds.size, 12);
  assert.equal((await store.count('span', projectId, {})).total_count, 24);

  assert.deepEqual(store.data.setRetention(projectId, { retention_days: 30 }), { retention_days: 30, effective_retention_days: 30 });
  assert.equal((await store.count('span', projectId, {})).total_count, 12, 'project retention: old spans of both streams are gone');
  assert.equal((await store.count('trace', projectId, { log_stream_id: other })).total_count, 1);
  assert.equal((await store.search('span', projectId, { limit: 100 })).records.filter((r) => oldIds.has(String(r['id']))).length, 0);
  assert.equal(Number((await store.data.sql('SELECT count(*) AS n FROM spans'))[0]!['n']), 12, 'SQL sees the same');
  let exported = 0;
  for await (const b of store.data.export(projectId)) exported += b.numRows;
  assert.equal(exported, await store.records.countAll(projectId));

  // A stream's own value wins over its project's.
  assert.deepEqual(store.data.setRetention(projectId, { log_stream_id: other, retention_days: 365 }), {
    retention_days: 365,
    effective_retention_days: 365,
  });
  assert.equal((await store.count('span', projectId, { log_stream_id: other })).total_count, 12);
  assert.equal((await store.count('span', projectId, { log_stream_id: logStreamId })).total_count, 6);

  const { expired } = await store.maintenance.compact();
  assert.equal(expired, 8, 'the old trace, its 6 spans and its session in the stream without its own retention');
  const onDisk = await idsOnDisk(dir);
  const stillThere = [...oldIds].filter((id) => onDisk.has(id));
  assert.equal(stillThere.length, 6, 'only the old spans of the stream that keeps a year are still on disk');
  await store.close();

  const reopened = await TraceStore.open(dir);
  t.after(() => reopened.close());
  assert.deepEqual(reopened.data.getRetention(projectId, { log_stream_id: logStreamId }), {
    retention_days: null,
    effective_retention_days: 30,
  });
  assert.equal((await reopened.count('span', projectId, {})).total_count, 18);
  reopened.data.setRetention(projectId, { log_stream_id: other, retention_days: null });
  assert.equal((await reopened.count('span', projectId, {})).total_count, 12, 'cleared: the stream follows its project again');
});

test('merges after seals take expired records off the disk by themselves (no compact call)', async (t) => {
  const { store, dir, projectId, logStreamId } = await openStore(t);
  store.data.setRetention(projectId, { retention_days: 30 });
  const old = new Date(Date.now() - 40 * 86_400_000).toISOString();
  const recent = new Date(Date.now() - 2 * 86_400_000).toISOString();
  await store.logTraces(projectId, { log_stream_id: logStreamId, traces: [at(everyKindTrace('a'), old)] });
  await store.flush(); // segments wholly expired
  await store.logTraces(projectId, { log_stream_id: logStreamId, traces: [at(everyKindTrace('b'), old), at(everyKindTrace('c'), recent)] });
  await store.flush(); // segments half expired
  const live = new Set(
    (await store.data.sql('SELECT id FROM spans UNION ALL SELECT id FROM traces UNION ALL SELECT id FROM sessions')).map((r) =>
      String(r['id']),
    ),
  );
  assert.equal(live.size, 8, 'the recent trace, its 6 spans and its session');
  // The merges run in the background after the seals: wait for them (bounded), then look at the files.
  // A file may go between listing and reading it (a merge retired it): then look again.
  const look = () => idsOnDisk(dir).catch(() => new Set(['(a file went while read)']));
  let onDisk = await look();
  for (let i = 0; i < 100 && [...onDisk].some((id) => !live.has(id)); i++) {
    await new Promise((r) => setTimeout(r, 100));
    onDisk = await look();
  }
  assert.deepEqual([...onDisk].sort(), [...live].sort(), 'only the live records are still on disk');
  assert.equal((await store.count('span', projectId, {})).total_count, 6);
});

test('bad retention values are refused', async (t) => {
  const { store, projectId } = await openStore(t);
  for (const bad of [0, -1, 1.5, '7', 40_000, undefined]) {
    assert.throws(() => store.data.setRetention(projectId, { retention_days: bad as never }), InvalidRequestError, String(bad));
  }
  assert.deepEqual(store.data.getRetention(projectId), { retention_days: null, effective_retention_days: null });
});
