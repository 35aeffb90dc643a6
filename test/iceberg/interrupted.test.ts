// Guarantees: a publish interrupted before any one of its writes (the process killed, or an upload
// refused) leaves every table readable at the snapshot it had (or, for tables already committed, the
// new one: never a broken table), and the next publish completes it. ClickHouse (chdb) is the reader.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { TraceStore } from '../../src/engine/trace-store.js';
import { S3Target } from '../../src/iceberg/target-s3.js';
import { chdbQueries, testDepsMissing } from '../support/chdb.js';
import { everyKindTrace, tempDir } from '../support/helpers.js';
import { idsByTable, InterruptingTarget, TABLES } from '../support/iceberg.js';
import { nodeEntry } from '../support/node-entry.js';
import { S3RVER_KEY, startS3 } from '../support/s3rver.js';

const skip = testDepsMissing();
/** More writes than a publish of the changes below has. */
const MAX_WRITES = 80;

/** A store with four sealed batches of one log stream. */
async function storeWithHistory(dir: string): Promise<{ store: TraceStore }> {
  mkdirSync(dir, { recursive: true });
  const store = await TraceStore.open(dir, { autoCompact: false });
  const projectId = store.createProject({ name: 'p' }).id;
  const ls = store.createLogStream(projectId, 'default').id;
  for (let k = 0; k < 4; k++) {
    await store.logTraces(projectId, {
      log_stream_id: ls,
      traces: Array.from({ length: 5 }, (_, i) => everyKindTrace(`b${k}x${i}`)) as never,
    });
    await store.flush();
  }
  return { store };
}

/** Deletes, replaces, adds and merges: every kind of write a publish then makes. */
async function changeStore(store: TraceStore): Promise<void> {
  const [row] = await store.data.sql('SELECT project_id, run_id FROM traces LIMIT 1');
  const projectId = String(row!['project_id']);
  const ls = String(row!['run_id']);
  await store.records.delete('trace', projectId, {
    log_stream_id: ls,
    filters: [{ type: 'text', name: 'name', operator: 'one_of', value: ['trace-b0x1', 'trace-b2x3'] }],
  } as never);
  const [one] = await store.data.sql("SELECT id FROM spans WHERE name = 'chat' ORDER BY id LIMIT 1");
  await store.records.updateRecord('span', projectId, String(one!['id']), { log_stream_id: ls, output: 'changed' });
  await store.logTraces(projectId, { log_stream_id: ls, traces: [everyKindTrace('late')] as never });
  assert.ok((await store.maintenance.compact()).merges > 0);
  await store.records.delete('trace', projectId, {
    log_stream_id: ls,
    filters: [{ type: 'text', name: 'name', operator: 'eq', value: 'trace-b1x0' }],
  } as never);
  await store.flush();
}

/** Each table of each target as ClickHouse reads it: the ids, in order. */
async function readAll(root: string, tables: (k: number, table: string) => string, count: number): Promise<Record<string, string[]>[]> {
  const queries: string[] = [];
  for (let k = 1; k <= count; k++) for (const table of TABLES) queries.push(`SELECT id FROM ${tables(k, table)} ORDER BY id`);
  const rows = await chdbQueries(root, queries);
  const out: Record<string, string[]>[] = [];
  for (let k = 0; k < count; k++)
    out.push(Object.fromEntries(TABLES.map((table, j) => [table, rows[k * TABLES.length + j]!.map((r) => String(r['id']))])));
  return out;
}

function assertBeforeOrAfter(read: Record<string, string[]>[], before: Record<string, string[]>, after: Record<string, string[]>): void {
  let old = 0;
  let fresh = 0;
  read.forEach((tables, k) => {
    for (const table of TABLES) {
      const ids = tables[table]!;
      if (JSON.stringify(ids) === JSON.stringify(before[table])) old++;
      else if (JSON.stringify(ids) === JSON.stringify(after[table])) fresh++;
      else assert.fail(`target ${k + 1}, table ${table}: neither the previous snapshot nor the new one (${ids.length} ids)`);
    }
  });
  assert.ok(
    old > 0 && fresh > 0,
    `interruptions left tables at the previous snapshot (${old}) and, once committed, at the new one (${fresh})`,
  );
  assert.deepEqual(read[0], before, 'interrupted before its first write: every table as before');
}

/**
 * A store with history, closed; a copy of it as it was (`beforeDir`), which publishes the previous
 * snapshot to each target just before that target's interrupted publish of the changed store.
 */
