// Guarantees: a page sorted by a metric, answered from each segment's list of its best rows
// (src/query/exec/metric-topk.ts), is exactly the page the reference evaluator computes from every
// record: over several segments and row groups, with rows still in memory, dead (deleted or
// replaced: the new version in memory has the same id) rows in the lists, rows retention hides, filters over listed columns (another metric's
// value too) and others, both directions, ties
// broken by id, at offsets, and again after a merge; with the lists from the segments' top lists files
// and, as for segments older builds wrote, from the segments themselves. The plan's steps show that the lists answered
// (the keys query looked at fewer rows than the store holds) where they can, and not where they cannot.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { TraceStore } from '../../../src/engine/trace-store.js';
import { tempDir } from '../../support/helpers.js';
import { ReferenceEvaluator, type Filter, type Rec } from '../../support/reference-eval.js';
import { prng as random } from '../../support/fuzz/rng.js';

const DAY = 86_400_000;
const uuid = (rand: () => number) => {
  const h = Array.from({ length: 32 }, () => Math.floor(rand() * 16).toString(16)).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20)}`;
};
const msgs = [{ role: 'user', content: 'hi' }];

/** Traces from `startMs`, one a second: a workflow over an llm and a tool span, and a top-level llm span. Quality has two decimals: ties. Ids are seeded. */
function traces(n: number, startMs: number, rand: () => number, high = false): Record<string, unknown>[] {
  const q = () => Math.round((high ? 0.7 + 0.3 * rand() : rand()) * 100) / 100;
  return Array.from({ length: n }, (_, i) => ({
    id: uuid(rand),
    name: `t${i}`,
    input: 'q',
    created_at: new Date(startMs + i * 1000).toISOString(),
    spans: [
      {
        type: 'workflow',
        id: uuid(rand),
        name: 'wf',
        input: 'x',
        tags: ['prod'],
        spans: [
          {
            type: 'llm',
            id: uuid(rand),
            name: 'call',
            input: msgs,
            model: i % 2 ? 'gpt-4o' : 'other',
            metrics: { quality: q(), ...(rand() < 0.8 ? { tokens: Math.floor(rand() * 100) } : {}) },
            tags: i % 3 ? ['prod'] : [],
            status_code: i % 5 === 0 ? 500 : 200,
          },
          { type: 'tool', id: uuid(rand), name: 'tool', input: 'x', ...(rand() < 0.5 ? { metrics: { quality: q() } } : {}) },
        ],
      },
      {
        type: 'llm',
        id: uuid(rand),
        name: 'top',
        input: msgs,
        model: 'gpt-4o',
        metrics: { quality: q(), ...(rand() < 0.8 ? { tokens: Math.floor(rand() * 100) } : {}) },
        tags: ['prod'],
        status_code: 200,
      },
    ],
  }));
}

async function allRecords(store: TraceStore, projectId: string): Promise<Rec[]> {
  const out: Rec[] = [];
  for (let start = 0; ; start += 1000) {
    const page = await store.search('span', projectId, { starting_token: start, limit: 1000 });
    out.push(...page.records);
    if (!page.paginated) return out;
  }
}

/**
 * `topLists`: lists from the segments' top lists files (true) or, as for segments older builds wrote,
 * from the segments; `minRows`: segments smaller than this have none and are read whole.
 */
async function listsEqualReference(t: TestContext, topLists: boolean, minRows = 0): Promise<void> {
  const steps: string[][] = [];
  // Lists of 24 rows, segments of at most 200 rows in row groups of 16: most lists are cut short.
  // Merges only when the test asks (store.compact), so the first checks see one layout throughout
  // (a background merge in the middle of them changed how many pages the lists could answer).
  const store = await TraceStore.open(tempDir(t), {
    threads: 1,
    rowGroupSize: 16,
    sealRows: 200,
    metricTopKRows: 24,
    // Lists read before a page answers (never in the background), so each page's plan is known.
    metricTopKBuild: 'await',
    autoCompact: false,
    topLists,
    topListMinRows: minRows,
    metricTopKRowsPerCandidate: 0,
    onPlan: (s) => steps.push([...s]),
  });
  t.after(() => store.close());
  const projectId = store.createProject({ name: 'p' }).id;
  const log_stream_id = store.createLogStream(projectId, 'default').id;
  const rand = random(17);
  const now = Date.now();
  // Old traces (expired once retention is set) and recent ones, sealed into several segments.
  for (let b = 0; b < 1; b++)
    await store.logTraces(projectId, { log_stream_id, traces: traces(20, now - 60 * DAY + b * 100_000, rand, true) } as never);
  const batches: Record<string, unknown>[][] = [];
  for (let b = 0; b < 12; b++) {
    batches.push(traces(20, now - DAY + b * 100_000, rand));
    await store.logTraces(projectId, { log_stream_id, traces: batches[b]! } as never);
    // A segment every few requests.
    if (b % 3 === 2) await store.flush();
  }
  await store.flush();
  assert.ok(store.records.stats.sealedRows > 0, 'rows are sealed');

  const ids = (body: object) =>
    store
      .partialSearch('span', projectId, { limit: 1000, select_columns: { column_ids: ['id'] }, ...body })
      .then((p) => p.records.map((r) => String(r['id'])));
  // Dead rows in the lists: the best recent llm spans are deleted (their rows stay in the segments).
  const best = await ids({
    filters: [
      { type: 'date', column_id: 'created_at', operator: 'gte', value: new Date(now - 2 * DAY).toISOString() },
      { type: 'text', column_id: 'type', operator: 'eq', value: 'llm' },
    ],
    sort: { column_id: 'metrics/quality', ascending: false },
    limit: 6,
  });
  assert.equal(
    (await store.records.delete('span', projectId, { filters: [{ type: 'id', column_id: 'id', operator: 'one_of', value: best }] }))
      .deleted,
    6,
  );
  // Updates: a batch logged again with new values of the top-level llm spans. The old versions stay
  // in the segments' lists (dead), the new ones (same ids) are in memory.
  const again = batches[1]!.map((tr) => {
    const spans = tr['spans'] as Record<string, unknown>[];
    return { ...tr, spans: [spans[0], { ...spans[1], metrics: { quality: Math.round(rand() * 100) / 100 } }] };
  });
  await store.logTraces(projectId, { log_stream_id, traces: again } as never);
  // Rows still in memory, some better than anything sealed.
  await store.logTraces(projectId, { log_stream_id, traces: traces(15, now - DAY / 2, rand, true) } as never);
  store.data.setRetention(projectId, { retention_days: 30 });

  const mid = new Date(now - DAY + 600_000).toISOString();
  const filters: { name: string; filters: Filter[]; lists: boolean }[] = [
    { name: 'llm', filters: [{ type: 'text', column_id: 'type', operator: 'eq', value: 'llm' }], lists: true },
    { name: 'childless', filters: [{ type: 'boolean', column_id: 'has_children', operator: 'eq', value: false }], lists: true },
    { name: 'model', filters: [{ type: 'text', column_id: 'model', operator: 'eq', value: 'gpt-4o' }], lists: true },
    {
      name: 'newer',
      filters: [
        { type: 'date', column_id: 'created_at', operator: 'gte', value: mid },
        { type: 'text', column_id: 'type', operator: 'eq', value: 'llm' },
      ],
      lists: true,
    },
    {
      name: 'llm, quality > 0.3',
      filters: [
        { type: 'text', column_id: 'type', operator: 'eq', value: 'llm' },
        { type: 'number', column_id: 'metrics/quality', operator: 'gt', value: 0.3 },
      ],
      lists: true,
    },
    // Another metric's own value: the lists hold it (rows without it match no comparison).
    {
      name: 'llm, tokens > 40',
      filters: [
        { type: 'text', column_id: 'type', operator: 'eq', value: 'llm' },
        { type: 'number', column_id: 'metrics/tokens', operator: 'gt', value: 40 },
      ],
      lists: true,
    },
    {
      name: 'tokens <= 70, model gpt-4o',
      filters: [
        { type: 'number', column_id: 'metrics/tokens', operator: 'lte', value: 70 },
        { type: 'text', column_id: 'model', operator: 'eq', value: 'gpt-4o' },
      ],
      lists: true,
    },
    { name: 'status 500 (few)', filters: [{ type: 'number', column_id: 'status_code', operator: 'eq', value: 500 }], lists: false },
    // Columns the lists read into memory do not hold (name and tags are tested in the lists' files only:
    // top-list-filters.test.ts): the full query.
    {
      name: 'tags (not listed)',
      filters: [
        { type: 'text', column_id: 'type', operator: 'eq', value: 'llm' },
        { type: 'collection', column_id: 'tags', operator: 'contains', value: 'prod' },
      ],
      lists: false,
    },
    {
      name: 'name (not listed)',
      filters: [
        { type: 'text', column_id: 'name', operator: 'eq', value: 'top' },
        { type: 'boolean', column_id: 'has_children', operator: 'eq', value: false },
      ],
      lists: false,
    },
    { name: 'no filter (roll-ups)', filters: [], lists: false },
  ];

  const check = async (phase: string) => {
    const ref = new ReferenceEvaluator({ span: await allRecords(store, projectId), trace: [], session: [] });
    const total = ref.byLevel.span.length;
    let fromLists = 0;
    const listedBy = new Map<string, number>();
    for (const f of filters) {
      for (const ascending of [false, true]) {
        for (const offset of [0, 4]) {
          const sort = { column_id: 'metrics/quality', ascending };
          const want = ref
            .search('span', { filters: f.filters, sort })
            .slice(offset, offset + 5)
            .map((r) => r['id'] as string);
          steps.length = 0;
          const page = await store.partialSearch('span', projectId, {
            filters: f.filters as never,
            sort,
            starting_token: offset,
            limit: 5,
            select_columns: { column_ids: ['id', 'type', 'trace_id', 'parent_id', 'has_children'], metric_columns_names: ['quality'] },
          });
          const what = `${phase}: ${f.name} asc=${ascending} offset=${offset}`;
          assert.deepEqual(
            page.records.map((r) => r['id']),
            want,
            what,
          );
          // The links and the metric shown come from the lists: the same as the full records hold.
          for (const r of page.records) {
            const full = ref.byLevel.span.find((x) => x['id'] === r['id'])!;
            for (const c of ['type', 'trace_id', 'parent_id', 'has_children']) assert.deepEqual(r[c], full[c], `${what}: ${c}`);
            assert.deepEqual((r['metrics'] as Rec)['quality'], (full['metrics'] as Rec)['quality'], `${what}: quality`);
          }
          const listed = /^keys \(top-k of (\d+) listed rows\)$/.exec(steps[0]![0]!);
          if (listed) {
            fromLists++;
            listedBy.set(f.name, (listedBy.get(f.name) ?? 0) + 1);
            assert.ok(Number(listed[1]) < total, `${what}: the keys looked at ${listed[1]} of ${total} rows`);
          }
          if (!f.lists) assert.equal(listed, null, `${what}: ${steps[0]!.join(' → ')}`);
        }
      }
    }
    // The lists answered most questions they can (a few go to the full query when too few listed rows match).
    assert.ok(fromLists >= 12, `${phase}: ${fromLists} pages from the lists`);
    // And each filter they can hold answered some page (a filter's values missing from the lists would
    // leave every page to the full query, unseen above).
    for (const f of filters) if (f.lists) assert.ok((listedBy.get(f.name) ?? 0) > 0, `${phase}: ${f.name}: no page from the lists`);
  };
  await check('sealed + memory');
  await store.flush();
  await store.maintenance.compact();
  await check('merged');
}

test("metric-sorted pages from the segments' top lists files equal the reference evaluator", { timeout: 120_000 }, (t) =>
  listsEqualReference(t, true),
);

test('metric-sorted pages from lists read off the segments (no top lists files) equal the reference evaluator', { timeout: 120_000 }, (t) =>
  listsEqualReference(t, false),
);

test('metric-sorted pages over small segments read whole (no lists) equal the reference evaluator', { timeout: 120_000 }, (t) =>
  listsEqualReference(t, true, 1_000),
);
