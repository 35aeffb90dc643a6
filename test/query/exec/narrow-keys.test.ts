// Guarantees: a metric-sorted page of the id columns whose keys query reads every matching row carries
// only its keys (where each row is: a stored row's file and row number, decoding neither its seq nor
// its created_at; a memory row's seq) and reads its columns from those rows alone
// (search.ts, page-keys.ts: "keys (narrow)", "fetch (located)"), and is exactly the page computed in
// JavaScript from every live record: ties on the sort key across segments and row groups (broken by
// id), records without the metric (last in both directions), deleted and replaced rows, rows still in
// memory, offsets, pages past the end, with the sort-key bound and without; and the same page the store
// finds without narrowing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Database } from '../../../src/db/database.js';
import { TraceStore, type TraceStoreOptions } from '../../../src/engine/trace-store.js';
import { compile, sql, type Sql } from '../../../src/query/sql.js';
import { tempDir } from '../../support/helpers.js';
import { expectedPage, fillWithDeadAndMemoryRows, llmTraces } from '../../support/metric-pages.js';

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

/** READ_PARQUET and SEQ_SCAN nodes of a JSON plan, with the columns each projects. */
function scans(node: unknown, out: { name: string; columns: string[] }[] = []): { name: string; columns: string[] }[] {
  for (const n of Array.isArray(node) ? node : [node]) {
    const { name, children, extra_info } = n as { name: string; children: unknown[]; extra_info: Record<string, unknown> };
    const p = extra_info?.['Projections'];
    if (name.trim() === 'READ_PARQUET' || name.trim() === 'SEQ_SCAN')
      out.push({ name: name.trim(), columns: (Array.isArray(p) ? p : String(p ?? '').split('\n')).map((c) => String(c).trim()) });
    scans(children, out);
  }
  return out;
}

test('a narrow keys query decodes no stored row seq or created_at, and its fetch reads no column the keys carried', {
  timeout: 60_000,
}, async (t) => {
  const dir = tempDir(t);
  const keyQueries: { db: Database; q: Sql }[] = [];
  const fetches: string[] = [];
  const all = Database.prototype.all;
  Database.prototype.all = function (this: Database, q: Sql) {
    const text = compile(q).text;
    if (/loc_file/.test(text) && /ORDER BY/.test(text)) keyQueries.push({ db: this, q });
    if (/file_row_number IN/.test(text)) fetches.push(text.slice(0, text.indexOf(' FROM ')));
    return all.call(this, q);
  };
  t.after(() => {
    Database.prototype.all = all;
  });
  const steps: string[] = [];
  const store = await TraceStore.open(dir, { ...options, narrowKeyGroups: 0, onPlan: (s) => steps.push(...s) });
  t.after(() => store.close());
  const projectId = store.createProject({ name: 'p' }).id;
  const log_stream_id = store.createLogStream(projectId, 'default').id;
  for (let b = 0; b < 2; b++) {
    await store.logTraces(projectId, { log_stream_id, traces: llmTraces(b * 100, 100) } as never);
    await store.flush();
  }
  await store.logTraces(projectId, { log_stream_id, traces: llmTraces(200, 30) } as never);
  const page = await store.partialSearch('span', projectId, {
    log_stream_id,
    filters: [{ type: 'text', column_id: 'type', operator: 'eq', value: 'llm' }],
    sort: { column_id: 'metrics/quality', ascending: false },
    pagination: { starting_token: 0, limit: 5 },
    select_columns: { column_ids: ['id'] },
  } as never);
  assert.equal(page.records.length, 5);
  assert.ok(steps.includes('keys (narrow)'), steps.join(' → '));
  assert.equal(keyQueries.length, 1);
  const { db, q } = keyQueries[0]!;
  const [plan] = await db.all(sql`EXPLAIN (FORMAT json) ${q}`);
  const found = scans(JSON.parse(String(plan!['explain_value'])));
  const parquet = found.filter((s) => s.name === 'READ_PARQUET');
  const memory = found.filter((s) => s.name === 'SEQ_SCAN');
  assert.ok(parquet.length > 0 && memory.length > 0, JSON.stringify(found));
  for (const s of parquet) assert.ok(!s.columns.includes('seq') && !s.columns.includes('created_at'), JSON.stringify(s));
  // Rows in memory are located by their seq.
  assert.ok(
    memory.some((s) => s.columns.includes('seq')),
    JSON.stringify(memory),
  );
  // The fetch reads what the keys did not carry: not id (the keys' tie-break) nor the scope's project and run.
  assert.ok(fetches.length > 0);
  for (const f of fetches) {
    const cols = f.replace(/^SELECT /, '').split(', ');
    assert.ok(cols.includes('"session_id"') || cols.includes('session_id'), f);
    for (const c of ['id', 'project_id', 'run_id']) assert.ok(!cols.includes(c) && !cols.includes(`"${c}"`), f);
  }
});
