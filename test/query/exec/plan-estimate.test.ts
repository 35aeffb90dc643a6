// Guarantees: the planner's estimate of a filter's matches (a sample of row groups, src/engine/
// match-estimate.ts) only chooses among plans that give the same answer. Pages equal a store whose rows
// sit in one segment (no windows, no narrowing, no top-k lists), with the estimate measured and with
// it forced wrong both ways ('few' for every filter, 'many' for every filter); and where the measured
// estimate applies, it picks the plan it is meant to.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TraceStoreOptions } from '../../../src/engine/trace-store.js';
import { openStore } from '../../support/helpers.js';

type Fixture = Awaited<ReturnType<typeof openStore>>;

// 480 traces a minute apart: a workflow span (no metric of its own) over two llm spans (metric q), so a
// metric filter or sort rolls up. 'rare' names sit in the first 10 traces only (one segment); 'spread'
// names in every 40th trace (every segment). Created instants repeat in pairs (ties on created_at).
function batch(from: number, to: number): Record<string, unknown>[] {
  return Array.from({ length: to - from }, (_, j) => {
    const i = from + j;
    const at = new Date(Date.UTC(2026, 0, 1, 0, Math.floor(i / 2))).toISOString();
    const name = i < 10 ? 'rare' : i % 40 === 7 ? 'spread' : 'common';
    const id = (s: number) => `00000000-0000-4000-8000-${String(i * 10 + s).padStart(12, '0')}`;
    const llm = (s: number) => ({
      id: id(s),
      type: 'llm',
      name: `${name}-${(i + s) % 3}`,
      input: 'x',
      created_at: at,
      model: 'm',
      metrics: { q: (i * 13 + s) % 11 },
    });
    return {
      id: id(9),
      name,
      input: 'q',
      created_at: at,
      spans: [{ id: id(0), type: 'workflow', name: `${name}-w`, input: 'x', created_at: at, spans: [llm(1), llm(2)] }],
    };
  });
}

async function fill(fx: Fixture, segments: number): Promise<void> {
  const per = 440 / segments;
  for (let from = 0; from < 440; from += per) {
    await fx.store.logTraces(fx.projectId, { log_stream_id: fx.logStreamId, traces: batch(from, from + per) } as never);
    await fx.store.flush();
  }
  await fx.store.logTraces(fx.projectId, { log_stream_id: fx.logStreamId, traces: batch(440, 480) } as never); // in memory
}

const leaf = (f: Record<string, unknown>) => f;
const FILTERS: Record<string, Record<string, unknown>[]> = {
  rare: [leaf({ type: 'text', column_id: 'name', operator: 'contains', value: 'rare' })],
  spread: [leaf({ type: 'text', column_id: 'name', operator: 'contains', value: 'spread' })],
  broad: [leaf({ type: 'text', column_id: 'model', operator: 'eq', value: 'm' })],
  nothing: [leaf({ type: 'text', column_id: 'name', operator: 'eq', value: 'no such name' })],
  // Columns the top-k lists hold: the first five traces' llm spans.
  'first traces': [
    leaf({ type: 'text', column_id: 'type', operator: 'eq', value: 'llm' }),
    leaf({
      type: 'id',
      column_id: 'trace_id',
      operator: 'one_of',
      value: [0, 1, 2, 3, 4].map((i) => `00000000-0000-4000-8000-${String(i * 10 + 9).padStart(12, '0')}`),
    }),
  ],
  'metric (rolls up)': [leaf({ type: 'number', column_id: 'metrics/q', operator: 'gte', value: 9 })],
};
const SORTS: Record<string, Record<string, unknown> | undefined> = {
  'newest first': undefined,
  'oldest first': { column_id: 'created_at', ascending: true },
  name: { column_id: 'name', ascending: true },
  'metric desc': { column_id: 'metrics/q', ascending: false },
};

