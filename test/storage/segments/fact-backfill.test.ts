// Guarantees: a store whose segment entries lack the planner's facts (written by an older build) gets
// them after a writable open, in the background, equal to what a seal records and to what DuckDB reads
// from the files; answers are the same before and after; a close during the work loses nothing and the
// next open finishes it; a merge or delete committed during it wins (no facts for a segment no longer
// listed, no mark lost). A read-only open writes nothing.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { Connection, Database } from '../../../src/db/database.js';
import { DataFactsCache, NOTED_COLUMNS } from '../../../src/query/exec/data-facts.js';
import { OwnValueFacts } from '../../../src/query/exec/own-values.js';
import { compile, sql, type Sql } from '../../../src/query/sql.js';
import type { LogRow } from '../../../src/record/record.js';
import type { ManifestState, SegmentEntry } from '../../../src/storage/manifest/manifest.js';
import { RecordStore } from '../../../src/storage/record-store.js';
import { lacksFacts } from '../../../src/storage/segments/fact-backfill.js';
import { TOP_LIST_MAX_ROWS, TOP_LIST_ROWS, topListRows } from '../../../src/storage/indexes/top-lists.js';
import { countingRunner } from '../../support/counting-runner.js';
import { factMetrics, factRow, factScope } from '../../support/fact-rows.js';
import { manifestOf, tempDir } from '../../support/helpers.js';
import { holdSql } from '../../support/hold-sql.js';

const scope = factScope;
const METRICS = ['duration_ns', 'num_input_tokens', 'quality'];
const COLUMN_IDS = new Set(['model', 'tools', 'temperature']);

/** Every row has a duration; llm spans carry a model and tokens; quality only where asked. */
function row(k: number, type: 'llm' | 'tool' | 'trace', quality: boolean): LogRow {
  const model = type === 'llm' ? { model: k % 2 === 0 ? 'gpt' : 'claude' } : {};
  return factRow(k, type, { ...model, metrics: factMetrics(k, type, quality) }, 9000);
}

const BATCHES = [
  [row(1, 'llm', false), row(2, 'tool', false), row(101, 'trace', false)],
  [row(3, 'llm', false), row(102, 'trace', true)],
  [row(4, 'llm', false), row(5, 'llm', false), row(103, 'trace', false)],
  [row(6, 'llm', true), row(7, 'llm', true), row(104, 'trace', true)],
];

async function open(dir: string, readOnly = false, mergePauseMs?: number): Promise<{ db: Database; store: RecordStore }> {
  const db = await Database.open({ tempDirectory: join(dir, 'tmp') });
  const options = { autoCompact: false, notedColumns: NOTED_COLUMNS, ...(mergePauseMs === undefined ? {} : { mergePauseMs }) };
  return { db, store: readOnly ? await RecordStore.openReadOnly(dir, db, options) : await RecordStore.open(dir, db, options) };
}

const factsOf = (m: ManifestState) => new Map(m.segments.map((g) => [g.file, { type_facts: g.type_facts, full_metrics: g.full_metrics }]));

/** A store of four seals (span and trace segments), then its entries' facts stripped as an older build wrote them. */
async function olderStore(t: TestContext): Promise<{ dir: string; sealed: ManifestState }> {
  const dir = tempDir(t);
  const { db, store } = await open(dir);
  for (const b of BATCHES) {
    await store.append(b, true);
    await store.seal();
  }
  await store.close();
  await db.close();
  const sealed = manifestOf(dir);
  assert.equal(sealed.segments.length, 8, 'four span and four trace segments');
  for (const g of sealed.segments) {
    assert.ok(g.full_metrics, `${g.file}: a seal records full metrics`);
    if (g.kind === 'span') assert.ok(g.type_facts, `${g.file}: a seal records type facts`);
  }
  const m = JSON.parse(JSON.stringify(sealed)) as { segments: Record<string, unknown>[] };
  for (const g of m.segments) {
    delete g['full_metrics'];
    delete g['type_facts'];
  }
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(m));
  return { dir, sealed };
}

/** The metric ids of a file's m<id> columns with no null, by hand from DuckDB's footer statistics. */
async function fullByHand(db: Database, dir: string, g: SegmentEntry): Promise<number[]> {
  const rows = await db.all(
    sql`SELECT path_in_schema AS c, sum(stats_null_count) AS n FROM parquet_metadata(${join(dir, g.file)})
        WHERE regexp_full_match(path_in_schema, 'm[0-9]+') GROUP BY path_in_schema`,
  );
  return rows
    .filter((r) => Number(r['n']) === 0)
    .map((r) => Number(String(r['c']).slice(1)))
    .sort((a, b) => a - b);
}

