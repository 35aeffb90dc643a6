// Guarantees: a page of spans sorted best first by a rolled-up metric (own value, else the roll-up of
// the descendants' values) found under a trace bound (src/query/exec/trace-bound.ts) equals the
// reference evaluator's page, for sums with negative values among them, maxima and averages, with and
// without filters, offsets, deletes, sealed and in-memory rows; ascending sorts do not take the bound.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { TraceStore } from '../../../src/engine/trace-store.js';
import { tempDir } from '../../support/helpers.js';
import { ReferenceEvaluator, type FilterBody, type Level, type Rec } from '../../support/reference-eval.js';
import { seededRandom as rng } from '../../support/seeded.js';

/**
 * Traces of varied trees: a workflow (no own values) over llm spans (tokens, cost from -500 to 2,000,
 * latency, quality) and now and then a tool, some under an agent (which may hold cost and latency of
 * its own); a top-level llm span in some traces.
 */
function traces(from: number, n: number, r: () => number): Rec[] {
  const llm = (i: number, j: number): Rec => ({
    type: 'llm',
    name: `llm-${i}-${j}`,
    input: 'q',
    metrics: {
      num_total_tokens: Math.floor(r() * 5000),
      cost: Math.round(r() * 2500 - 500),
      latency_ns: Math.floor(r() * 1e9),
      ...(r() < 0.8 ? { quality: Math.floor(r() * 100) } : {}),
    },
  });
  return Array.from({ length: n }, (_, k) => {
    const i = from + k;
    const kids = Array.from({ length: 1 + Math.floor(r() * 4) }, (_, j) => llm(i, j));
    if (r() < 0.3) kids.push({ type: 'tool', name: 'lookup', input: 'k' });
    // An agent over some of them, holding values of its own now and then (a parent whose own value wins).
    const own = r() < 0.5 ? { metrics: { cost: Math.round(r() * 3000), latency_ns: Math.floor(r() * 2e9) } } : {};
    const nested = r() < 0.4 ? [{ type: 'agent', name: 'agent', input: 'a', ...own, spans: kids.splice(0, 2) }] : [];
    return {
      name: `t${i}`,
      input: 'q',
      created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
      spans: [{ type: 'workflow', name: 'wf', input: 'x', spans: [...nested, ...kids] }, ...(r() < 0.3 ? [llm(i, 9)] : [])],
    };
  });
}

// Whole numbers only: their sums are exact in any order and equal averages round alike, so the order of two
// equal roll-ups (ties by id) is the same in the store and the reference, whatever order DuckDB adds in.

async function everything(store: TraceStore, projectId: string): Promise<Record<Level, Rec[]>> {
  const out = {} as Record<Level, Rec[]>;
  for (const level of ['span', 'trace', 'session'] as const) {
    const rows: Rec[] = [];
    for (let start = 0; ; start += 1000) {
      const page = await store.search(level, projectId, { starting_token: start, limit: 1000 });
      rows.push(...page.records);
      if (!page.paginated) break;
    }
    out[level] = rows;
  }
  return out;
}

async function filled(t: TestContext, steps: string[][]): Promise<{ store: TraceStore; projectId: string; ref: ReferenceEvaluator }> {
  const store = await TraceStore.open(tempDir(t), { threads: 1, autoCompact: false, onPlan: (s) => steps.push([...s]) });
  t.after(() => store.close());
  const projectId = store.createProject({ name: 'p' }).id;
  const log_stream_id = store.createLogStream(projectId, 'default').id;
  const r = rng(7);
  // Two sealed batches, then rows in memory; some llm spans deleted from the sealed ones.
  await store.logTraces(projectId, { log_stream_id, traces: traces(0, 40, r) } as never);
  await store.flush();
  await store.logTraces(projectId, { log_stream_id, traces: traces(40, 40, r) } as never);
  await store.flush();
  const sealed = (
    await store.search('span', projectId, {
      filters: [{ type: 'text', column_id: 'type', operator: 'eq', value: 'llm' }],
      limit: 1000,
    } as never)
  ).records;
  const gone = sealed.filter((_, i) => i % 9 === 0).map((s) => String(s['id']));
  await store.records.delete('span', projectId, { filters: [{ type: 'id', column_id: 'id', operator: 'one_of', value: gone }] });
  await store.logTraces(projectId, { log_stream_id, traces: traces(80, 30, r) } as never);
  assert.ok(store.records.stats.sealedRows > 0 && store.records.stats.memRows > 0, 'rows both sealed and in memory');
  return { store, projectId, ref: new ReferenceEvaluator(await everything(store, projectId)) };
}

