// Guarantees: counts that the segments' value indexes answer (filters whose every test is an
// equality, membership or substring test of type, name, model or tags, either case, or a metric
// compared with a number) give what a count reading every row gives (a store with segmentCounts:
// false), on generated spans and on values chosen to trip case folding (İ, the Kelvin sign, non-ASCII
// letters, empty strings, duplicate tags) and comparisons (-0 and 0, extremes, metrics absent); with
// dead rows and rows in memory; and such counts are answered from the index (the plan says so), while
// filters with other tests, or with tests the index does not serve, read the segments as before.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateBatches } from '../../support/generator.js';
import { openStore, type StoreFixture } from '../../support/helpers.js';

/** Spans whose names, models and tags compare differently by case and by lower()'s few non-ASCII mappings. */
function awkwardTraces(): unknown[] {
  const names = ['İnfo', 'info', 'INFO', '\u212Aelvin', 'kelvin', 'Café', 'café', '', 'plain'];
  const models = ['GPT-4o', 'gpt-4o', 'gpt-4o-mini', 'ΣIGMA', ''];
  const tagSets = [['a', 'A', 'a'], ['İx'], ['ix', 'b'], [], ['\u212A'], ['k', 'K']];
  const awk = [-0, 0, 1e300, -1e-300, 3, 3, 2.5, -7];
  return names.map((name, i) => ({
    type: 'trace',
    name: `t-${i}`,
    input: 'q',
    output: 'a',
    created_at: `2026-03-01T10:00:0${i}.000Z`,
    spans: models.map((model, j) => ({
      type: j % 2 === 0 ? 'llm' : 'tool',
      name,
      input: 'x',
      output: 'y',
      ...(j % 2 === 0 && model !== '' ? { model } : {}),
      tags: tagSets[(i + j) % tagSets.length],
      ...(j % 2 === 0 ? { metrics: { awkward: awk[(i + j) % awk.length]! } } : {}),
      created_at: `2026-03-01T10:00:0${i}.${String(100 + j).padStart(3, '0')}Z`,
    })),
  }));
}

const text = (column_id: string, operator: string, value: unknown, case_sensitive = true) => ({
  type: 'text',
  column_id,
  operator,
  value,
  case_sensitive,
});
const tags = (operator: string, value: unknown, case_sensitive = true) => ({
  type: 'collection',
  column_id: 'tags',
  operator,
  value,
  case_sensitive,
});

/** Metrics alone are rolled up to parent spans (a count that reads other rows): this keeps to stored values. */
const LLM = text('type', 'eq', 'llm');
const num = (column_id: string, operator: string, value: unknown) => ({ type: 'number', column_id, operator, value });

/** Filters every test of which the value index serves (a list is its tests' AND; an object a filter tree). */
const SERVED: (unknown[] | object)[] = [
  [LLM],
  [text('model', 'eq', 'gpt-4o')],
  [text('model', 'eq', 'GPT-4O', false)],
  [text('model', 'one_of', ['gpt-4o', 'gpt-4o-mini', 'nope'])],
  [text('model', 'contains', 'mini')],
  [text('model', 'contains', 'GPT', false)],
  [text('model', 'eq', '')],
  [text('name', 'eq', 'info', false)],
  [text('name', 'eq', 'kelvin', false)],
  [text('name', 'contains', 'INF', false)],
  [text('name', 'contains', 'caf', false)],
  [text('name', 'eq', 'Café')],
  [text('name', 'eq', '')],
  [text('name', 'one_of', ['plain', 'INFO'])],
  [tags('contains', 'a')],
  [tags('contains', 'a', false)],
  [tags('contains', 'ix', false)],
  [tags('contains', 'k', false)],
  [tags('one_of', ['b', 'beta', 'K'])],
  [tags('one_of', [])],
  [text('type', 'eq', 'llm'), text('model', 'contains', 'gpt'), tags('contains', 'beta')],
  [text('model', 'eq', 'gpt-4o'), tags('contains', 'cached')],
  // Complements: rows without the value match them too.
  [text('model', 'ne', 'gpt-4o')],
  [text('name', 'ne', 'INFO', false)],
  [tags('not_in', ['beta'])],
  [text('model', 'not_in', ['gpt-4o', 'GPT-4o']), LLM],
  { and: [{ not: { filter: text('model', 'contains', 'gpt') } }, { filter: tags('contains', 'a') }] },
  // Metrics against a number: rows without a value match none but ne (and a NOT).
  [text('model', 'eq', 'gpt-4o'), num('metrics/num_input_tokens', 'gt', 150)],
  [num('metrics/correctness', 'gte', 0.5), LLM],
  [num('metrics/correctness', 'lt', 0.5), LLM],
  [num('metrics/num_input_tokens', 'lte', 200), LLM],
  [num('metrics/num_input_tokens', 'between', [100, 300]), LLM],
  [num('metrics/duration_ns', 'gt', 1e8), tags('contains', 'a'), LLM],
  [num('metrics/awkward', 'eq', 0), LLM],
  [num('metrics/awkward', 'lt', 0), LLM],
  [num('metrics/awkward', 'gte', 0), LLM],
  [num('metrics/awkward', 'ne', 3), LLM],
  [num('metrics/awkward', 'gt', 1e299), LLM],
  [num('metrics/awkward', 'lte', -1e-300), LLM],
  [num('metrics/never_logged', 'gt', 0), LLM],
  [num('metrics/never_logged', 'ne', 0), LLM],
  { and: [{ not: { filter: num('metrics/correctness', 'gt', 0.5) } }, { filter: LLM }] },
];