/** What the planner and a count answer, asked with fresh caches: and how many footers and file scans that took. */
async function answers(db: Database, store: RecordStore) {
  const footers = countingRunner(db, 'parquet_metadata(');
  const scans = countingRunner(db, 'GROUP BY r.type');
  return store.read(async (snap) => {
    const full = [...(await new OwnValueFacts(footers.runner).full(snap, scope, METRICS))].sort();
    const facts = await new DataFactsCache(scans.runner, NOTED_COLUMNS).facts(snap, scope, COLUMN_IDS);
    const src = snap.source(scope);
    const [c] = await db.all(sql`SELECT count(*) FILTER (WHERE r.model = 'gpt') AS gpt, count(*) AS n FROM ${src.sql} r`);
    return {
      full,
      typesWith: Object.fromEntries([...facts.typesWith].map(([k, v]) => [k, [...v].sort()])),
      withChildren: [...facts.typesWithChildren].sort(),
      gpt: Number(c!['gpt']),
      n: Number(c!['n']),
      footers: footers.count(),
      scans: scans.count(),
    };
  });
}

const isMeasure = (text: string) => text.startsWith('SELECT type, bool_or(has_children)');

test('an older store gets its facts in the background: equal to a seal and to DuckDB, the answers unchanged', async (t) => {
  const { dir, sealed } = await olderStore(t);
  const hold = holdSql(t, Connection.prototype as never, isMeasure, { method: 'all' });
  const { db, store } = await open(dir);
  try {
    await hold.reached;
    // Meanwhile the planner reads the files itself, and nothing is written yet.
    const before = await answers(db, store);
    assert.ok(before.footers > 0 && before.scans > 0, 'without facts the planner reads footers and scans');
    assert.ok(
      manifestOf(dir).segments.every((g) => g.full_metrics === undefined && g.type_facts === undefined),
      'nothing saved while held',
    );
    hold.release();
    await store.factsSettled();
    const now = manifestOf(dir);
    assert.deepEqual(factsOf(now), factsOf(sealed), "every entry's facts as the seal wrote them");
    for (const g of now.segments) assert.deepEqual(g.full_metrics, await fullByHand(db, dir, g), `${g.file}: DuckDB's null counts`);
    const after = await answers(db, store);
    assert.deepEqual({ ...after, footers: 0, scans: 0 }, { ...before, footers: 0, scans: 0 }, 'the same answers');
    assert.deepEqual([after.footers, after.scans], [0, 0], 'taken from the entries: no footer, no scan');
    assert.equal(after.n, 7);
    assert.equal(after.gpt, 2);
  } finally {
    hold.release(); // a failed check must not leave the close waiting for a held statement
    await store.close();
    await db.close();
  }
});

test('the work waits while questions run, and goes on after a pause in them', async (t) => {
  const { dir, sealed } = await olderStore(t);
  // Counts measurements as they start (the hold below asks its matcher only until it holds one).
  let measured = 0;
  const proto = Connection.prototype as unknown as { all: (q: Sql) => Promise<unknown> };
  const all = proto.all;
  proto.all = function (this: unknown, q: Sql) {
    if (isMeasure(compile(q).text)) measured++;
    return all.call(this, q);
  };
  t.after(() => {
    proto.all = all;
  });
  const hold = holdSql(t, Connection.prototype as never, isMeasure, { method: 'all' });
  const { db, store } = await open(dir, false, 150);
  try {
    await hold.reached;
    // A question under way (its snapshot not released) when the first segment's measurement ends.
    await store.settled();
    const snap = store.snapshot();
    hold.release();
    await new Promise((r) => setTimeout(r, 600));
    assert.equal(measured, 1, 'no further segment measured while a question runs');
    snap.release();
    await store.factsSettled();
    assert.equal(measured, 4, 'every span segment measured once the questions paused');
    assert.deepEqual(factsOf(manifestOf(dir)), factsOf(sealed));
  } finally {
    hold.release(); // a failed check must not leave the close waiting for a held statement
    await store.close();
    await db.close();
  }
});

test('a read-only open of an older store writes no facts', async (t) => {
  const { dir } = await olderStore(t);
  const text = readFileSync(join(dir, 'manifest.json'), 'utf8');
  const { db, store } = await open(dir, true);
  try {
    await store.factsSettled();
    assert.equal((await answers(db, store)).n, 7);
    assert.equal(readFileSync(join(dir, 'manifest.json'), 'utf8'), text, 'the manifest is untouched');
  } finally {
    await store.close();
    await db.close();
  }
});