async function changedAndBefore(
  root: string,
): Promise<{ dir: string; beforeDir: string; before: Record<string, string[]>; after: Record<string, string[]> }> {
  const dir = join(root, 'store');
  const beforeDir = join(root, 'before');
  const first = await storeWithHistory(dir);
  const before = await idsByTable(first.store);
  await first.store.close();
  cpSync(dir, beforeDir, { recursive: true });
  const again = await TraceStore.open(dir, { autoCompact: false });
  await changeStore(again);
  const after = await idsByTable(again);
  await again.close();
  assert.notDeepEqual(after, before);
  return { dir, beforeDir, before, after };
}

test('a publish killed before any one of its writes leaves each table readable; the next completes it', { skip }, async (t) => {
  const root = tempDir(t, 'tracelake-iceberg-kill-');
  const target = (k: number) => join(root, 't', String(k));
  const { dir, beforeDir, before, after } = await changedAndBefore(root);
  const old = await TraceStore.open(beforeDir, { autoCompact: false });
  t.after(() => old.close());
  let k = 1;
  for (; k <= MAX_WRITES; k++) {
    await old.iceberg.publish({ to: target(k) });
    const out = spawnSync(process.execPath, nodeEntry('test/support/iceberg-publish-child.ts'), {
      env: { ...process.env, TL_DATA: dir, TL_TARGET: target(k), TL_KILL_AT: String(k) },
      encoding: 'utf8',
    });
    if (out.status === 0) {
      assert.match(out.stdout, /^complete /);
      break;
    }
    assert.equal(out.signal, 'SIGKILL', out.stderr);
  }
  const interrupted = k - 1;
  assert.ok(interrupted >= 12 && k <= MAX_WRITES, `the publish has ${interrupted} writes`);
  t.diagnostic(`${interrupted} writes`);
  assertBeforeOrAfter(await readAll(root, (i, table) => `icebergLocal('t/${i}/${table}')`, interrupted), before, after);

  const store = await TraceStore.open(dir, { autoCompact: false });
  t.after(() => store.close());
  for (let i = 1; i <= interrupted; i++) await store.iceberg.publish({ to: target(i) });
  for (const tables of await readAll(root, (i, table) => `icebergLocal('t/${i}/${table}')`, interrupted)) assert.deepEqual(tables, after);
  assert.deepEqual(readdirSync(join(dir, 'tmp', 'iceberg')), [], 'no delete file left on its way');
  for (let i = 1; i <= interrupted; i++) {
    const files = readdirSync(target(i), { recursive: true }).map(String);
    assert.deepEqual(
      files.filter((f) => f.includes('.tmp-')),
      [],
      `target ${i}: no half-written file left`,
    );
  }
});

test('a publish whose upload fails at any one write leaves each table readable; the next completes it', { skip }, async (t) => {
  const root = tempDir(t, 'tracelake-iceberg-fail-');
  const s3 = await startS3(t);
  const opts = { endpoint: s3.endpoint, accessKeyId: S3RVER_KEY, secretAccessKey: S3RVER_KEY };
  const uri = (k: number) => `s3://${s3.bucket}/t${k}`;
  const { dir, beforeDir, before, after } = await changedAndBefore(root);
  const old = await TraceStore.open(beforeDir, { autoCompact: false });
  t.after(() => old.close());
  const store = await TraceStore.open(dir, { autoCompact: false });
  t.after(() => store.close());
  let k = 1;
  for (; k <= MAX_WRITES; k++) {
    await old.iceberg.publish({ to: uri(k), s3: opts });
    const target = new InterruptingTarget(new S3Target(uri(k), opts), k, 'throw');
    try {
      await store.iceberg.publishTo(target);
      break;
    } catch (err) {
      assert.match((err as Error).message, /interrupted before write/);
    }
  }
  const interrupted = k - 1;
  assert.ok(interrupted >= 12 && k <= MAX_WRITES, `the publish has ${interrupted} writes`);
  const from = (i: number, table: string) => `icebergS3('${s3.endpoint}/${s3.bucket}/t${i}/${table}/', '${S3RVER_KEY}', '${S3RVER_KEY}')`;
  assertBeforeOrAfter(await readAll(root, from, interrupted), before, after);
  for (let i = 1; i <= interrupted; i++) await store.iceberg.publish({ to: uri(i), s3: opts });
  for (const tables of await readAll(root, from, interrupted)) assert.deepEqual(tables, after);
});
