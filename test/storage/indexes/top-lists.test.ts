// Guarantees: every segment written with metrics has a top lists file (src/storage/indexes/top-lists.ts)
// holding, for each metric and direction, the rows DuckDB's own sort of the segment puts first (value,
// then id; a 2,049th row when the segment holds more), with their narrow columns; a fresh metric-sorted
// page is answered from those files without sorting any segment, with another metric's filter tested
// on the listed values (values that cannot be read leave the page to its keys query); a damaged file
// only costs the sort (the page is unchanged); the files of merged-away segments go, stray ones go on open; segments an
// older build wrote get theirs in the background (fact-backfill.ts).
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { Database } from '../../../src/db/database.js';
import { internalsOf } from '../../../src/engine/internals.js';
import { TraceStore } from '../../../src/engine/trace-store.js';
import type { ManifestState } from '../../../src/storage/manifest/manifest.js';
import { listNumber, TOP_LIST_ROWS, topListsPath, writeTopLists } from '../../../src/storage/indexes/top-lists.js';
import { compile, ident, int, raw, sql } from '../../../src/query/sql.js';
import { manifestOf, parquetExportOf, tempDir } from '../../support/helpers.js';
import {
  askLlmPage,
  askTokensPage,
  everySpan,
  expectedPage,
  fillWithDeadAndMemoryRows,
  idOf,
  listedStore,
  llmTraces,
  type Rec,
  oneSpanTraces,
} from '../../support/metric-pages.js';

/** A store of listedStore's options in a new folder, with a project and a log stream; its plans go to `steps`. */
async function listedProject(t: TestContext) {
  const dir = tempDir(t);
  const steps: string[][] = [];
  const store = await TraceStore.open(dir, listedStore(steps));
  t.after(() => store.close());
  const projectId = store.createProject({ name: 'p' }).id;
  const log_stream_id = store.createLogStream(projectId, 'default').id;
  return { dir, steps, store, projectId, log_stream_id };
}

/** Files under the folder's records/ ending with `ext`, relative to the folder. */
function filesEnding(dir: string, ext: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith(ext)) out.push(p.slice(dir.length + 1));
    }
  };
  walk(join(dir, 'records'));
  return out.sort();
}

test("a segment's top lists file holds each metric's first rows in both directions, as DuckDB sorts the segment", async (t) => {
  const dir = tempDir(t);
  const store = await TraceStore.open(dir, { threads: 1, autoCompact: false, topListMinRows: 0 });
  const projectId = store.createProject({ name: 'p' }).id;
  const log_stream_id = store.createLogStream(projectId, 'default').id;
  // One segment with more rows than a list keeps (quality in tenths: long runs of ties), one with fewer.
  await store.logTraces(projectId, { log_stream_id, traces: llmTraces(0, TOP_LIST_ROWS + 700) } as never);
  await store.flush();
  await store.logTraces(projectId, { log_stream_id, traces: llmTraces(5000, 90) } as never);
  await store.flush();
  await store.close();
  const db = await Database.open({});
  t.after(() => db.close());
  const spans = manifestOf(dir).segments.filter((g) => g.kind === 'span');
  assert.equal(spans.length, 2);
  let truncated = 0;
  for (const g of spans) {
    assert.equal(g.top_lists, true, g.file);
    assert.ok(g.metrics.length >= 2, `${g.file}: quality and tokens`);
    const abs = join(dir, g.file);
    for (const m of g.metrics) {
      for (const ascending of [false, true]) {
        const col = ident(`m${m}`);
        const d = raw(ascending ? 'ASC' : 'DESC');
        const want = await db.all(
          sql`SELECT seq, id, ${col} AS v, model, trace_id, parent_id, has_children, epoch_us(created_at) AS c FROM read_parquet(${abs})
              WHERE ${col} IS NOT NULL ORDER BY ${col} ${d}, id ${d} LIMIT ${int(TOP_LIST_ROWS + 1)}`,
        );
        const got = await db.all(
          sql`SELECT seq, id, ${col} AS v, model, trace_id, parent_id, has_children, c FROM read_parquet(${topListsPath(abs)})
              WHERE list = ${int(listNumber(m, ascending))} ORDER BY rank`,
        );
        assert.ok(want.length > 0, `${g.file} m${m}: rows with a value`);
        assert.deepEqual(got, want, `${g.file} m${m} asc=${ascending}`);
        if (want.length === TOP_LIST_ROWS + 1) truncated++;
      }
    }
  }
  assert.ok(truncated >= 2, 'the large segment lists one row more than a list keeps, both directions');
});

