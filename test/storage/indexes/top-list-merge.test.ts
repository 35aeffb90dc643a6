// Guarantees: a merged segment's top lists made from its inputs' lists (src/storage/indexes/top-list-merge.ts)
// are row for row the lists built from the merged file's rows (ranks, values, narrow and filter
// columns, row numbers), with rows the merge dropped left out and has_children as the merged file has
// it; and the inputs' lists are refused (false: the caller builds from the rows) when an input has no
// lists, when an input's list was cut short and every surviving row of it made the cut, and when the
// merged file's rows are not the inputs' in order.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { type Connection, Database } from '../../../src/db/database.js';
import { stringLiteral } from '../../../src/db/sql-string.js';
import { TraceStore } from '../../../src/engine/trace-store.js';
import { raw, sql } from '../../../src/query/sql.js';
import type { MergedFrom } from '../../../src/storage/indexes/text-merge.js';
import { writeMergedTopLists } from '../../../src/storage/indexes/top-list-merge.js';
import { TOP_LIST_ROWS, topListsPath, writeTopLists } from '../../../src/storage/indexes/top-lists.js';
import { manifestOf, tempDir } from '../../support/helpers.js';
import { idOf, llmTraces } from '../../support/metric-pages.js';

/**
 * An input segment of `n` rows from seq `from`: m0 in tenths (long runs of ties), m1 on every third
 * row, m2 only where `m2` says (a metric some inputs lack), random ids; `extra` adds to m0 (an input
 * whose values all beat the others').
 */
async function input(conn: Connection, file: string, from: number, n: number, opts: { m2?: boolean; extra?: number } = {}): Promise<void> {
  const m2 = opts.m2 ? raw(', (i % 13)::DOUBLE AS m2') : raw('');
  await conn.run(
    sql`COPY (SELECT i AS seq, make_timestamp(1700000000000000 + i) AS created_at, uuid()::VARCHAR AS id, 'llm' AS type,
          NULL::VARCHAR AS session_id, uuid()::VARCHAR AS trace_id, NULL::VARCHAR AS parent_id, i % 4 = 0 AS has_children,
          200 AS status_code, 'm' || (i % 3) AS model, 'step ' || (i % 5) AS name, ['tag' || (i % 7)] AS tags,
          ((hash(i) % 10) / 10 + ${raw(String(opts.extra ?? 0))})::DOUBLE AS m0, CASE WHEN i % 3 = 0 THEN (hash(i) % 1000)::DOUBLE END AS m1 ${m2}
        FROM range(${raw(String(from))}, ${raw(String(from + n))}) r(i)) TO ${stringLiteral(file)} (FORMAT parquet, ROW_GROUP_SIZE 1024)`,
  );
}

/** The inputs merged as a merge writes them: one after another, less `dropped`, has_children off for `childless`. */
async function merge(conn: Connection, out: string, inputs: readonly string[], dropped: readonly number[], childless: readonly number[]) {
  const list = (xs: readonly number[]) => raw(`[${xs.join(',')}]::BIGINT[]`);
  await conn.run(
    sql`COPY (SELECT * REPLACE (has_children AND NOT list_contains(${list(childless)}, seq) AS has_children)
          FROM read_parquet(${inputs as string[]}, hive_partitioning = false, union_by_name = true)
          WHERE NOT list_contains(${list(dropped)}, seq)) TO ${stringLiteral(out)} (FORMAT parquet, ROW_GROUP_SIZE 4096)`,
  );
}

const rowGroups = async (conn: Connection, file: string) =>
  (
    await conn.all(sql`SELECT row_group_num_rows AS n FROM parquet_metadata(${file}) WHERE path_in_schema = 'seq' ORDER BY row_group_id`)
  ).map((r) => Number(r['n']));

/** Every row of a lists file, in (list, rank) order. */
const listRows = (conn: Connection, file: string) =>
  conn.all(sql`SELECT * FROM read_parquet(${topListsPath(file)}, hive_partitioning = false) ORDER BY list, rank`);

