// Guarantees: over segments without top lists files (as older builds wrote them; topLists: false), a
// page filtered on tags (which lists read into memory cannot test) runs its keys query and queues no
// list read; a
// metric-sorted page asked before its segments' top-k lists are read is answered by one
// keys query over everything (no list is read first); the lists are then read in the background once
// questions pause, a page asked meanwhile does not wait for them, a list read that fails leaves no page
// waiting on it, and the pages after that come from the lists; every page, before and after, is the
// one computed in JavaScript from every live record: ties on the sort key across segments (broken by
// id), records without the metric (last in both directions), deleted and replaced rows, rows still in
// memory, offsets.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { Database } from '../../../src/db/database.js';
import { TraceStore, type TraceStoreOptions } from '../../../src/engine/trace-store.js';
import { compile } from '../../../src/query/sql.js';
import { tempDir } from '../../support/helpers.js';
import { holdSql } from '../../support/hold-sql.js';
import { askLlmPage, expectedPage, fillWithDeadAndMemoryRows } from '../../support/metric-pages.js';

/** A list read of topk-cache.ts. */
const isListRead = (text: string) => /^SELECT seq, epoch_us\(created_at\) AS c, id, type/.test(text);

/**
 * Four segments of several row groups, dead rows (deleted, replaced by new versions in memory with
 * other values) and more rows in memory; `ask` returns a page's plan steps after checking its ids
 * against the reference.
 */