test('the lists are the sort of the file whatever its values: long runs of ties, NULLs, NaN, fewer rows than a list', async (t) => {
  const dir = tempDir(t);
  const db = await Database.open({});
  t.after(() => db.close());
  const conn = await db.dedicated();
  // m0: three values (ties far past a list's length); m1: NULL on most rows; m2: NaN on some (the
  // one-pass way); m3: on 40 rows only. Ids are random, so ties are broken by id.
  const file = join(dir, 'seg-000000001.parquet');
  await conn.run(
    sql`COPY (SELECT i AS seq, make_timestamp(1700000000000000 + i) AS created_at, uuid()::VARCHAR AS id, 'llm' AS type,
          NULL::VARCHAR AS session_id, uuid()::VARCHAR AS trace_id, NULL::VARCHAR AS parent_id, false AS has_children,
          200 AS status_code, 'm' AS model, 'step ' || (i % 5) AS name, ['tag' || (i % 7), 'x'] AS tags,
          (i % 3)::DOUBLE AS m0, CASE WHEN i % 9 = 0 THEN i / 7 END::DOUBLE AS m1,
          CASE WHEN i % 500 = 0 THEN 'NaN'::DOUBLE ELSE (i % 17)::DOUBLE END AS m2, CASE WHEN i < 40 THEN (i % 4)::DOUBLE END AS m3
        FROM range(7000) r(i)) TO ${file} (FORMAT parquet)`,
  );
  for (const metrics of [
    [0, 1, 3],
    [0, 1, 2, 3],
  ]) {
    assert.equal(await writeTopLists(conn, file, metrics), true);
    for (const m of metrics) {
      for (const ascending of [false, true]) {
        const col = ident(`m${m}`);
        const d = raw(ascending ? 'ASC' : 'DESC');
        const want = await db.all(
          sql`SELECT seq, id, name, tags, ${col}::VARCHAR AS v FROM read_parquet(${file}) WHERE ${col} IS NOT NULL
              ORDER BY ${col} ${d}, id ${d} LIMIT ${int(TOP_LIST_ROWS + 1)}`,
        );
        const got = await db.all(
          sql`SELECT seq, id, name, tags, ${col}::VARCHAR AS v FROM read_parquet(${topListsPath(file)})
              WHERE list = ${int(listNumber(m, ascending))} ORDER BY rank`,
        );
        assert.deepEqual(got, want, `metrics ${metrics} m${m} asc=${ascending}`);
      }
    }
  }
});

/** A list read off a segment by topk-cache.ts (a sort of the whole segment). */
const isSegmentSort = (text: string) => /^SELECT seq, epoch_us\(created_at\) AS c, id, type/.test(text);

function watchSegmentSorts(t: TestContext): { sorts: number } {
  const seen = { sorts: 0 };
  const original = Database.prototype.all;
  Database.prototype.all = function (this: Database, q) {
    if (isSegmentSort(compile(q).text)) seen.sorts++;
    return original.call(this, q);
  };
  t.after(() => {
    Database.prototype.all = original;
  });
  return seen;
}

