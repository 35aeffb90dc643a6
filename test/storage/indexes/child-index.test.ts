// Guarantees of the child indexes (src/storage/indexes/child-index.ts): every listed segment has one, of its
// rows, written by seals and merges; a merged-away segment's goes with it; a missing, damaged
// (truncated), stale (another segment's, or hashed by another DuckDB: a different probe) one, and
// one left half-built by a crash, are replaced after open; and deletes answer the same through rebuilt
// indexes as through the ones written with the segments (has_children of every span and trace). Row
// files hold each row's stored has_children as a bit; one of the first version (without them) is
// rebuilt after open.
import assert from 'node:assert/strict';
import { copyFileSync, cpSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { test, type TestContext } from 'node:test';
import { Database } from '../../../src/db/database.js';
import { TraceStore } from '../../../src/engine/trace-store.js';
import { childIndexPath, childRowsFlagsAt, childRowsPath, ROWS_HEADER } from '../../../src/storage/indexes/child-index.js';
import { tempDir } from '../../support/helpers.js';
import { waitFor } from '../../support/wait-for.js';
import { sql } from '../../../src/query/sql.js';
import { stringLiteral } from '../../../src/db/sql-string.js';
import { goneStayTraces } from '../../support/gone-stay-traces.js';
import { childIndexesUsable, listedSegments } from '../../support/segment-indexes.js';

const OPTIONS = { threads: 1, rowGroupSize: 512, autoCompact: false } as const;

const traces = (from: number, n: number) => goneStayTraces(from, n);

async function load(t: TestContext, dir: string): Promise<{ store: TraceStore; projectId: string; runId: string }> {
  const store = await TraceStore.open(dir, OPTIONS);
  t.after(() => store.close());
  const projectId = store.createProject({ name: 'p' }).id;
  const runId = store.createLogStream(projectId, 'r').id;
  for (let s = 0; s < 4; s++) {
    await store.logTraces(projectId, { log_stream_id: runId, traces: traces(s * 300, 300) } as never);
    await store.flush();
  }
  return { store, projectId, runId };
}

const listed = listedSegments;

/** Whether each listed segment has its child index and its row file (parent hashes and seqs in row order). */
const usable = (dir: string) => childIndexesUsable(dir);

/** has_children of every span and trace after deleting the 'gone' leaves, by name. */
async function afterDelete(store: TraceStore, projectId: string, runId: string): Promise<{ deleted: number; hc: [string, boolean][] }> {
  const ls = { log_stream_id: runId };
  const { deleted } = await store.records.delete('span', projectId, {
    ...ls,
    filters: [{ type: 'collection', column_id: 'tags', operator: 'contains', value: 'gone' }],
  });
  const rows = await store.data.sql(
    'SELECT name, has_children FROM spans UNION ALL SELECT name, has_children FROM traces ORDER BY name',
    [],
  );
  return { deleted, hc: rows.map((r) => [String(r['name']), r['has_children'] === true]) };
}

test('child indexes: written with every segment, replaced when missing, damaged, stale or half-built; merges keep them', {
  timeout: 120_000,
}, async (t) => {
  const dir = tempDir(t);
  const first = await load(t, dir);
  const segs = listed(dir);
  assert.ok(segs.length >= 8, `segments: ${segs.length}`);
  assert.deepEqual(
    await usable(dir),
    segs.map(() => true),
    'every listed segment has a usable index',
  );
  await first.store.close();

  // The answer through the indexes as written, on a copy of the folder.
  const copy = tempDir(t);
  cpSync(dir, copy, { recursive: true });
  const reference = await TraceStore.open(copy, OPTIONS);
  const expected = await afterDelete(reference, first.projectId, first.runId);
  await reference.close();
  assert.ok(
    expected.deleted > 100 && expected.hc.some(([, hc]) => !hc) && expected.hc.some(([name, hc]) => name.startsWith('c') && hc),
    'some parents lose every child, others keep one',
  );

  // Missing, truncated, another segment's, another DuckDB's probe, and a half-built leftover.
  const spans = segs.filter((s) => s.abs.includes('kind=span'));
  rmSync(childIndexPath(spans[0]!.abs));
  writeFileSync(childIndexPath(spans[1]!.abs), readFileSync(childIndexPath(spans[1]!.abs)).subarray(0, 100));
  copyFileSync(childIndexPath(spans[3]!.abs), childIndexPath(spans[2]!.abs));
  const db = await Database.open({});
  const conn = await db.dedicated();
  const odd = `${childIndexPath(spans[3]!.abs)}.odd`;
  await conn.run(
    sql`COPY (SELECT * FROM read_parquet(${childIndexPath(spans[3]!.abs)})) TO ${stringLiteral(odd)} (FORMAT parquet, KV_METADATA {tracelake_hash_probe: '1'})`,
  );
  await db.close();
  renameSync(odd, childIndexPath(spans[3]!.abs));
  const leftover = `${childIndexPath(spans[0]!.abs)}.tmp-999999`;
  writeFileSync(leftover, 'half');
  // Row files alone: missing (a store of an earlier version), truncated.
  const tr = segs.filter((s) => s.abs.includes('kind=trace'));
  rmSync(childRowsPath(tr[0]!.abs));
  writeFileSync(childRowsPath(tr[1]!.abs), readFileSync(childRowsPath(tr[1]!.abs)).subarray(0, 100));
  const before = await usable(dir);
  assert.deepEqual(before.filter((u) => !u).length, 6, 'six indexes are unusable before the open');

  const store = await TraceStore.open(dir, OPTIONS);
  t.after(() => store.close());
  assert.equal(await store.maintenance.indexesRepaired(), 6, 'six rebuilt after the open');
  assert.deepEqual(
    await usable(dir),
    segs.map(() => true),
    'all rebuilt after the open',
  );
  assert.equal(existsSync(leftover), false, 'the half-built leftover is gone');
  assert.deepEqual(await afterDelete(store, first.projectId, first.runId), expected, 'the same answers through rebuilt indexes');

  // A merge writes the merged segment's index; the inputs' go with them.
  await store.maintenance.compact();
  const merged = listed(dir);
  assert.ok(merged.length < segs.length, 'segments were merged');
  assert.deepEqual(
    await usable(dir),
    merged.map(() => true),
    'merged segments have usable indexes',
  );
  // The inputs go once no reader may use them (in the background): their indexes with them.
  const inputs = segs.filter((x) => !merged.some((m) => m.abs === x.abs));
  await waitFor(
    () =>
      inputs.every((s) => !existsSync(childIndexPath(s.abs))) ||
      `left: ${inputs
        .filter((s) => existsSync(childIndexPath(s.abs)))
        .map((s) => s.abs)
        .join(', ')}`,
    { what: "the merged inputs' indexes to go with them" },
  );
  const kids = readdirSync(dirname(merged.find((s) => s.abs.includes('kind=span'))!.abs)).filter((f) => f.endsWith('.kids'));
  assert.equal(kids.length, merged.filter((s) => s.abs.includes('kind=span')).length, 'one index per span segment, no other');
  assert.ok(
    inputs.every((s) => !existsSync(childRowsPath(s.abs))),
    "the merged inputs' row files went with them",
  );
});

test("row files hold each row's stored has_children; one of the first version is rebuilt after open", { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t);
  const first = await load(t, dir);
  // Some parents lose every child: has_children false in memory, then in the segment the seal writes.
  await afterDelete(first.store, first.projectId, first.runId);
  await first.store.logTraces(first.projectId, { log_stream_id: first.runId, traces: traces(2000, 100) } as never);
  await first.store.flush();
  await first.store.close();
  const segs = listed(dir);
  const old = childRowsPath(segs.find((s) => s.abs.includes('kind=span'))!.abs);
  const bytes = readFileSync(old);
  bytes.write('TLKROWS1', 0, 'latin1');
  writeFileSync(old, bytes);
  const store = await TraceStore.open(dir, OPTIONS);
  t.after(() => store.close());
  assert.equal(await store.maintenance.indexesRepaired(), 1, 'the first version is rebuilt');
  const db = await Database.open({});
  t.after(() => db.close());
  const conn = await db.dedicated();
  let set = 0;
  for (const seg of segs) {
    const file = readFileSync(childRowsPath(seg.abs));
    assert.equal(file.toString('latin1', 0, 8), 'TLKROWS2');
    const at = childRowsFlagsAt(seg.rows, file.readUInt8(24) === 1);
    assert.equal(file.length, at + 4 * Math.ceil(seg.rows / 32), `${seg.file}: its size`);
    assert.ok(at >= ROWS_HEADER + 16 * seg.rows);
    const bits = Array.from({ length: seg.rows }, (_, r) => ((file.readUInt32LE(at + 4 * (r >>> 5)) >>> (r & 31)) & 1) === 1);
    const stored = (await conn.all(sql`SELECT has_children FROM read_parquet(${seg.abs}) ORDER BY file_row_number`)).map(
      (r) => r['has_children'] === true,
    );
    assert.deepEqual(bits, stored, `${seg.file}: a bit a row, as stored`);
    set += bits.filter(Boolean).length;
  }
  assert.ok(set > 0 && set < segs.reduce((n, s) => n + s.rows, 0), 'some rows have children, others not');
});
