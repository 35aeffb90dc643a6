// The top-k bound (src/query/exec/topk-bound.ts) may only over-count: for random filters over random listed
// rows, it is never below the reference evaluator's count of the rows that match, and for the filters
// it tests loosely (equality and membership on listed columns) it is exact when case and NULLs agree.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { listedMatchBound } from '../../../src/query/exec/topk-bound.js';
import type { TopRow } from '../../../src/query/exec/topk-cache.js';
import { validateFilters } from '../../../src/query/validate-filter.js';
import { ReferenceEvaluator } from '../../support/reference-eval.js';

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

const TRACES = ['aaaaaaaa-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000002', 'AAAAAAAA-0000-4000-8000-000000000003'];
const TYPES = ['llm', 'tool', 'workflow'];
const MODELS = ['gpt-4o', 'GPT-4o', 'claude', null];

test('the top-k bound never counts fewer listed rows than a filter admits', () => {
  const rand = random(7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const rows: TopRow[] = Array.from({ length: 300 }, (_, i) => ({
    seq: i,
    c: 1_700_000_000_000_000 + i,
    id: `bbbbbbbb-0000-4000-8000-${String(i).padStart(12, '0')}`,
    type: pick(TYPES),
    session_id: null,
    trace_id: pick(TRACES),
    parent_id: rand() < 0.5 ? null : pick(TRACES),
    has_children: rand() < 0.3,
    status_code: rand() < 0.2 ? null : pick([200, 404, 500]),
    model: pick(MODELS),
    v: rand(),
    m: {},
  }));
  // Quality is metric 0, listed with each row (none on every fifth row).
  for (const [i, r] of rows.entries()) r.m = i % 5 === 0 ? { 0: null } : { 0: r.v };
  const ids = { quality: 0 };
  const records = rows.map((r) => ({
    ...r,
    created_at: new Date(r.c / 1000).toISOString(),
    metrics: r.m[0] === null ? {} : { quality: r.v },
    tags: [],
    name: 'n',
  }));
  const ref = new ReferenceEvaluator({ span: records as never, trace: [], session: [] });
  const leaves = [
    () => {
      const operator = pick(['eq', 'one_of', 'ne', 'not_in']);
      return {
        type: 'id',
        column_id: 'trace_id',
        operator,
        value: operator === 'eq' || operator === 'ne' ? pick(TRACES) : [pick(TRACES), pick(TRACES)],
      };
    },
    () => ({
      type: 'text',
      column_id: 'type',
      operator: pick(['eq', 'one_of', 'ne', 'contains']),
      value: pick(TYPES),
      case_sensitive: rand() < 0.5,
    }),
    () => {
      const operator = pick(['eq', 'one_of', 'not_in']);
      const v = pick(['gpt-4o', 'GPT-4O', 'claude']);
      return { type: 'text', column_id: 'model', operator, value: operator === 'eq' ? v : [v], case_sensitive: rand() < 0.5 };
    },
    () => ({ type: 'number', column_id: 'status_code', operator: pick(['eq', 'gt', 'ne']), value: pick([200, 404, 500]) }),
    () => ({ type: 'boolean', column_id: 'has_children', operator: 'eq', value: rand() < 0.5 }),
    () => {
      const operator = pick(['gt', 'gte', 'lt', 'lte', 'eq', 'ne', 'between']);
      const a = pick([rand(), pick(rows).v]);
      return { type: 'number', column_id: 'metrics/quality', operator, value: operator === 'between' ? [a, a + 0.3] : a };
    },
  ];
  const tree = (depth: number): unknown => {
    if (depth === 0 || rand() < 0.4) return { filter: pick(leaves)() };
    const kids = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => tree(depth - 1));
    const r = rand();
    return r < 0.4 ? { and: kids } : r < 0.8 ? { or: kids } : { not: kids[0] };
  };
  for (let trial = 0; trial < 400; trial++) {
    const body = rand() < 0.5 ? { filters: [pick(leaves)()] } : { filter_tree: tree(3) };
    const expr = validateFilters(body as never, 'span');
    const truth = ref.search('span', body as never).length;
    const bound = listedMatchBound(expr, [{ rows, truncated: false }], rows.length + 1, ids);
    assert.ok(bound >= truth, `bound ${bound} below the ${truth} matches of ${JSON.stringify(body)}`);
  }
  // Loose only where it must be: equality and membership where case and NULLs agree are counted exactly.
  for (const leaf of [
    { type: 'text', column_id: 'type', operator: 'eq', value: 'LLM', case_sensitive: false },
    { type: 'id', column_id: 'trace_id', operator: 'one_of', value: TRACES.slice(0, 2) },
    { type: 'number', column_id: 'status_code', operator: 'eq', value: 500 },
    { type: 'number', column_id: 'metrics/quality', operator: 'gt', value: 0.4 },
    { type: 'number', column_id: 'metrics/quality', operator: 'lte', value: 0.7 },
  ]) {
    const body = { filters: [leaf] };
    const truth = ref.search('span', body as never).length;
    assert.ok(truth > 0 && truth < rows.length, JSON.stringify(leaf));
    assert.equal(
      listedMatchBound(validateFilters(body as never, 'span'), [{ rows, truncated: false }], rows.length + 1, ids),
      truth,
      JSON.stringify(leaf),
    );
  }
  // It stops counting at `enough`.
  assert.equal(listedMatchBound(null, [{ rows, truncated: false }], 10), 10);
});