const notTool: FilterBody = { filters: [{ type: 'text', column_id: 'type', operator: 'ne', value: 'tool' }] };
const workflowsAndLlm: FilterBody = {
  filter_tree: {
    or: [
      { filter: { type: 'text', column_id: 'type', operator: 'eq', value: 'workflow' } },
      { filter: { type: 'text', column_id: 'name', operator: 'eq', value: 'llm-3-0' } },
    ],
  },
};

test('span pages sorted best first by a rolled-up metric under a trace bound equal the reference', async (t) => {
  const steps: string[][] = [];
  const { store, projectId, ref } = await filled(t, steps);
  const bounded = new Set<string>();
  for (const metric of ['num_total_tokens', 'cost', 'latency_ns', 'quality']) {
    for (const body of [{}, notTool, workflowsAndLlm] as FilterBody[]) {
      for (const [offset, limit] of [
        [0, 10],
        [7, 5],
        [0, 30],
      ] as const) {
        const sort = { column_id: `metrics/${metric}`, ascending: false };
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
        assert.deepEqual(
          page.records.map((r) => r['id']),
          want,
          `${metric} ${JSON.stringify(body)} ${offset}+${limit}: ${plan}`,
        );
        if (/traces reaching the bound/.test(plan)) bounded.add(metric);
      }
    }
  }
  // Every metric's pages took the bound at least once (sum, sum with negative values, max, average).
  assert.deepEqual([...bounded].sort(), ['cost', 'latency_ns', 'num_total_tokens', 'quality']);
});

test('an ascending sort by a rolled-up metric does not take the bound, and agrees all the same', async (t) => {
  const steps: string[][] = [];
  const { store, projectId, ref } = await filled(t, steps);
  const sort = { column_id: 'metrics/num_total_tokens', ascending: true };
  steps.length = 0;
  const page = await store.partialSearch('span', projectId, { sort, limit: 10, select_columns: { column_ids: ['id'] } } as never);
  assert.ok(!steps.flat().some((s) => s.includes('bound')), steps.flat().join(' → '));
  assert.deepEqual(
    page.records.map((r) => r['id']),
    ref
      .search('span', { sort })
      .slice(0, 10)
      .map((r) => r['id']),
  );
});

test("the bound holds where a trace's other values pull its total or average below a parent's roll-up", async (t) => {
  const steps: string[][] = [];
  const store = await TraceStore.open(tempDir(t), { threads: 1, onPlan: (s) => steps.push([...s]) });
  t.after(() => store.close());
  const projectId = store.createProject({ name: 'p' }).id;
  const log_stream_id = store.createLogStream(projectId, 'default').id;
  const llm = (name: string, metrics: Rec) => ({ type: 'llm', name, input: 'q', metrics });
  const at = (i: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
  await store.logTraces(projectId, {
    log_stream_id,
    traces: [
      // A workflow whose children cost 80 in a trace whose values sum to -20 (a top-level span cost -100).
      {
        name: 'a',
        input: 'q',
        created_at: at(0),
        spans: [
          { type: 'workflow', name: 'wa', input: 'x', spans: [llm('a1', { cost: 40 }), llm('a2', { cost: 40 })] },
          llm('a3', { cost: -100 }),
        ],
      },
      // An agent whose children average 0.9 quality in a trace averaging 0.42.
      {
        name: 'c',
        input: 'q',
        created_at: at(1),
        spans: [
          {
            type: 'workflow',
            name: 'wc',
            input: 'x',
            spans: [
              { type: 'agent', name: 'xc', input: 'a', spans: [llm('c1', { quality: 0.9 }), llm('c2', { quality: 0.9 })] },
              ...[3, 4, 5].map((j) => llm(`c${j}`, { quality: 0.1 })),
            ],
          },
        ],
      },
      // Spans of their own values between those bounds and the parents' roll-ups.
      ...Array.from({ length: 10 }, (_, i) => ({
        name: `b${i}`,
        input: 'q',
        created_at: at(2 + i),
        spans: [{ type: 'workflow', name: `wb${i}`, input: 'x', spans: [llm(`b${i}`, { cost: 5 + i, quality: 0.5 + i / 100 })] }],
      })),
    ],
  } as never);
  await store.flush();
  const ref = new ReferenceEvaluator(await everything(store, projectId));
  for (const metric of ['cost', 'quality']) {
    const sort = { column_id: `metrics/${metric}`, ascending: false };
    steps.length = 0;
    const page = await store.partialSearch('span', projectId, { sort, limit: 3, select_columns: { column_ids: ['id', 'name'] } } as never);
    const want = ref.search('span', { sort }).slice(0, 3);
    assert.deepEqual(
      page.records.map((r) => r['name']),
      want.map((r) => r['name']),
      `${metric}: ${steps.flat().join(' → ')}`,
    );
    assert.ok(
      steps.flat().some((s) => s.includes('traces reaching the bound')),
      steps.flat().join(' → '),
    );
  }
});
