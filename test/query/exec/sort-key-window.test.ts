// Guarantees: a metric-sorted page whose keys query is narrowed by a first read of the sort key alone
// (sort-key-window.ts: a window of the instants holding the page's rows, a bound at the k-th key, or
// both) is exactly the page hand-written DuckDB finds over the same segment files: keys with many ties
// (the k-th key inside a run of equal values) and with few, NULL keys (last in both directions), a
// second filter, offsets, fewer matches than the page, pages past the end; and with deleted rows and
// rows still in memory, exactly the page the same store finds without the narrowing.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { DuckDBInstance } from '../../../src/vendor/duckdb.js';
import { TraceStore } from '../../../src/engine/trace-store.js';
import type { ManifestState } from '../../../src/storage/manifest/manifest.js';
import { tempDir } from '../../support/helpers.js';
import { oneSpanTraces } from '../../support/metric-pages.js';

/**
 * Traces of one llm span each. `grade`: five values, or none (many ties, NULLs); `score`: nearly
 * unique, or none; `tokens` 0-99; one of three models; named `rare` for 20 in every 500.
 */
const traces = (from: number, n: number) =>
  oneSpanTraces(from, n, (i, x) => {
    const metrics: Record<string, number> = { tokens: x % 100 };
    if (x % 7 !== 0) metrics['grade'] = ((x >>> 8) % 5) / 4;
    if (x % 11 !== 0) metrics['score'] = ((x >>> 4) % 4000) / 1000;
    return { model: ['a', 'b', 'c'][x % 3]!, metrics, name: i % 500 < 20 ? 'rare' : 'call' };
  });

const options = { threads: 1, metricTopK: false, autoCompact: false } as const;

function body(log_stream_id: string, sort: string, ascending: boolean, filters: unknown[], offset: number, limit: number) {
  return {
    log_stream_id,
    filters: [{ type: 'text', column_id: 'type', operator: 'eq', value: 'llm' }, ...filters],
    sort: { column_id: `metrics/${sort}`, ascending },
    pagination: { starting_token: offset, limit },
    select_columns: { column_ids: ['id'] },
  } as never;
}