test('a fresh metric-sorted page comes from the top lists files, sorting no segment; a damaged file costs only the sort', async (t) => {
  const dir = tempDir(t);
  const steps: string[][] = [];
  const open = () => TraceStore.open(dir, listedStore(steps));
  let store = await open();
  const projectId = store.createProject({ name: 'p' }).id;
  const log_stream_id = store.createLogStream(projectId, 'default').id;
  const { all } = await fillWithDeadAndMemoryRows(store, projectId, log_stream_id, [3, 50, 130, 260]);
  const ask = async (model: string, ascending: boolean, offset: number) =>
    (await askLlmPage(store, { projectId, log_stream_id, all, steps }, model, ascending, offset))[0];
  const watch = watchSegmentSorts(t);
  // Asked once each, on a store whose lists no page has read: answered from the files.
  for (const [model, ascending, offset] of [
    ['a', false, 0],
    ['b', true, 20],
    ['a', true, 5],
  ] as const) {
    assert.match(String(await ask(model, ascending, offset)), /^keys \(top-k of \d+ listed rows\)$/);
  }
  assert.equal(watch.sorts, 0, 'no segment sorted for its list');
  // A filter on another metric tests that metric's listed values. When the files cannot be asked in
  // place, the lists are read from them (their rows, then other metrics' values as filters need
  // them); when those values cannot be read either, the keys query answers (the same page).
  const tokensPage = async (over: number) => (await askTokensPage(store, { projectId, log_stream_id, all, steps }, over, 10))[0];
  const original = Database.prototype.all;
  let listReads = true;
  Database.prototype.all = function (this: Database, q) {
    const text = compile(q).text;
    if (/WHERE list = \d+ AND rank <=/.test(text)) return Promise.reject(new Error('injected in-place read failure'));
    if (!listReads && /WHERE list = \d+ ORDER BY rank/.test(text) && !text.includes(' AS v '))
      return Promise.reject(new Error('injected values read failure'));
    return original.call(this, q);
  };
  try {
    assert.match(String(await ask('a', false, 0)), /^keys \(top-k of \d+ listed rows\)$/, 'lists read from the files');
    listReads = false;
    assert.equal(await tokensPage(20), 'keys (top-k: not enough)');
  } finally {
    Database.prototype.all = original;
  }
  assert.match(String(await tokensPage(30)), /^keys \(top-k of \d+ listed rows\)$/);
  assert.equal(watch.sorts, 0, 'no segment sorted for its list');
  await store.close();
  // Every span segment's file damaged: the lists come from the segments, the pages do not change.
  const spans = manifestOf(dir).segments.filter((g) => g.kind === 'span');
  assert.ok(spans.length >= 4);
  for (const g of spans) writeFileSync(topListsPath(join(dir, g.file)), 'not parquet');
  store = await open();
  t.after(() => store.close());
  for (const [model, ascending, offset] of [
    ['a', false, 0],
    ['b', true, 20],
  ] as const)
    await ask(model, ascending, offset);
  assert.ok(watch.sorts >= spans.length, `${watch.sorts} segments sorted after their files were damaged`);
});

