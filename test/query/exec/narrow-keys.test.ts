// Guarantees: a metric-sorted page of the id columns whose keys query reads every matching row carries
// only its keys (seq, created_at, where each row is stored) and reads its columns from those rows alone
// (search.ts, page-keys.ts: "keys (narrow)", "fetch (located)"), and is exactly the page computed in
// JavaScript from every live record: ties on the sort key across segments and row groups (broken by
// id), records without the metric (last in both directions), deleted and replaced rows, rows still in
// memory, offsets, pages past the end, with the sort-key bound and without; and the same page the store
// finds without narrowing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TraceStore, type TraceStoreOptions } from '../../../src/engine/trace-store.js';
import { tempDir } from '../../support/helpers.js';
import { expectedPage, fillWithDeadAndMemoryRows } from '../../support/metric-pages.js';

const options: TraceStoreOptions = { threads: 1, rowGroupSize: 16, metricTopK: false, autoCompact: false };

test('metric-sorted pages whose keys carry no column equal the reference, narrowed or not', { timeout: 180_000 }, async (t) => {
  const dir = tempDir(t);
  const steps: string[][] = [];
  let store = await TraceStore.open(dir, { ...options, narrowKeyGroups: 0, onPlan: (s) => steps.push([...s]) });
  t.after(() => store.close());
  const projectId = store.createProject({ name: 'p' }).id;
  const log_stream_id = store.createLogStream(projectId, 'default').id;
  // Four segments of several row groups; dead rows (deleted, replaced by new versions in memory with
  // other values) and more rows in memory.
  const { all } = await fillWithDeadAndMemoryRows(store, projectId, log_stream_id, [3, 50, 130, 260, 301]);

  const cases: { where: { model?: string; tokensOver?: number }; filter: unknown }[] = [
    { where: { model: 'a' }, filter: { type: 'text', column_id: 'model', operator: 'eq', value: 'a' } },
    { where: { tokensOver: 40 }, filter: { type: 'number', column_id: 'metrics/tokens', operator: 'gt', value: 40 } },
  ];
  const ask = async (s: TraceStore, c: (typeof cases)[number], ascending: boolean, offset: number, limit: number) => {
    steps.length = 0;
    const page = await s.partialSearch('span', projectId, {
      log_stream_id,
      filters: [{ type: 'text', column_id: 'type', operator: 'eq', value: 'llm' }, c.filter],
      sort: { column_id: 'metrics/quality', ascending },
      pagination: { starting_token: offset, limit },
      select_columns: { column_ids: ['id'] },
    } as never);
    const what = `${JSON.stringify(c.where)} asc=${ascending} offset=${offset}: ${steps.flat().join(' → ')}`;
    assert.deepEqual(
      page.records.map((r) => r['id']),
      expectedPage(all, c.where, ascending, offset, limit),
      what,
    );
    // Every column a partial record carries, as the record holds it.
    for (const r of page.records) {
      const full = all.find((x) => x['id'] === r['id'])!;
      for (const col of ['type', 'project_id', 'run_id', 'session_id', 'trace_id', 'parent_id'])
        assert.deepEqual(r[col], full[col], `${what}: ${col}`);
    }
    return { ids: page.records.map((r) => r['id']), steps: steps.flat() };
  };
  const pages = async (s: TraceStore) => {
    const out: { ids: unknown[]; steps: string[] }[] = [];
    for (const c of cases)
      for (const ascending of [false, true])
        for (const [offset, limit] of [
          [0, 10],
          [7, 10],
          [25, 10],
          [160, 10],
          [400, 10],
          [0, 200],
        ] as const)
          out.push(await ask(s, c, ascending, offset, limit));
    return out;
  };
  const narrowed = await pages(store);
  assert.ok(
    narrowed.every((p) => p.steps.includes('keys (narrow)') && p.steps.includes('fetch (located)')),
    narrowed.map((p) => p.steps.join(' → ')).join(' / '),
  );
  assert.ok(narrowed.some((p) => p.ids.length === 10) && narrowed.some((p) => p.ids.length === 0), 'full pages and pages past the end');
  await store.close();
  // With the sort-key pass first (a bound at the k-th key, and windows where few row groups hold the page).
  store = await TraceStore.open(dir, { ...options, narrowKeyGroups: 0, sortKeyGroups: 0, onPlan: (s) => steps.push([...s]) });
  const bounded = await pages(store);
  assert.ok(
    bounded.some((p) => p.steps.includes('keys (bound, narrow)')),
    bounded.map((p) => p.steps.join(' → ')).join(' / '),
  );
  await store.close();
  // The same pages without narrowing.
  store = await TraceStore.open(dir, { ...options, narrowKeyGroups: Infinity, onPlan: (s) => steps.push([...s]) });
  const plain = await pages(store);
  assert.ok(plain.every((p) => !p.steps.some((s) => s.includes('narrow'))));
  assert.deepEqual(
    plain.map((p) => p.ids),
    narrowed.map((p) => p.ids),
  );
});