async function filled(t: TestContext, options: TraceStoreOptions = {}) {
  const steps: string[][] = [];
  const background: string[] = [];
  const store = await TraceStore.open(tempDir(t), {
    threads: 1,
    rowGroupSize: 16,
    // No seal of the rows in memory meanwhile: it would bring a segment whose list is not read yet.
    sealRows: 1_000_000,
    metricTopKRows: 24,
    // Segments as older builds wrote them: their lists come from the segments.
    topLists: false,
    topListMinRows: 0,
    metricTopKRowsPerCandidate: 0,
    autoCompact: false,
    onPlan: (s) => steps.push([...s]),
    onBackground: (done) => background.push(done),
    ...options,
  });
  t.after(() => store.close());
  const projectId = store.createProject({ name: 'p' }).id;
  const log_stream_id = store.createLogStream(projectId, 'default').id;
  const { all } = await fillWithDeadAndMemoryRows(store, projectId, log_stream_id, [3, 50, 130, 260]);
  const ask = (model: string | undefined, ascending: boolean, offset: number) =>
    askLlmPage(store, { projectId, log_stream_id, all, steps }, model, ascending, offset);
  /** The page of llm spans without tag x (every span here) by quality, checked like `ask`; returns the plan's steps. */
  const untagged = async (ascending: boolean, offset: number) => {
    steps.length = 0;
    const page = await store.partialSearch('span', projectId, {
      log_stream_id,
      filters: [
        { type: 'text', column_id: 'type', operator: 'eq', value: 'llm' },
        { type: 'collection', column_id: 'tags', operator: 'not_in', value: ['x'] },
      ],
      sort: { column_id: 'metrics/quality', ascending },
      pagination: { starting_token: offset, limit: 10 },
      select_columns: { column_ids: ['id'] },
    } as never);
    assert.deepEqual(
      page.records.map((r) => r['id']),
      expectedPage(all, {}, ascending, offset, 10),
    );
    return steps.flat();
  };
  /** Waits until the background reported lists read (at most 5 s). */
  const listsRead = async () => {
    for (let i = 0; i < 500 && background.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  };
  return { ask, untagged, background, listsRead };
}

/** Counts (and with `fail`, fails the first of) the list reads until the test ends. */
function watchListReads(t: TestContext, fail = false): { reads: number; failed: number } {
  const seen = { reads: 0, failed: 0 };
  const original = Database.prototype.all;
  Database.prototype.all = function (this: Database, q) {
    if (isListRead(compile(q).text)) {
      seen.reads++;
      if (fail && seen.failed === 0) {
        seen.failed++;
        return Promise.reject(new Error('injected list read failure'));
      }
    }
    return original.call(this, q);
  };
  t.after(() => {
    Database.prototype.all = original;
  });
  return seen;
}

const LISTED = /^keys \(top-k of \d+ listed rows\)$/;

test('a metric-sorted page asked before the lists are read is answered without them, and later pages from them', {
  timeout: 120_000,
}, async (t) => {
  const { ask, background, listsRead } = await filled(t);
  // Asked first: one keys query, no list read before answering.
  const first = await ask('a', false, 0);
  assert.equal(first[0], 'keys (top-k: lists not read yet)', first.join(' → '));
  assert.ok(!first.some((s) => s.startsWith('keys (top-k of')), first.join(' → '));
  // The lists follow in the background, with no page asked meanwhile; then a page comes from them.
  await listsRead();
  assert.match(background[0] ?? 'none', /^top-k lists read: [1-9]\d*$/);
  const listed = await ask('a', false, 0);
  assert.match(listed[0]!, LISTED, listed.join(' → '));
  // A page asked while its lists are still being read does not wait for them (nor read them itself):
  // one keys query, as the first time; once they are read, pages come from them.
  background.length = 0;
  // The background's first list read is held until the page after it has answered.
  const hold = holdSql(t, Database.prototype as never, isListRead, { method: 'all' });
  const asc = await ask('b', true, 3);
  assert.equal(asc[0], 'keys (top-k: lists not read yet)', asc.join(' → '));
  await hold.reached;
  const next = await Promise.race([
    ask('b', true, 3),
    new Promise<string[]>((r) => setTimeout(() => r(['waited for the lists being read']), 10_000)),
  ]);
  hold.release();
  assert.deepEqual(next.slice(0, 2), ['keys (top-k: lists being read)', 'keys'], next.join(' → '));
  await listsRead();
  const after = await ask('b', true, 3);
  assert.match(after[0]!, LISTED, after.join(' → '));
  // Every page equals the reference, from the lists or not: both directions, offsets, either model.
  for (const model of ['a', 'b'])
    for (const ascending of [false, true]) for (const offset of [0, 7, 25]) await ask(model, ascending, offset);
});

test('a list read that fails in the background leaves no page waiting on it: a later page asks for the lists again', {
  timeout: 120_000,
}, async (t) => {
  const { ask, listsRead } = await filled(t);
  const seen = watchListReads(t, true);
  assert.equal((await ask(undefined, false, 0))[0], 'keys (top-k: lists not read yet)');
  for (let i = 0; i < 500 && seen.failed === 0; i++) await new Promise((r) => setTimeout(r, 10));
  // The background work ended at the failure (reported as nothing read).
  await new Promise((r) => setTimeout(r, 1000));
  assert.equal(seen.failed, 1);
  // Not 'lists being read' for ever: the lists are asked for again, then read, then used.
  assert.equal((await ask(undefined, false, 0))[0], 'keys (top-k: lists not read yet)');
  await listsRead();
  assert.match((await ask(undefined, false, 0))[0]!, LISTED);
});

test('the lists a page leaves to the background are read once questions pause, not beside them', { timeout: 120_000 }, async (t) => {
  const { ask, listsRead } = await filled(t, { mergePauseMs: 400 });
  const seen = watchListReads(t);
  assert.equal((await ask(undefined, true, 0))[0], 'keys (top-k: lists not read yet)');
  // Questions every 100 ms for a second: no list is read meanwhile, and every page is one keys query.
  const until = performance.now() + 1000;
  while (performance.now() < until) {
    const s = await ask(undefined, true, 0);
    assert.equal(s[0], 'keys (top-k: lists being read)', s.join(' → '));
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(seen.reads, 0, 'no list read while questions go on');
  // Then a pause: the lists are read, and pages come from them.
  await listsRead();
  assert.ok(seen.reads > 0);
  assert.match((await ask(undefined, true, 0))[0]!, LISTED);
});

test('a page filtered on tags runs its keys query and leaves no list to read: lists in memory cannot test tags', {
  timeout: 120_000,
}, async (t) => {
  const { ask, untagged, background } = await filled(t);
  const seen = watchListReads(t);
  for (const [ascending, offset] of [
    [false, 0],
    [true, 7],
  ] as const) {
    const steps = await untagged(ascending, offset);
    assert.equal(steps[0], 'keys (top-k: only lists files test name and tags)', steps.join(' → '));
  }
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(seen.reads, 0, 'no list read');
  assert.deepEqual(background, []);
  // A page the lists can serve still leaves them to the background, as before.
  assert.equal((await ask('a', false, 0))[0], 'keys (top-k: lists not read yet)');
});
