// Guarantees: a count, a page and a delete of spans filtered by a comparison on a rolled-up metric
// (own value, else the roll-up of the descendants' values), where the climb visits only the traces
// whose range admits the comparison (src/query/trace-range.ts), equal the reference evaluator's, for
// every comparison operator, sums with negative values, maxima and averages, with the comparison
// required (alone, ANDed, in an AND under an OR's branch) or not (under OR and NOT), over sealed and
// in-memory rows with deletes; and with two rolled-up metrics in one statement (a comparison on each,
// or one with pages sorted by the other, both ways), where the traces' spans are read once for the climb
// and the records (plan.ts, `ts`).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TraceStore } from '../../src/engine/trace-store.js';
import { tempDir } from '../support/helpers.js';
import { ReferenceEvaluator, type FilterBody, type Rec } from '../support/reference-eval.js';
import { everything, filled } from '../support/rolled-traces.js';

type Leaf = { type: 'number'; column_id: string; operator: string; value: number | [number, number] };

/** Values of a metric as search shows them (own, else rolled up), sorted. */
function shown(spans: Rec[], metric: string): number[] {
  return spans
    .map((s) => (s['metrics'] as Record<string, unknown> | undefined)?.[metric])
    .filter((v): v is number => typeof v === 'number')
    .sort((a, b) => a - b);
}

test('counts, pages and deletes filtered by a comparison on a rolled-up metric equal the reference', async (t) => {
  const steps: string[][] = [];
  const { store, projectId, ref } = await filled(t, steps);
  const spans = (await everything(store, projectId)).span;
  let asked = 0;
  for (const metric of ['num_total_tokens', 'cost', 'latency_ns', 'quality']) {
    const values = shown(spans, metric);
    // Thresholds at the top (parents' sums), the middle and the bottom of what the spans show, and a value they hold.
    const at = (q: number) => values[Math.min(values.length - 1, Math.floor(q * values.length))]!;
    const column_id = `metrics/${metric}`;
    const leaves: Leaf[] = [
      { type: 'number', column_id, operator: 'gt', value: at(0.97) },
      { type: 'number', column_id, operator: 'gte', value: at(0.9) },
      { type: 'number', column_id, operator: 'lt', value: at(0.03) },
      { type: 'number', column_id, operator: 'lte', value: at(0.1) },
      { type: 'number', column_id, operator: 'eq', value: at(0.95) },
      { type: 'number', column_id, operator: 'between', value: [at(0.6), at(0.8)] },
      { type: 'number', column_id, operator: 'ne', value: at(0.5) },
    ];
    for (const leaf of leaves) {
      const type = { type: 'text', column_id: 'type', operator: 'ne', value: 'tool' };
      const bodies: FilterBody[] = [
        { filters: [leaf] } as FilterBody,
        { filters: [leaf, type] } as FilterBody,
        { filter_tree: { or: [{ and: [{ filter: leaf }, { filter: type }] }, { filter: { ...leaf, value: leaf.value } }] } } as FilterBody,
        {
          filter_tree: { or: [{ filter: leaf }, { filter: { type: 'text', column_id: 'name', operator: 'eq', value: 'wf' } }] },
        } as FilterBody,
        { filter_tree: { not: { filter: leaf } } } as FilterBody,
      ];
      for (const body of bodies) {
        const want = ref.search('span', body);
        const label = `${metric} ${leaf.operator} ${JSON.stringify(leaf.value)} ${JSON.stringify(body).slice(0, 80)}`;
        const count = await store.count('span', projectId, body as never);
        assert.equal(count.total_count, want.length, `count: ${label}`);
        const page = await store.partialSearch('span', projectId, {
          ...(body as object),
          limit: 20,
          select_columns: { column_ids: ['id'] },
        } as never);
        assert.deepEqual(
          page.records.map((r) => r['id']),
          want.slice(0, 20).map((r) => r['id']),
          `page: ${label}`,
        );
        if (want.length > 0) asked++;
      }
    }
  }
  assert.ok(asked > 100, `most questions match some spans (${asked})`);
});