/** Filters the index serves in part or not at all. */
const OTHERS: (unknown[] | object)[] = [
  [text('model', 'eq', 'gpt-4o'), num('step_number', 'gt', 1)],
  [tags('eq', ['a'])],
  { not: { and: [{ filter: text('model', 'eq', 'gpt-4o') }, { filter: tags('contains', 'a') }] } },
  { or: [{ filter: text('model', 'eq', 'gpt-4o') }, { filter: tags('contains', 'a') }] },
  [text('name', 'eq', 'ΣIGMA', false)],
  [text('model', 'contains', 'σ', false)],
];

test('counts from value indexes equal counts that read every row', { timeout: 180_000 }, async (t) => {
  const steps: string[][] = [];
  const indexed = await openStore(t, {
    autoCompact: false,
    segmentCountMinRows: 1,
    valueIndexMinRows: 0,
    onPlan: (s) => steps.push([...s]),
  });
  const plain = await openStore(t, { autoCompact: false, segmentCounts: false, valueIndexMinRows: 0 });
  const batches = [...generateBatches({ spans: 3000, batchSpans: 500, seed: 31 })];
  for (const fx of [indexed, plain]) {
    for (const b of batches) await fx.store.logTraces(fx.projectId, { log_stream_id: fx.logStreamId, traces: b as never });
    await fx.store.logTraces(fx.projectId, { log_stream_id: fx.logStreamId, traces: awkwardTraces() as never });
    await fx.store.flush();
  }
  // A list of filters (their AND), or a filter tree.
  const count = (fx: StoreFixture, f: unknown[] | object) =>
    fx.store
      .count('span', fx.projectId, { log_stream_id: fx.logStreamId, ...(Array.isArray(f) ? { filters: f } : { filter_tree: f }) } as never)
      .then((r) => r.total_count);
  const check = async (when: string) => {
    for (const f of [...SERVED, ...OTHERS]) {
      steps.length = 0;
      const got = await count(indexed, f);
      assert.equal(got, await count(plain, f), `${when}: ${JSON.stringify(f)}`);
      const answered = / from value indexes\)$/.test(steps.at(-1)?.[0] ?? '');
      assert.equal(answered, SERVED.includes(f), `${when}: ${JSON.stringify(f)} answered from the index: ${steps.at(-1)}`);
    }
  };
  // Sanity: the awkward values are there and tell cases apart.
  assert.equal(await count(plain, [text('name', 'eq', 'info', false)]), 3 * 5 + 0, 'İnfo, info and INFO lower to info');
  await check('fresh');
  // Dead rows: left out of the index's rows by their places in the segment (its dead-row list).
  for (const fx of [indexed, plain]) {
    const gone = await fx.store.records.delete('span', fx.projectId, {
      log_stream_id: fx.logStreamId,
      filters: [tags('contains', 'a')],
    } as never);
    assert.ok(gone.deleted > 0);
  }
  await check('after a delete');
  // Rows in memory are counted beside the segments.
  for (const fx of [indexed, plain])
    await fx.store.logTraces(fx.projectId, { log_stream_id: fx.logStreamId, traces: awkwardTraces() as never });
  await check('with rows in memory');
});

test('a metric of -0 is counted as 0 by a read of the segment', { timeout: 60_000 }, async (t) => {
  // Stored as 0: DuckDB's Parquet writer keeps one of -0 and 0 in a column's dictionary and its bloom
  // filter holds that one's bits, so `= 0` skipped the row group when -0 came first.
  const fx = await openStore(t, { autoCompact: false, segmentCounts: false, valueIndexMinRows: 0 });
  await fx.store.logTraces(fx.projectId, { log_stream_id: fx.logStreamId, traces: awkwardTraces() as never });
  await fx.store.flush();
  const spans = (awkwardTraces() as { spans: { metrics?: { awkward: number } }[] }[]).flatMap((x) => x.spans);
  assert.ok(Object.is(spans.find((x) => x.metrics)!.metrics!.awkward, -0), 'the first value is -0');
  const zeros = spans.filter((x) => x.metrics?.awkward === 0).length;
  const got = await fx.store.count('span', fx.projectId, {
    log_stream_id: fx.logStreamId,
    filters: [num('metrics/awkward', 'eq', 0), LLM],
  } as never);
  assert.equal(got.total_count, zeros, 'every zero, -0 among them');
});
