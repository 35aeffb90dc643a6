// Stores of traces whose spans carry rolled-up metrics (tokens and cost add up, latency takes the max,
// quality averages), with the reference evaluator's view of them: for tests of pages and filters on
// roll-ups (test/query/exec/trace-bound.test.ts, test/query/trace-range.test.ts).
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { TraceStore } from '../../src/engine/trace-store.js';
import { tempDir } from './helpers.js';
import { ReferenceEvaluator, type Level, type Rec } from './reference-eval.js';
import { seededRandom as rng } from './seeded.js';

/**
 * Traces of varied trees: a workflow (no own values) over llm spans (tokens, cost from -500 to 2,000,
 * latency, quality) and now and then a tool, some under an agent (which may hold cost and latency of
 * its own); a top-level llm span in some traces.
 */
export function traces(from: number, n: number, r: () => number): Rec[] {
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

export async function everything(store: TraceStore, projectId: string): Promise<Record<Level, Rec[]>> {
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

export async function filled(
  t: TestContext,
  steps: string[][],
  listAll = false,
): Promise<{ store: TraceStore; projectId: string; ref: ReferenceEvaluator }> {
  // listAll: every sealed segment gets top lists (the k-th own value is then read from them).
  const lists = listAll ? { topListMinRows: 1 } : {};
  const store = await TraceStore.open(tempDir(t), { threads: 1, autoCompact: false, ...lists, onPlan: (s) => steps.push([...s]) });
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