test('two rolled-up metrics in one statement: a comparison on each, or on one with pages sorted by the other', async (t) => {
  const steps: string[][] = [];
  const { store, projectId, ref } = await filled(t, steps);
  const spans = (await everything(store, projectId)).span;
  const at = (metric: string, q: number) => {
    const values = shown(spans, metric);
    return values[Math.min(values.length - 1, Math.floor(q * values.length))]!;
  };
  const leaf = (metric: string, operator: string, q: number) => ({
    type: 'number',
    column_id: `metrics/${metric}`,
    operator,
    value: at(metric, q),
  });
  const bodies: FilterBody[] = [
    { filters: [leaf('num_total_tokens', 'gt', 0.5), leaf('cost', 'lt', 0.9)] } as FilterBody,
    { filters: [leaf('cost', 'gte', 0.3), leaf('latency_ns', 'lte', 0.8)] } as FilterBody,
    { filters: [leaf('quality', 'gt', 0.4)] } as FilterBody,
  ];
  let matched = 0;
  for (const body of bodies) {
    const label = JSON.stringify(body).slice(0, 120);
    const want = ref.search('span', body);
    assert.equal((await store.count('span', projectId, body as never)).total_count, want.length, `count: ${label}`);
    matched += want.length;
    for (const metric of ['num_total_tokens', 'cost']) {
      for (const ascending of [false, true]) {
        const sort = { column_id: `metrics/${metric}`, ascending };
        const page = await store.partialSearch('span', projectId, {
          ...(body as object),
          sort,
          limit: 15,
          select_columns: { column_ids: ['id', `metrics/${metric}`] },
        } as never);
        assert.deepEqual(
          page.records.map((r) => r['id']),
          ref
            .search('span', { ...body, sort })
            .slice(0, 15)
            .map((r) => r['id']),
          `page by ${metric} ${ascending ? 'asc' : 'desc'}: ${label}`,
        );
      }
    }
  }
  assert.ok(matched > 50, `the filters match spans (${matched})`);
  assert.ok(
    steps.some((s) => s.some((x) => x.includes('num_total_tokens') && x.includes('cost'))),
    `some statement rolled up both metrics: ${JSON.stringify(steps.slice(0, 3))}`,
  );
});

test('a delete by a comparison on a rolled-up metric removes exactly the matching spans and their subtrees', async (t) => {
  const steps: string[][] = [];
  const { store, projectId, ref } = await filled(t, steps);
  const values = shown((await everything(store, projectId)).span, 'cost');
  const body = {
    filters: [{ type: 'number', column_id: 'metrics/cost', operator: 'gt', value: values[Math.floor(values.length * 0.98)]! }],
  };
  const matched = ref.search('span', body as FilterBody);
  assert.ok(matched.length > 3, `some spans match (${matched.length})`);
  // A deleted span takes its subtree: the spans left are those outside every matched span's subtree.
  const gone = new Set(matched.map((r) => String(r['id'])));
  const before = (await everything(store, projectId)).span;
  const parent = new Map(before.map((s) => [String(s['id']), String(s['parent_id'])]));
  const under = (id: string): boolean => {
    for (let p: string | undefined = id; p !== undefined; p = parent.get(p)) if (gone.has(p)) return true;
    return false;
  };
  const kept = before.filter((s) => !under(String(s['id']))).map((s) => s['id']);
  await store.records.delete('span', projectId, body as never);
  const after = (await everything(store, projectId)).span.map((s) => s['id']);
  assert.deepEqual([...after].sort(), [...kept].sort());
});

test("a parent's roll-up beyond its trace's smallest or largest value is found by the filter", async (t) => {
  const store = await TraceStore.open(tempDir(t), { threads: 1 });
  t.after(() => store.close());
  const projectId = store.createProject({ name: 'p' }).id;
  const log_stream_id = store.createLogStream(projectId, 'default').id;
  const llm = (name: string, cost: number) => ({ type: 'llm', name, input: 'q', metrics: { cost } });
  const tree = (i: number, kids: Rec[]): Rec => ({
    name: `t${i}`,
    input: 'q',
    created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    spans: [{ type: 'workflow', name: `w${i}`, input: 'x', spans: kids }],
  });
  await store.logTraces(projectId, {
    log_stream_id,
    traces: [
      tree(0, [llm('m1', -40), llm('m2', -40)]), // w0: -80, below the trace's smallest value
      tree(1, [llm('n1', -1), llm('n2', -1)]), // w1: -2, in a trace without a positive value
      tree(2, [llm('p1', 30), llm('p2', 30)]), // w2: 60, above the trace's largest value
      ...Array.from({ length: 10 }, (_, i) => tree(10 + i, [llm(`b${i}`, -50 - i)])),
    ],
  } as never);
  await store.flush();
  const ref = new ReferenceEvaluator(await everything(store, projectId));
  for (const [operator, value, names] of [
    ['lt', -60, ['w0']],
    ['gt', -3, ['n1', 'n2', 'w1', 'p1', 'p2', 'w2']],
    ['gte', 45, ['w2']],
    ['between', [-90, -70], ['w0']],
  ] as const) {
    const body = { filters: [{ type: 'number', column_id: 'metrics/cost', operator, value }] };
    const want = ref.search('span', body as FilterBody).map((r) => r['name']);
    assert.deepEqual([...want].sort(), [...names].sort(), `reference: ${operator} ${value}`);
    const page = await store.partialSearch('span', projectId, { ...body, limit: 50, select_columns: { column_ids: ['name'] } } as never);
    assert.deepEqual(
      page.records.map((r) => r['name']),
      want,
      `${operator} ${value}`,
    );
    assert.equal((await store.count('span', projectId, body as never)).total_count, names.length, `count ${operator} ${value}`);
  }
});
