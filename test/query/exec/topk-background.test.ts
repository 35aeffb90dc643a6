// Guarantees: a metric-sorted page asked before its segments' top-k lists are read is answered by one
// keys query over everything (no list is read first), the lists are then read in the background, and
// the pages after that come from them; every page, before and after, is the one computed in JavaScript
// from every live record: ties on the sort key across segments (broken by id), records without the
// metric (last in both directions), deleted and replaced rows, rows still in memory, offsets.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TraceStore } from '../../../src/engine/trace-store.js';
import { tempDir } from '../../support/helpers.js';
import { expectedPage, fillWithDeadAndMemoryRows } from '../../support/metric-pages.js';

test('a metric-sorted page asked before the lists are read is answered without them, and later pages from them', {
  timeout: 120_000,
}, async (t) => {
  const steps: string[][] = [];
  const background: string[] = [];
  const store = await TraceStore.open(tempDir(t), {
    threads: 1,
    rowGroupSize: 16,
    // No seal of the rows in memory meanwhile: it would bring a segment whose list is not read yet.
    sealRows: 1_000_000,
    metricTopKRows: 24,
    autoCompact: false,
    onPlan: (s) => steps.push([...s]),
    onBackground: (done) => background.push(done),
  });
  t.after(() => store.close());
  const projectId = store.createProject({ name: 'p' }).id;
  const log_stream_id = store.createLogStream(projectId, 'default').id;
  // Four segments of several row groups; dead rows (deleted, replaced by new versions in memory with
  // other values) and more rows in memory.
  const { all } = await fillWithDeadAndMemoryRows(store, projectId, log_stream_id, [3, 50, 130, 260]);

  const ask = async (model: string, ascending: boolean, offset: number) => {
    steps.length = 0;
    const page = await store.partialSearch('span', projectId, {
      log_stream_id,
      filters: [
        { type: 'text', column_id: 'type', operator: 'eq', value: 'llm' },
        { type: 'text', column_id: 'model', operator: 'eq', value: model },
      ],
      sort: { column_id: 'metrics/quality', ascending },
      pagination: { starting_token: offset, limit: 10 },
      select_columns: { column_ids: ['id'] },
    } as never);
    assert.deepEqual(
      page.records.map((r) => r['id']),
      expectedPage(all, { model }, ascending, offset, 10),
      `model ${model} asc=${ascending} offset=${offset}: ${steps.flat().join(' → ')}`,
    );
    return steps.flat();
  };
  // Asked first: one keys query, no list read before answering.
  const first = await ask('a', false, 0);
  assert.equal(first[0], 'keys (top-k: lists not read yet)', first.join(' → '));
  assert.ok(!first.some((s) => s.startsWith('keys (top-k of')), first.join(' → '));
  // The lists follow in the background, with no page asked meanwhile; then a page comes from them.
  for (let i = 0; i < 500 && background.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  assert.match(background[0] ?? 'none', /^top-k lists read: [1-9]\d*$/);
  const listed = await ask('a', false, 0);
  assert.match(listed[0]!, /^keys \(top-k of \d+ listed rows\)$/, listed.join(' → '));
  // A page asked while its lists are queued waits for them: never two plain pages in a row.
  const asc = await ask('b', true, 3);
  assert.equal(asc[0], 'keys (top-k: lists not read yet)', asc.join(' → '));
  const next = await ask('b', true, 3);
  assert.match(next[0]!, /^keys \(top-k of \d+ listed rows\)$/, next.join(' → '));
  // Every page equals the reference, from the lists or not: both directions, offsets, either model.
  for (const model of ['a', 'b'])
    for (const ascending of [false, true]) for (const offset of [0, 7, 25]) await ask(model, ascending, offset);
});