test('metric-sorted pages narrowed by their sort keys equal hand-written DuckDB over the segments', { timeout: 180_000 }, async (t) => {
  const dir = tempDir(t);
  const steps: string[] = [];
  const store = await TraceStore.open(dir, { ...options, sortKeyGroups: 0, onPlan: (s) => steps.push(...s) });
  t.after(() => store.close());
  const projectId = store.createProject({ name: 'p' }).id;
  const log_stream_id = store.createLogStream(projectId, 'default').id;
  // Twenty segments of one row group each: a window skips those outside it.
  for (let b = 0; b < 20; b++) {
    await store.logTraces(projectId, { log_stream_id, traces: traces(b * 75, 75) } as never);
    await store.flush();
  }

  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as ManifestState & { metric_ids: Record<string, number> };
  const files = manifest.segments.filter((s) => s.kind === 'span').map((s) => `'${join(dir, s.file).replaceAll("'", "''")}'`);
  const instance = await DuckDBInstance.create(':memory:');
  const duck = await instance.connect();
  t.after(() => {
    duck.closeSync();
    instance.closeSync();
  });
  await duck.run(`CREATE VIEW spans AS SELECT * FROM read_parquet([${files.join(', ')}], union_by_name = true) WHERE type = 'llm'`);
  const col = (m: string) => `m${manifest.metric_ids[m]}`;

  const filters = [
    { api: [{ type: 'number', column_id: 'metrics/tokens', operator: 'gt', value: 40 }], sql: `${col('tokens')} > 40` },
    { api: [{ type: 'text', column_id: 'model', operator: 'eq', value: 'b' }], sql: `model = 'b'` },
    // Few matches (fewer than most pages need), close together in time.
    { api: [{ type: 'text', column_id: 'name', operator: 'eq', value: 'rare' }], sql: `name = 'rare'` },
  ];
  const pages = [
    [0, 1],
    [0, 10],
    [3, 9],
    [95, 20],
    [400, 50],
    [1490, 50],
  ] as const;
  const seen = new Set<string>();
  for (const sort of ['grade', 'score'])
    for (const ascending of [false, true])
      for (const f of filters)
        for (const [offset, limit] of pages) {
          steps.length = 0;
          const page = await store.partialSearch('span', projectId, body(log_stream_id, sort, ascending, f.api, offset, limit));
          const d = ascending ? 'ASC' : 'DESC';
          const want = (
            await duck.runAndReadAll(
              `SELECT id FROM spans WHERE ${f.sql} ORDER BY ${col(sort)} ${d} NULLS LAST, id ${d} LIMIT ${limit + 1} OFFSET ${offset}`,
            )
          ).getRowObjectsJS();
          const label = `${sort} ${f.sql} ${d} offset ${offset} limit ${limit}: ${steps.join(' / ')}`;
          assert.deepEqual(
            page.records.map((r) => r['id']),
            want.slice(0, limit).map((r) => r['id']),
            label,
          );
          // Whether more follow: the row after the page (the k-th) is found too.
          assert.equal(page.next_starting_token, want.length > limit ? offset + limit : null, label);
          for (const s of steps) if (s.startsWith('keys') || s.startsWith('sort')) seen.add(s);
        }
  // Each narrowing ran: a window with a bound (few ties), a bound alone (ties past the first 2k rows),
  // a window alone (fewer matches than the page).
  for (const s of ['keys (window, bound)', 'keys (bound)', 'keys (window)']) assert.ok(seen.has(s), `${s} among ${[...seen].join(', ')}`);

  // Deleted rows (still in the segments) and rows in memory, some better than anything sealed: the
  // narrowed pages equal the same store's pages reopened without the narrowing.
  const best = (await store.partialSearch('span', projectId, body(log_stream_id, 'score', false, [], 0, 40))).records.map((r) =>
    String(r['id']),
  );
  const gone = best.filter((_, i) => i % 3 === 0);
  const deleted = await store.records.delete('span', projectId, {
    log_stream_id,
    filters: [{ type: 'id', column_id: 'id', operator: 'one_of', value: gone }],
  } as never);
  assert.equal(deleted.deleted, gone.length);
  // In memory: some best and some worst of all by score (ties among them too).
  const recent = traces(5000, 60).map((tr, i) => {
    const span = (tr['spans'] as { metrics: Record<string, number> }[])[0]!;
    if (i % 10 === 0) span.metrics['score'] = 4;
    if (i % 10 === 5) span.metrics['score'] = -1;
    return tr;
  });
  await store.logTraces(projectId, { log_stream_id, traces: recent } as never);
  const asked = async (s: TraceStore) => {
    const out: unknown[][] = [];
    for (const sort of ['grade', 'score'])
      for (const ascending of [false, true])
        for (const [offset, limit] of [
          [0, 5],
          [3, 5],
          [25, 30],
          [1530, 30],
        ] as const) {
          const f = [{ type: 'number', column_id: 'metrics/tokens', operator: 'lte', value: 70 }];
          const page = await s.partialSearch('span', projectId, body(log_stream_id, sort, ascending, f, offset, limit));
          out.push([...page.records.map((r) => r['id']), page.next_starting_token]);
        }
    return out;
  };
  steps.length = 0;
  const narrowed = await asked(store);
  assert.ok(steps.includes('keys (window, bound)'), `a window ran with rows in memory: ${steps.join(' / ')}`);
  assert.ok(
    narrowed.flat().every((id) => !gone.includes(String(id))),
    'no deleted record comes back',
  );
  assert.ok(
    narrowed.flat().some((id) => Number(String(id).slice(-12)) >= 1_005_000),
    'rows in memory are on the pages',
  );
  await store.close();
  const plainSteps: string[] = [];
  const plain = await TraceStore.open(dir, { ...options, sortKeyGroups: Infinity, onPlan: (s) => plainSteps.push(...s) });
  t.after(() => plain.close());
  assert.deepEqual(await asked(plain), narrowed);
  assert.ok(!plainSteps.includes('sort keys'), 'the reference read no sort keys first');
  await plain.close();
  // With the planner's sample (any positive sortKeyGroups): pages whose best key many rows share (five
  // grades) skip the first read, the others narrow as before; the same pages either way.
  const sampledSteps: string[] = [];
  const sampled = await TraceStore.open(dir, {
    ...options,
    sortKeyGroups: 1e-6,
    estimateMinGroups: 4,
    onPlan: (s) => sampledSteps.push(...s),
  });
  t.after(() => sampled.close());
  assert.deepEqual(await asked(sampled), narrowed);
  assert.ok(sampledSteps.includes('estimate') && sampledSteps.includes('sort keys'), sampledSteps.join(' / '));
  assert.ok(
    sampledSteps.includes('sort keys (skipped: a key many rows share)'),
    `some pages skipped the first read: ${sampledSteps.join(' / ')}`,
  );
});
