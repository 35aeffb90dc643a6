// Guarantees: a page of spans sorted by a rolled-up metric (own value, else the roll-up of the
// descendants' values), either direction, found under a trace bound (src/query/exec/trace-bound.ts)
// equals the reference evaluator's page, for sums with negative values among them or only negative
// values, maxima and averages, with and without filters, offsets, deletes, sealed and in-memory rows.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { TraceStore, type TraceStoreOptions } from '../../../src/engine/trace-store.js';
import { tempDir } from '../../support/helpers.js';
import { ReferenceEvaluator, type FilterBody, type Rec } from '../../support/reference-eval.js';
import { everything, filled } from '../../support/rolled-traces.js';

const notTool: FilterBody = { filters: [{ type: 'text', column_id: 'type', operator: 'ne', value: 'tool' }] };
const workflowsAndLlm: FilterBody = {
  filter_tree: {
    or: [
      { filter: { type: 'text', column_id: 'type', operator: 'eq', value: 'workflow' } },
      { filter: { type: 'text', column_id: 'name', operator: 'eq', value: 'llm-3-0' } },
    ],
  },
};

async function agreesWithReference(t: TestContext, listAll: boolean): Promise<Set<string>> {
  const steps: string[][] = [];
  const { store, projectId, ref } = await filled(t, steps, listAll);
  const bounded = new Set<string>();
  for (const [metric, ascending] of ['num_total_tokens', 'cost', 'latency_ns', 'quality'].flatMap((m) => [
    [m, false] as const,
    [m, true] as const,
  ])) {
    for (const body of [{}, notTool, workflowsAndLlm] as FilterBody[]) {
      for (const [offset, limit] of [
        [0, 10],
        [7, 5],
        [0, 30],
      ] as const) {
        const sort = { column_id: `metrics/${metric}`, ascending };
        const want = ref
          .search('span', { ...body, sort })
          .slice(offset, offset + limit)
          .map((r) => r['id']);
        steps.length = 0;
        const page = await store.partialSearch('span', projectId, {
          ...(body as object),
          sort,
          starting_token: offset,
          limit,
          select_columns: { column_ids: ['id'] },
        } as never);
        const plan = steps.flat().join(' → ');
        // The row after the page (k = offset + limit + 1) is within the bound too: it tells whether more follow.
        assert.equal(page.paginated, ref.search('span', { ...body, sort }).length > offset + limit, `more after ${offset}+${limit}`);
        assert.deepEqual(
          page.records.map((r) => r['id']),
          want,
          `${metric} ${ascending ? 'asc' : 'desc'} ${JSON.stringify(body)} ${offset}+${limit}: ${plan}`,
        );
        const way = `${metric} ${ascending ? 'asc' : 'desc'}`;
        if (/traces reaching the bound/.test(plan)) bounded.add(way);
        if (/own value from the top lists/.test(plan)) bounded.add(`${way} listed`);
        // Values read from the lists without ties a thousand rows on: the traces are listed, not found in the statement.
        if (/own value from the top lists/.test(plan) && /\d+ traces reaching the bound/.test(plan)) bounded.add(`${way} listed traces`);
        if (offset === 0 && limit === 10) {
          // Whole records (the official client's search) under the same bound: has_children as the deletes left it.
          const whole = await store.search('span', projectId, { ...(body as object), sort, limit } as never);
          const wanted = ref.search('span', { ...body, sort }).slice(0, limit);
          assert.deepEqual(
            whole.records.map((r) => [r['id'], r['has_children'], r['name']]),
            wanted.map((r) => [r['id'], r['has_children'], r['name']]),
            `whole records: ${metric} ${ascending ? 'asc' : 'desc'} ${JSON.stringify(body)}`,
          );
        }
      }
    }
  }
  return bounded;
}

const everyWay = ['cost', 'latency_ns', 'num_total_tokens', 'quality'].flatMap((m) => [`${m} asc`, `${m} desc`]);

test('span pages sorted by a rolled-up metric under a trace bound equal the reference, both directions', async (t) => {
  // Every metric's pages took the bound at least once each way (sum, sum with negative values, max, average).
  assert.deepEqual([...(await agreesWithReference(t, false))].sort(), everyWay);
});

test('the same pages agree when the bound reads the k-th own value from the segments top lists', async (t) => {
  const listed = await agreesWithReference(t, true);
  assert.deepEqual(
    [...listed].filter((w) => w.endsWith('listed')).sort(),
    everyWay.map((w) => `${w} listed`),
  );
  assert.ok(
    [...listed].some((w) => w.endsWith('listed traces')),
    `some page listed its traces: ${[...listed].join(', ')}`,
  );
});

/** One store of `traces`; its first `limit` span names by `metric` in the store and in the reference, and the plan. */
async function crafted(t: TestContext, traces: Rec[], metric: string, ascending: boolean, limit: number, options: TraceStoreOptions = {}) {
  const steps: string[][] = [];
  const store = await TraceStore.open(tempDir(t), { threads: 1, ...options, onPlan: (s) => steps.push([...s]) });
  t.after(() => store.close());
  const projectId = store.createProject({ name: 'p' }).id;
  const log_stream_id = store.createLogStream(projectId, 'default').id;
  await store.logTraces(projectId, { log_stream_id, traces } as never);
  await store.flush();
  const ref = new ReferenceEvaluator(await everything(store, projectId));
  const sort = { column_id: `metrics/${metric}`, ascending };
  const page = await store.partialSearch('span', projectId, { sort, limit, select_columns: { column_ids: ['id', 'name'] } } as never);
  return {
    got: page.records.map((r) => r['name']),
    want: ref
      .search('span', { sort })
      .slice(0, limit)
      .map((r) => r['name']),
    plan: steps.flat().join(' → '),
  };
}