/** A page as the client sees it: ids, the shown metric (own or rolled up) and the next token. */
async function page(
  fx: Fixture,
  filters: Record<string, unknown>[],
  sort: Record<string, unknown> | undefined,
  offset: number,
  limit: number,
): Promise<string> {
  const r = await fx.store.partialSearch('span', fx.projectId, {
    log_stream_id: fx.logStreamId,
    filters,
    ...(sort ? { sort } : {}),
    pagination: { starting_token: offset, limit },
    select_columns: { column_ids: ['name'], metric_columns_names: ['q'] },
  } as never);
  const rows = r.records.map(
    (rec) => `${String(rec['id'])}:${JSON.stringify((rec['metric_info'] as Record<string, unknown> | null)?.['q'] ?? null)}`,
  );
  return JSON.stringify({ rows, next: r.next_starting_token });
}

test('a wrong estimate of the matches never changes a page, and the measured one picks its plan', { timeout: 120_000 }, async (t) => {
  const plans: string[][] = [];
  // The lists are read before the first metric-sorted page (not after it), so each page's plan is known.
  const base: TraceStoreOptions = {
    sealRows: 100_000,
    walRollBytes: 200_000,
    autoCompact: false,
    pageWindowRows: 50,
    metricTopKRows: 64,
    // The lists tried at any size (by default a store this small is answered by its keys query).
    metricTopKRowsPerCandidate: 0,
    metricTopKBuild: 'await',
  };
  const measured = await openStore(t, { ...base, estimateMinGroups: 4, onPlan: (s) => plans.push([...s]) });
  const few = await openStore(t, { ...base, planEstimate: 'few' });
  const many = await openStore(t, { ...base, planEstimate: 'many' });
  const whole = await openStore(t, {
    sealRows: 100_000,
    walRollBytes: 200_000,
    autoCompact: false,
    metricTopK: false,
    pageWindowRows: 10_000_000,
  });
  for (const fx of [measured, few, many]) await fill(fx, 11);
  await fill(whole, 1);
  assert.ok(measured.store.records.stats.memRows > 0 && measured.store.records.stats.sealedRows > 0, 'rows both sealed and in memory');
  const stepsOf: Record<string, string> = {};
  for (const [fname, filters] of Object.entries(FILTERS)) {
    for (const [sname, sort] of Object.entries(SORTS)) {
      for (const [offset, limit] of [
        [0, 10],
        [7, 5],
        [0, 50],
      ] as const) {
        const want = await page(whole, filters, sort, offset, limit);
        for (const [name, fx] of [
          ['measured', measured],
          ['few', few],
          ['many', many],
        ] as const) {
          plans.length = 0;
          assert.equal(
            await page(fx, filters, sort, offset, limit),
            want,
            `${name}: ${fname}, by ${sname}, offset ${offset}, limit ${limit}`,
          );
          if (name === 'measured' && offset === 0 && limit === 10) stepsOf[`${fname}, by ${sname}`] = plans[0]!.join(' → ');
        }
      }
    }
  }
  // Sorted by name: matches in a sampled row group mean "many row groups" (one statement); none in
  // the sample and few expected, the match-times read narrows the keys query.
  assert.match(stepsOf['spread, by name']!, /^estimate → keys( → fetch)?$/, stepsOf['spread, by name']);
  assert.match(stepsOf['broad, by name']!, /^estimate → keys( → fetch)?$/, stepsOf['broad, by name']);
  assert.match(stepsOf['rare, by name']!, /^estimate → match times → keys \(window\)/, stepsOf['rare, by name']);
  // Sorted by a metric: the top-k lists are tried first (no estimate before them: at 10M spans the
  // sample cost more than the attempt); a filter they cannot fill a page for then gets the estimate,
  // which finds it nowhere, so the match-times read narrows the full query.
  assert.match(
    stepsOf['first traces, by metric desc']!,
    /^keys \(top-k: not enough\) → estimate → match times → keys \(window\)/,
    stepsOf['first traces, by metric desc'],
  );
  assert.match(stepsOf['broad, by metric desc']!, /^keys \(top-k of \d+ listed rows\)/, stepsOf['broad, by metric desc']);
  // Newest first, the first window (50 rows) holds too few 'spread' rows: their rate says the page needs
  // most rows, so one statement without a window follows (no page-times read).
  assert.match(stepsOf['spread, by newest first']!, /^keys \(window\) → keys( → fetch)?( →|$)/, stepsOf['spread, by newest first']);
});