test("segments from the size threshold get top lists (a merge's, not the small seals'); pages read small ones whole; stray files go", async (t) => {
  const dir = tempDir(t);
  const steps: string[][] = [];
  const options = {
    threads: 1,
    autoCompact: false,
    topListMinRows: 150,
    metricTopKRowsPerCandidate: 0,
    onPlan: (s: readonly string[]) => steps.push([...s]),
  };
  let store = await TraceStore.open(dir, options);
  const projectId = store.createProject({ name: 'p' }).id;
  const log_stream_id = store.createLogStream(projectId, 'default').id;
  // Four seals of 50 spans: a partition merges once it holds MERGE_FANIN segments.
  for (let b = 0; b < 4; b++) {
    await store.logTraces(projectId, { log_stream_id, traces: llmTraces(b * 50, 50) } as never);
    await store.flush();
  }
  const listed = (m: ManifestState) =>
    m.segments
      .filter((g) => g.top_lists === true)
      .map((g) => topListsPath(g.file))
      .sort();
  assert.deepEqual(filesEnding(dir, '.top'), [], 'no seal reaches the threshold');
  await store.maintenance.compact();
  const merged = manifestOf(dir).segments.filter((g) => g.kind === 'span');
  assert.deepEqual(
    merged.map((g) => [g.rows, g.top_lists]),
    [[200, true]],
    'the merged segment has its lists',
  );
  assert.deepEqual(filesEnding(dir, '.top'), listed(manifestOf(dir)), 'only the listed segments have files');
  // A small seal (read whole) and rows in memory beside the merged segment's lists.
  await store.logTraces(projectId, { log_stream_id, traces: llmTraces(200, 50) } as never);
  await store.flush();
  await store.logTraces(projectId, { log_stream_id, traces: llmTraces(250, 30) } as never);
  const all = (await store.search('span', projectId, { log_stream_id, limit: 1000 })).records;
  assert.equal(all.length, 280);
  const watch = watchSegmentSorts(t);
  for (const [where, filter] of [
    [{ model: 'a' }, { type: 'text', column_id: 'model', operator: 'eq', value: 'a' }],
    [{ tokensOver: 40 }, { type: 'number', column_id: 'metrics/tokens', operator: 'gt', value: 40 }],
  ] as const) {
    for (const ascending of [false, true]) {
      steps.length = 0;
      const page = await store.partialSearch('span', projectId, {
        log_stream_id,
        filters: [filter],
        sort: { column_id: 'metrics/quality', ascending },
        limit: 10,
        select_columns: { column_ids: ['id'] },
      } as never);
      assert.deepEqual(
        page.records.map((r) => r['id']),
        expectedPage(all, where, ascending, 0, 10),
        `${JSON.stringify(where)} asc=${ascending}: ${steps.flat().join(' → ')}`,
      );
      assert.match(steps.flat()[0]!, /^keys \(top-k of \d+ listed rows\)$/);
    }
  }
  assert.equal(watch.sorts, 0, 'no segment sorted for a list');
  await store.close();
  const stray = join(dirOf(merged[0]!.file, dir), 'seg-999999999.top');
  writeFileSync(stray, 'left by a merge that never committed');
  store = await TraceStore.open(dir, options);
  t.after(() => store.close());
  assert.deepEqual(filesEnding(dir, '.top'), listed(manifestOf(dir)), 'the stray file is gone');
});

const dirOf = (rel: string, dir: string) => join(dir, rel, '..');

/** A store that writes and tries the lists at any size, and the plan steps of its pages. */
async function listingStore(t: TestContext, dir: string): Promise<{ store: TraceStore; steps: string[][] }> {
  const steps: string[][] = [];
  const store = await TraceStore.open(dir, {
    threads: 1,
    autoCompact: false,
    topListMinRows: 0,
    metricTopKRowsPerCandidate: 0,
    onPlan: (s) => steps.push([...s]),
  });
  t.after(() => store.close());
  return { store, steps };
}

/** The top lists files the manifest's segments have. */
const listedFiles = (m: ManifestState) =>
  m.segments
    .filter((g) => g.top_lists === true)
    .map((g) => topListsPath(g.file))
    .sort();

test("a page asked of the files in place never ends past a truncated list's last row: rows beyond it could come first", async (t) => {
  const dir = tempDir(t);
  const { store, steps } = await listingStore(t, dir);
  const { projectId, log_stream_id, n } = await modelPastTheList(store);
  await store.flush();
  // In memory, rows of model y worse than every row of the segment.
  await store.logTraces(projectId, {
    log_stream_id,
    traces: oneSpanTraces(n, 30, () => ({ model: 'y', metrics: { quality: 0.1 } })),
  } as never);
  const all = await everySpan(store, projectId, log_stream_id);
  const scope = { projectId, log_stream_id, all, steps };
  // The first page of y holds the segment's unlisted rows, not the memory rows the candidates offer.
  assert.deepEqual(await askLlmPage(store, scope, 'y', false, 0), ['keys (top-k: too few listed rows can match)', 'keys']);
  // Model x is answered from the list.
  assert.match(String((await askLlmPage(store, scope, 'x', false, 0))[0]), /^keys \(top-k of \d+ listed rows\)$/);
});