async function setUp(t: TestContext) {
  const dir = tempDir(t);
  const db = await Database.open({ threads: 1 });
  t.after(() => db.close());
  const conn = await db.dedicated();
  return { dir, conn };
}

/** The merged file's lists from its rows, written beside a copy of it. */
async function fromRows(conn: Connection, dir: string, merged: string, metrics: number[], depth: number) {
  mkdirSync(join(dir, 'rows'), { recursive: true });
  const copy = join(dir, 'rows', 'seg-000000099.parquet');
  copyFileSync(merged, copy);
  assert.equal(await writeTopLists(conn, copy, metrics, depth), true);
  return listRows(conn, copy);
}

test("a merge's lists from its inputs' equal the lists of its rows: dropped rows left out, has_children as merged, a metric some inputs lack", async (t) => {
  const { dir, conn } = await setUp(t);
  const files = [0, 1, 2].map((i) => join(dir, `seg-00000000${i + 1}.parquet`));
  await input(conn, files[0]!, 0, 5000, { m2: true });
  await input(conn, files[1]!, 5000, 3000);
  await input(conn, files[2]!, 8000, 1500, { m2: true });
  await writeTopLists(conn, files[0]!, [0, 1, 2]);
  await writeTopLists(conn, files[1]!, [0, 1]);
  await writeTopLists(conn, files[2]!, [0, 1, 2]);
  // Dropped: listed rows and others, in every input; childless: rows whose has_children was true.
  const best = await conn.all(sql`SELECT seq FROM read_parquet(${topListsPath(files[0]!)}) WHERE list = 0 AND rank <= 40`);
  const dropped = [...best.map((r) => Number(r['seq'])).filter((_, i) => i % 2 === 0), 5001, 5002, 8003, 9499];
  const childless = [0, 4, 8, 5004, 8008, 9496];
  const merged = join(dir, 'seg-000000004.parquet');
  await merge(conn, merged, files, dropped, childless);
  const from: MergedFrom = {
    inputs: await Promise.all(files.map(async (abs) => ({ abs, rowGroups: await rowGroups(conn, abs), topListRows: TOP_LIST_ROWS }))),
    dropped: new Set(dropped),
  };
  for (const depth of [TOP_LIST_ROWS, 1000]) {
    assert.equal(await writeMergedTopLists(conn, merged, from, [0, 1, 2], depth), true, `depth ${depth}`);
    const got = await listRows(conn, merged);
    const want = await fromRows(conn, dir, merged, [0, 1, 2], depth);
    assert.ok(want.length > 4 * depth, 'every list cut short');
    assert.deepEqual(got, want, `depth ${depth}`);
  }
});

test("the inputs' lists are refused: an input without lists, a cut-short list wholly kept, rows out of the inputs' order", async (t) => {
  const { dir, conn } = await setUp(t);
  const files = [0, 1].map((i) => join(dir, `seg-00000000${i + 1}.parquet`));
  // The first input's m0 beats every value of the second's: the merged list needs rows past its list.
  await input(conn, files[0]!, 0, 4000, { extra: 5 });
  await input(conn, files[1]!, 4000, 4000);
  for (const f of files) await writeTopLists(conn, f, [0, 1]);
  const merged = join(dir, 'seg-000000003.parquet');
  await merge(conn, merged, files, [], []);
  const inputs = await Promise.all(files.map(async (abs) => ({ abs, rowGroups: await rowGroups(conn, abs), topListRows: TOP_LIST_ROWS })));
  const none = new Set<number>();
  assert.equal(await writeMergedTopLists(conn, merged, { inputs, dropped: none }, [0, 1], TOP_LIST_ROWS), false, 'cut short, all kept');
  // m1 alone: both inputs' rows interleave, so its lists can come from the inputs'.
  assert.equal(await writeMergedTopLists(conn, merged, { inputs, dropped: none }, [1], TOP_LIST_ROWS), true);
  assert.deepEqual(await listRows(conn, merged), await fromRows(conn, dir, merged, [1], TOP_LIST_ROWS));
  const unlisted = [inputs[0]!, { abs: inputs[1]!.abs, rowGroups: inputs[1]!.rowGroups }];
  assert.equal(
    await writeMergedTopLists(conn, merged, { inputs: unlisted, dropped: none }, [1], TOP_LIST_ROWS),
    false,
    'an input without lists',
  );
  const reversed = join(dir, 'seg-000000005.parquet');
  await merge(conn, reversed, [...files].reverse(), [], []);
  assert.equal(
    await writeMergedTopLists(conn, reversed, { inputs, dropped: none }, [1], TOP_LIST_ROWS),
    false,
    'rows not in the inputs order',
  );
});