test('a close during the work keeps what was measured and loses nothing; the next open finishes it', async (t) => {
  const { dir, sealed } = await olderStore(t);
  let measured = 0;
  // The second span segment's measurement is held; the close comes meanwhile.
  const hold = holdSql(t, Connection.prototype as never, (text) => isMeasure(text) && ++measured === 2, { method: 'all' });
  let { db, store } = await open(dir);
  try {
    await hold.reached;
    const closing = store.close();
    hold.release();
    await closing;
    await db.close();
    const cut = manifestOf(dir);
    const done = cut.segments.filter((g) => g.full_metrics !== undefined);
    assert.ok(done.length > 0, 'what was measured before the close is saved');
    assert.ok(done.length < cut.segments.length, 'the close stopped the work');
    for (const g of done) assert.deepEqual(factsOf(cut).get(g.file), factsOf(sealed).get(g.file), g.file);
    assert.deepEqual(
      cut.segments.map((g) => ({ ...g, full_metrics: undefined, type_facts: undefined })),
      sealed.segments.map((g) => ({ ...g, full_metrics: undefined, type_facts: undefined })),
      'the entries are otherwise as they were',
    );
    ({ db, store } = await open(dir));
    await store.factsSettled();
    assert.deepEqual(factsOf(manifestOf(dir)), factsOf(sealed), 'the next open finished the work');
    assert.equal((await answers(db, store)).n, 7, 'every row is there');
  } finally {
    hold.release(); // a failed check must not leave the close waiting for a held statement
    await store.close();
    await db.close();
  }
});

test('a merge and a delete committed during the work win: no facts for segments gone, no mark lost', async (t) => {
  const { dir } = await olderStore(t);
  const hold = holdSql(t, Connection.prototype as never, isMeasure, { method: 'all' });
  const { db, store } = await open(dir);
  try {
    await hold.reached;
    assert.ok((await store.compact()) > 0, 'merges committed while the work is held');
    const merged = manifestOf(dir);
    assert.ok(merged.segments.length < 8);
    const deleted = await store.read(async (snap) => {
      const rows = await db.all(sql`SELECT seq FROM ${snap.source(scope).sql} r WHERE r.model = 'gpt'`);
      return rows.map((r) => Number(r['seq']));
    });
    assert.equal(deleted.length, 2);
    await store.deleteSeqs(deleted);
    await store.seal(); // the marks reach the manifest
    const marked = manifestOf(dir);
    assert.deepEqual([...marked.dead].sort(), [...deleted].sort());
    hold.release();
    await store.factsSettled();
    const now = manifestOf(dir);
    assert.deepEqual(
      now.segments.map((g) => g.file),
      marked.segments.map((g) => g.file),
      'the listed segments are those the merge left',
    );
    assert.deepEqual(factsOf(now), factsOf(marked), 'their facts are those the merge wrote');
    assert.deepEqual([...now.dead].sort(), [...deleted].sort(), 'the delete is kept');
    const a = await answers(db, store);
    assert.deepEqual([a.n, a.gpt], [5, 0]);
  } finally {
    hold.release(); // a failed check must not leave the close waiting for a held statement
    await store.close();
    await db.close();
  }
});

test('segments whose top lists keep fewer rows than their size and share of their run now ask, or not their places, get them again; others do not', () => {
  const seg = (rows: number, lists: Partial<SegmentEntry> = {}): SegmentEntry =>
    ({ rows, metrics: [1], full_metrics: [], type_facts: {}, kind: 'trace', ...lists }) as unknown as SegmentEntry;
  const lacks = (s: SegmentEntry) => lacksFacts(s, [], 65_536);
  // Lists as this build writes them: with each row's place in its segment and the filter columns.
  const listed = { top_lists: true, top_list_places: true, top_list_filters: true } as const;
  assert.equal(lacks(seg(1_000_000)), true, 'no lists');
  assert.equal(lacks(seg(1_000_000, listed)), true, `lists of ${TOP_LIST_ROWS} rows where ${topListRows(1_000_000)} are kept`);
  assert.equal(lacks(seg(1_000_000, { ...listed, top_list_rows: topListRows(1_000_000) })), false);
  assert.equal(lacks(seg(1_000_000, { top_lists: true, top_list_rows: topListRows(1_000_000) })), true, 'lists without places');
  assert.equal(lacks(seg(100_000, listed)), false, `a segment of 100k rows keeps ${topListRows(100_000)}`);
  assert.equal(lacks(seg(100_000, { top_lists: true })), true, 'lists without places');
  assert.equal(lacks(seg(100_000, { ...listed, top_list_filters: undefined })), true, 'lists without the filter columns');
  assert.equal(lacks(seg(1_000)), false, 'below the size threshold');
  assert.ok(topListRows(1_000_000) > TOP_LIST_ROWS && topListRows(1e9) === TOP_LIST_MAX_ROWS);
  // One of a hundred such segments of its run: the run's lists hold enough rows with the least.
  assert.equal(topListRows(1_000_000, 100_000_000), TOP_LIST_ROWS);
  assert.equal(lacksFacts(seg(1_000_000, listed), [], 65_536, 100_000_000), false);
  assert.ok(topListRows(250_000, 1_000_000) < topListRows(750_000, 1_000_000), 'a larger share keeps more');
});