test('deeper lists, as the segment entry counts them, serve a filter that admits none of the first 2,048 rows', async (t) => {
  const dir = tempDir(t);
  let { store, steps } = await listingStore(t, dir);
  const { projectId, log_stream_id } = await modelPastTheList(store);
  await store.close();
  // The segment's lists rewritten to keep all of its rows, and its entry saying so.
  const m = manifestOf(dir);
  const seg = m.segments.find((g) => g.kind === 'span')!;
  assert.equal(seg.top_list_rows, undefined, 'a small segment keeps the least');
  const db = await Database.open({});
  await db.withConnection((c) => writeTopLists(c, join(dir, seg.file), seg.metrics, TOP_LIST_ROWS + 100));
  await db.close();
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({ ...m, segments: m.segments.map((g) => (g === seg ? { ...g, top_list_rows: TOP_LIST_ROWS + 100 } : g)) }),
  );
  ({ store, steps } = await listingStore(t, dir));
  const all = await everySpan(store, projectId, log_stream_id);
  const scope = { projectId, log_stream_id, all, steps };
  assert.match(String((await askLlmPage(store, scope, 'y', false, 0))[0]), /^keys \(top-k of \d+ listed rows\)$/);
  assert.match(String((await askLlmPage(store, scope, 'y', true, 0))[0]), /^keys \(top-k of \d+ listed rows\)$/);
});

/**
 * A project and stream of TOP_LIST_ROWS + 60 llm spans by falling quality: model x for the first
 * TOP_LIST_ROWS (a list of that many holds only them), model y past them.
 */
async function modelPastTheList(store: TraceStore): Promise<{ projectId: string; log_stream_id: string; n: number }> {
  const projectId = store.createProject({ name: 'p' }).id;
  const log_stream_id = store.createLogStream(projectId, 'default').id;
  const n = TOP_LIST_ROWS + 60;
  const shape = (i: number) => ({ model: i < TOP_LIST_ROWS ? 'x' : 'y', metrics: { quality: 1 - i / 10_000 } });
  await store.logTraces(projectId, { log_stream_id, traces: oneSpanTraces(0, n, shape) } as never);
  return { projectId, log_stream_id, n };
}

test('segments an older build wrote without top lists get them in the background after a writable open', async (t) => {
  const dir = tempDir(t);
  const older = await TraceStore.open(dir, { threads: 1, autoCompact: false, topLists: false, topListMinRows: 0 });
  const projectId = older.createProject({ name: 'p' }).id;
  const log_stream_id = older.createLogStream(projectId, 'default').id;
  for (let b = 0; b < 2; b++) {
    await older.logTraces(projectId, { log_stream_id, traces: llmTraces(b * 60, 60) } as never);
    await older.flush();
  }
  await older.close();
  assert.deepEqual(filesEnding(dir, '.top'), [], 'none written');
  assert.ok(manifestOf(dir).segments.every((g) => g.top_lists === undefined));
  const { store, steps } = await listingStore(t, dir);
  await internalsOf(store).records.factsSettled();
  const m = manifestOf(dir);
  const withMetrics = m.segments.filter((g) => g.metrics.length > 0);
  assert.ok(withMetrics.length >= 2);
  assert.ok(
    withMetrics.every((g) => g.top_lists === true),
    'flagged in the manifest',
  );
  assert.deepEqual(filesEnding(dir, '.top'), withMetrics.map((g) => topListsPath(g.file)).sort());
  steps.length = 0;
  const page = await store.partialSearch('span', projectId, {
    log_stream_id,
    filters: [{ type: 'text', column_id: 'model', operator: 'eq', value: 'a' }],
    sort: { column_id: 'metrics/quality', ascending: false },
    limit: 10,
    select_columns: { column_ids: ['id'] },
  } as never);
  assert.match(steps.flat()[0]!, /^keys \(top-k of \d+ listed rows\)$/, 'a fresh page from the lists');
  const all = (await store.search('span', projectId, { log_stream_id, limit: 1000 })).records;
  assert.deepEqual(
    page.records.map((r) => r['id']),
    expectedPage(all, { model: 'a' }, false, 0, 10),
  );
});