test("an input's cut-short list whose every row was dropped is refused: its rows past the list may belong", async (t) => {
  const { dir, conn } = await setUp(t);
  const files = [0, 1].map((i) => join(dir, `seg-00000000${i + 1}.parquet`));
  await input(conn, files[0]!, 0, 4000);
  await input(conn, files[1]!, 4000, 4000);
  for (const f of files) await writeTopLists(conn, f, [0]);
  const inputs = await Promise.all(files.map(async (abs) => ({ abs, rowGroups: await rowGroups(conn, abs), topListRows: TOP_LIST_ROWS })));
  const kept = join(dir, 'seg-000000003.parquet');
  await merge(conn, kept, files, [], []);
  // Merged lists of 1,000 rows: each input's list of 2,049 holds more than its share of them.
  assert.equal(await writeMergedTopLists(conn, kept, { inputs, dropped: new Set() }, [0], 1000), true, 'both lists share the cut');
  // Every row of the second input's best-first list dropped by the merge.
  const listed = (await conn.all(sql`SELECT seq FROM read_parquet(${topListsPath(files[1]!)}) WHERE list = 0`)).map((r) =>
    Number(r['seq']),
  );
  const gone = join(dir, 'seg-000000004.parquet');
  await merge(conn, gone, files, listed, []);
  assert.equal(await writeMergedTopLists(conn, gone, { inputs, dropped: new Set(listed) }, [0], 1000), false);
});

test("a store's merged segment, its lists made from its inputs', lists what DuckDB's sort of the segment puts first", async (t) => {
  const dir = tempDir(t);
  const store = await TraceStore.open(dir, { threads: 1, autoCompact: false, topListMinRows: 0 });
  const projectId = store.createProject({ name: 'p' }).id;
  const log_stream_id = store.createLogStream(projectId, 'default').id;
  // Three seals of more rows than a list keeps, a delete the merge purges, a replaced record.
  for (let b = 0; b < 3; b++) {
    await store.logTraces(projectId, { log_stream_id, traces: llmTraces(b * 3000, 3000) } as never);
    await store.flush();
  }
  const gone = [5, 3100, 6200].map((i) => idOf(1_000_000 + i));
  await store.records.delete('span', projectId, { filters: [{ type: 'id', column_id: 'id', operator: 'one_of', value: gone }] });
  await store.logTraces(projectId, { log_stream_id, traces: llmTraces(10, 20, 3) } as never);
  await store.flush();
  await store.maintenance.compact();
  await store.close();
  const spans = manifestOf(dir).segments.filter((g) => g.kind === 'span');
  assert.equal(spans.length, 1, 'one merged span segment');
  const g = spans[0]!;
  assert.equal(g.top_lists, true);
  const { conn } = await setUp(t);
  const abs = join(dir, g.file);
  assert.deepEqual(await listRows(conn, abs), await fromRows(conn, dir, abs, [...g.metrics], g.top_list_rows ?? TOP_LIST_ROWS));
});