const llm = (name: string, metrics: Rec) => ({ type: 'llm', name, input: 'q', metrics });
const at = (i: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
/** A trace of a workflow over `kids` (and `beside` at the top level). */
const tree = (i: number, kids: Rec[], beside: Rec[] = []): Rec => ({
  name: `t${i}`,
  input: 'q',
  created_at: at(i),
  spans: [{ type: 'workflow', name: `w${i}`, input: 'x', spans: kids }, ...beside],
});
/** Ten traces of one llm span each, valued by `value(i)`. */
const singles = (metrics: (i: number) => Rec): Rec[] => Array.from({ length: 10 }, (_, i) => tree(10 + i, [llm(`b${i}`, metrics(i))]));

test("the bound holds where a trace's other values pull its bound past a parent's roll-up", async (t) => {
  const cases: [string, string, boolean, Rec[], string][] = [
    // Descending: a workflow whose children cost 80 in a trace whose values sum to -20 (a top-level span cost -100).
    [
      'sum, desc',
      'cost',
      false,
      [tree(0, [llm('a1', { cost: 40 }), llm('a2', { cost: 40 })], [llm('a3', { cost: -100 })]), ...singles((i) => ({ cost: 5 + i }))],
      'w0',
    ],
    // Descending: an agent whose children average 0.9 quality in a trace averaging 0.42.
    [
      'average, desc',
      'quality',
      false,
      [
        tree(0, [
          { type: 'agent', name: 'xc', input: 'a', spans: [llm('c1', { quality: 0.9 }), llm('c2', { quality: 0.9 })] },
          ...[3, 4, 5].map((j) => llm(`c${j}`, { quality: 0.1 })),
        ]),
        ...singles((i) => ({ quality: 0.5 + i / 100 })),
      ],
      'xc',
    ],
    // Descending, no positive value in the trace: its workflow's -2 is above the other traces' values.
    [
      'sum of negatives, desc',
      'cost',
      false,
      [tree(0, [llm('n1', { cost: -1 }), llm('n2', { cost: -1 })]), ...singles((i) => ({ cost: -5 - i }))],
      'w0',
    ],
    // Ascending: a workflow's -80 lies below the trace's smallest value, -40.
    [
      'sum of negatives, asc',
      'cost',
      true,
      [tree(0, [llm('m1', { cost: -40 }), llm('m2', { cost: -40 })]), ...singles((i) => ({ cost: -50 - i }))],
      'w0',
    ],
    // Ascending: an agent's average 0.2 lies above its trace's smallest value, 0.1, and below the other spans'.
    [
      'average, asc',
      'quality',
      true,
      [
        tree(0, [{ type: 'agent', name: 'xd', input: 'a', spans: [llm('d1', { quality: 0.1 }), llm('d2', { quality: 0.3 })] }]),
        ...singles((i) => ({ quality: 0.5 + i / 100 })),
      ],
      'xd',
    ],
  ];
  for (const [label, metric, ascending, traces, parent] of cases) {
    const { got, want, plan } = await crafted(t, traces, metric, ascending, 3);
    assert.deepEqual(got, want, `${label}: ${plan}`);
    assert.ok(want.includes(parent), `${label}: the parent ${parent} is on the page (${want.join(', ')})`);
    assert.ok(plan.includes('traces reaching the bound'), `${label}: ${plan}`);
  }
});

test('more traces reaching the bound than a list holds: the keys statement finds them, and the page agrees', async (t) => {
  // 1,100 traces whose values tie at the page's value (MAX_BOUND_TRACES is 1,000): an agent averaging
  // quality 1 over two llm spans, or a workflow whose two llm spans cost 0; a few below or above.
  const llm = (name: string, metrics: Rec) => ({ type: 'llm', name, input: 'q', metrics });
  const traces: Rec[] = Array.from({ length: 1100 }, (_, i) => ({
    name: `t${i}`,
    input: 'q',
    created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    spans: [
      {
        type: i % 2 === 0 ? 'agent' : 'workflow',
        name: `p${i}`,
        input: 'x',
        spans: [llm(`a${i}`, { quality: i % 97 === 0 ? 0.5 : 1, cost: i % 89 === 0 ? 3 : 0 }), llm(`b${i}`, { quality: 1, cost: 0 })],
      },
    ],
  }));
  let skipped = 0;
  for (const [metric, ascending] of [
    ['quality', false],
    ['cost', true],
    ['cost', false],
  ] as const) {
    // Without top lists the list of traces overflows; with them (where they hold a thousand rows past
    // the page) those rows tie with its value, so no list is made.
    for (const lists of [false, true]) {
      const { got, want, plan } = await crafted(t, traces, metric, ascending, 20, lists ? { topListMinRows: 1 } : {});
      assert.deepEqual(got, want, `${metric} ${ascending ? 'asc' : 'desc'}: ${plan}`);
      assert.ok(
        want.some((n) => String(n).startsWith('p')),
        `a parent is on the page (${want.join(', ')})`,
      );
      assert.ok(plan.includes('traces reaching the bound found in it'), `${metric}: ${plan}`);
      const ties = plan.includes('ties 1000 rows past the page');
      assert.ok(!ties || lists, `${metric}: no lists, no ties seen in them: ${plan}`);
      if (ties) skipped++;
    }
  }
  assert.ok(skipped >= 1, 'some page saw the ties in the lists and made no list of traces');
});