test("an import leaves its segments' top lists to the background, which writes them after it; pages from them", async (t) => {
  const { plain } = await parquetExportOf(t, llmTraces(0, 300));
  const dir = tempDir(t);
  const { store, steps } = await listingStore(t, dir);
  const { projectId, logStreamId: log_stream_id } = await store.data.importFile(plain, { project: 'p', logStream: 'main' });
  await internalsOf(store).records.factsSettled();
  const spans = manifestOf(dir).segments.filter((g) => g.kind === 'span');
  assert.ok(spans.length > 0 && spans.every((g) => g.top_lists === true), 'the imported span segments have their lists');
  assert.deepEqual(filesEnding(dir, '.top'), listedFiles(manifestOf(dir)));
  const all = (await store.search('span', projectId, { log_stream_id, limit: 1000 })).records;
  const first = await askLlmPage(store, { projectId, log_stream_id, all, steps }, 'a', false, 0);
  assert.match(first[0]!, /^keys \(top-k of \d+ listed rows\)$/);
});

test('a filter on another metric that admits too few listed rows is told from the files: no list is read into memory', async (t) => {
  const dir = tempDir(t);
  const { store, steps } = await listingStore(t, dir);
  const projectId = store.createProject({ name: 'p' }).id;
  const log_stream_id = store.createLogStream(projectId, 'default').id;
  for (let b = 0; b < 3; b++) {
    await store.logTraces(projectId, { log_stream_id, traces: llmTraces(b * 100, 100) } as never);
    await store.flush();
  }
  const all = (await store.search('span', projectId, { log_stream_id, limit: 1000 })).records;
  let fullReads = 0;
  const original = Database.prototype.all;
  Database.prototype.all = function (this: Database, q) {
    if (/to_json\(list\(\{seq: "seq"/.test(compile(q).text)) fullReads++;
    return original.call(this, q);
  };
  t.after(() => {
    Database.prototype.all = original;
  });
  const ask = async (over: number) => (await askTokensPage(store, { projectId, log_stream_id, all, steps }, over, 50))[0];
  // Tokens are 0-96: above 94, a few of 300 rows.
  assert.equal(await ask(94), 'keys (top-k: too few listed rows can match)');
  assert.equal(fullReads, 0, 'no list read for a page the lists cannot fill');
  assert.match(String(await ask(10)), /^keys \(top-k of \d+ listed rows\)$/);
  assert.equal(fullReads, 0, 'a page they can fill is asked of the files where they lie');
});

test("a page showing columns the lists do not keep reads them from the listed rows' places in their segments, not by seq", async (t) => {
  const { dir, steps, store, projectId, log_stream_id } = await listedProject(t);
  // Four listed segments, deleted rows among them, and rows still in memory.
  const { all } = await fillWithDeadAndMemoryRows(store, projectId, log_stream_id, [7, 61, 140, 300]);
  assert.ok(
    manifestOf(dir)
      .segments.filter((g) => g.kind === 'span')
      .every((g) => g.top_list_places === true),
  );
  const byId = new Map(all.map((r) => [String(r['id']), r]));
  const shown = ['id', 'name', 'input', 'model', 'created_at'];
  for (const [model, ascending, offset] of [
    [undefined, false, 0],
    ['a', true, 10],
    ['b', false, 25],
  ] as const) {
    const asked = {
      log_stream_id,
      filters: [
        { type: 'text', column_id: 'type', operator: 'eq', value: 'llm' },
        ...(model === undefined ? [] : [{ type: 'text', column_id: 'model', operator: 'eq', value: model }]),
      ],
      sort: { column_id: 'metrics/quality', ascending },
      starting_token: offset,
      limit: 10,
    };
    steps.length = 0;
    const page = await store.partialSearch('span', projectId, { ...asked, select_columns: { column_ids: shown } } as never);
    const what = `model ${model} asc=${ascending} offset=${offset}: ${steps.flat().join(' → ')}`;
    assert.match(steps.flat()[0]!, /^keys \(top-k of \d+ listed rows\)$/, what);
    assert.ok(steps.flat().includes('fetch (located)'), what);
    const ids = page.records.map((r) => String(r['id']));
    assert.deepEqual(ids, expectedPage(all, model === undefined ? {} : { model }, ascending, offset, 10), what);
    for (const r of page.records) {
      const want = byId.get(String(r['id']))!;
      for (const c of ['name', 'input', 'model', 'created_at']) assert.deepEqual(r[c], want[c], `${what} ${r['id']} ${c}`);
    }
    // A search (whole records) reads every column from the same places.
    steps.length = 0;
    const whole = await store.search('span', projectId, asked as never);
    assert.ok(steps.flat().includes('fetch (located)'), `search ${what}: ${steps.flat().join(' → ')}`);
    assert.deepEqual(
      whole.records,
      ids.map((id) => byId.get(id)),
      `search ${what}`,
    );
  }
});

test("a search's page of whole records read from the lists' places shows has_children as the deletes left it", async (t) => {
  const { steps, store, projectId, log_stream_id } = await listedProject(t);
  // Workflow spans with a quality and one llm child each, sealed; then the children of every third deleted.
  const wf = (i: number) => idOf(2_000_000 + i);
  const child = (i: number) => idOf(3_000_000 + i);
  const traces = Array.from({ length: 60 }, (_, i) => ({
    id: idOf(i),
    name: `t${i}`,
    created_at: new Date(1_700_000_000_000 + i * 1000).toISOString(),
    spans: [
      { type: 'workflow', id: wf(i), name: 'wf', metrics: { quality: (i % 13) / 10 }, spans: [{ type: 'llm', id: child(i), name: 'c' }] },
    ],
  }));
  await store.logTraces(projectId, { log_stream_id, traces } as never);
  await store.flush();
  const orphaned = traces.map((_, i) => i).filter((i) => i % 3 === 0);
  await store.records.delete('span', projectId, {
    filters: [{ type: 'id', column_id: 'id', operator: 'one_of', value: orphaned.map(child) }],
  });
  steps.length = 0;
  const page = await store.search('span', projectId, {
    log_stream_id,
    // Only childless rows can be listed pages (a parent's value may be a roll-up): those of the deletes.
    filters: [
      { type: 'text', column_id: 'type', operator: 'eq', value: 'workflow' },
      { type: 'boolean', column_id: 'has_children', operator: 'eq', value: false },
    ],
    sort: { column_id: 'metrics/quality', ascending: false },
    limit: 10,
  } as never);
  assert.match(steps.flat()[0]!, /^keys \(top-k of \d+ listed rows\)$/, steps.flat().join(' → '));
  assert.ok(steps.flat().includes('fetch (located)'), steps.flat().join(' → '));
  const byId = new Map((await everySpan(store, projectId, log_stream_id)).map((r) => [String(r['id']), r]));
  const expected = orphaned
    .map(wf)
    .sort(
      (a, b) =>
        Number((byId.get(b)!['metrics'] as Rec)['quality']) - Number((byId.get(a)!['metrics'] as Rec)['quality']) || (a < b ? 1 : -1),
    )
    .slice(0, 10);
  assert.deepEqual(
    page.records.map((r) => r['id']),
    expected,
  );
  for (const r of page.records) {
    assert.equal(r['has_children'], false, `${r['id']}`);
    assert.deepEqual(r, byId.get(String(r['id'])));
  }
});
