// Guarantees the overview and the comparison ask the aggregate API for the same buckets in every
// call, turn its rows into the series and values the charts draw (models stacked, error rates,
// differences from the first run), filter a clicked bucket exactly, and export CSV that reads back.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { change, runValues } from '../../../src/ui/lib/compare.js';
import {
  binFilters,
  binsOf,
  bucketFilters,
  bucketTree,
  byModel,
  errorRate,
  histogramBody,
  rangeFilters,
  seriesOf,
  toCsv,
} from '../../../src/ui/lib/overview.js';

const B = ['2026-01-01T10:00:00.000Z', '2026-01-01T10:05:00.000Z', '2026-01-01T10:10:00.000Z'];

test('later calls get the first answer’s buckets; ranges and clicked buckets become created_at filters', () => {
  const first = { interval: '5m', rows: B.map((b, i) => ({ created_at: b, traces: i })) };
  assert.deepEqual(bucketFilters(first), [
    { filter: { type: 'date', column_id: 'created_at', operator: 'gte', value: B[0] } },
    { filter: { type: 'date', column_id: 'created_at', operator: 'lt', value: '2026-01-01T10:15:00.000Z' } },
  ]);
  assert.deepEqual(bucketFilters({ rows: [] }), []);
  const now = Date.parse('2026-01-08T00:00:00Z');
  assert.deepEqual(
    rangeFilters({ kind: 'last', span: 'week' }, now).map((f: any) => [f.filter.operator, f.filter.value]),
    [
      ['gte', '2026-01-01T00:00:00.000Z'],
      ['lt', '2026-01-08T00:00:00.000Z'],
    ],
  );
  assert.deepEqual(rangeFilters({ kind: 'all' }, now), []);
  assert.deepEqual(bucketTree(B[1]!, '5m'), {
    and: [
      { filter: { type: 'date', column_id: 'created_at', operator: 'gte', value: B[1] } },
      { filter: { type: 'date', column_id: 'created_at', operator: 'lt', value: B[2] } },
    ],
  });
});

test('series: per measure, per model summed and aligned on the buckets, error rates per 100 spans', () => {
  const s = seriesOf({ rows: B.map((b, i) => ({ created_at: b, traces: i, p95: i === 1 ? null : i * 10 })) }, ['traces', 'p95']);
  assert.deepEqual(s.buckets, B);
  assert.deepEqual(s.series, [
    { name: 'traces', values: [0, 1, 2] },
    { name: 'p95', values: [0, null, 20] },
  ]);
  const models = {
    rows: [
      { created_at: B[0], model: 'a', input: 10, output: 5 },
      { created_at: B[2], model: 'a', input: 1, output: null },
      { created_at: B[2], model: null, input: 3, output: 4 },
      { created_at: B[1], model: 'b', input: null, output: null },
    ],
  };
  assert.deepEqual(byModel(models, B, ['input', 'output']), [
    { name: 'a', values: [15, null, 1] },
    { name: '(no model)', values: [null, null, 7] },
  ]);
  assert.deepEqual(
    errorRate({
      rows: [
        { spans: 4, errors: 1 },
        { spans: 0, errors: 0 },
      ],
    }),
    [25, null],
  );
});

test('comparison values and differences; CSV quotes what needs quoting', () => {
  const v = runValues(
    { rows: [{ traces: 3, p50: 100, p95: 200, 'metric:q': 0.5 }] },
    { rows: [{ spans: 8, errors: 2, input: 10, output: null, cost: 0.25 }] },
    ['q'],
  );
  assert.deepEqual(v, { traces: 3, p50: 100, p95: 200, error_rate: 25, tokens: 10, cost: 0.25, 'metric:q': 0.5 });
  assert.equal(change(200, 300), 0.5);
  assert.equal(change(0, 3), null);
  assert.equal(change(null, 3), null);
  assert.equal(
    toCsv(B.slice(0, 2), [
      { name: 'a,"b"', values: [1, null] },
      { name: 'c', values: [2.5, 3] },
    ]),
    `bucket,"a,""b""",c\n${B[0]},1,2.5\n${B[1]},,3\n`,
  );
});

test('a distribution: ten bins of equal width from min to max, the last holding max; one bin when all values are equal', () => {
  const bins = binsOf(2, 4);
  assert.equal(bins.length, 10);
  assert.deepEqual([bins[0]!.lo, bins[9]!.hi], [2, 4]);
  for (let k = 1; k < bins.length; k++) assert.equal(bins[k]!.lo, bins[k - 1]!.hi, 'no gap and no overlap');
  assert.deepEqual(
    binFilters('q', bins[9]!).map((f) => f['operator']),
    ['gte', 'lte'],
  );
  assert.deepEqual(
    binFilters('q', bins[0]!).map((f) => [f['column_id'], f['operator'], f['value']]),
    [
      ['metrics/q', 'gte', 2],
      ['metrics/q', 'lt', 2.2],
    ],
  );
  assert.deepEqual(binsOf(3, 3), [{ lo: 3, hi: 3, last: true }]);
  const body = histogramBody({ log_stream_id: 'x' }, [], 'q', bins) as { measures: { op: string; alias: string }[] };
  assert.deepEqual(
    body.measures.map((m) => [m.op, m.alias]),
    bins.map((_, k) => ['count', `b${k}`]),
  );
});
