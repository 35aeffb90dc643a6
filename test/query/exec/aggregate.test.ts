// Guarantees: store.aggregate answers what a reference computed here over the same logged records
// says, for every op (count, sum, avg, min, max, p50-p99 interpolated), time buckets (empty ones
// present with count 0 and null measures) and column groups (model, tags once per distinct tag),
// filters and per-measure filters; trace-level metrics read the value search shows (own, else the
// roll-up); and it agrees with store.data.sql over the same store, with rows in memory and sealed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openStore } from '../../support/helpers.js';
import { withComputedCost } from '../../support/model-cost.js';

type Rec = Record<string, any>;
const BASE = Date.UTC(2026, 0, 1);
const N = 160;
const MODELS = ['gpt-4o', 'gpt-4o-mini', 'claude-3-5-haiku', 'in-house-7b'];

/** Minutes after BASE of trace i: hours 0 and 1, then nothing in hours 2 and 3, then hours 4 and 5. */
const minuteOf = (i: number) => (i < 80 ? i : 240 + (i - 80));

interface Llm {
  at: number;
  model: string;
  input: number;
  output: number;
  duration: number;
  status: number;
  tags: string[];
  quality?: number;
}

function llmOf(i: number): Llm {
  return {
    at: BASE + minuteOf(i) * 60_000 + 500,
    model: MODELS[i % MODELS.length]!,
    input: 10 + ((i * 7) % 23),
    output: 1 + ((i * 5) % 11),
    duration: ((i * 37) % 100) * 1_000_000 + 1_000_000,
    status: i % 9 === 0 ? 500 : 200,
    tags: i % 3 === 0 ? ['a', 'b', 'a'] : i % 3 === 1 ? ['b'] : [],
    ...(i % 4 === 0 ? {} : { quality: (i % 5) / 4 }),
  };
}

function traces(): Rec[] {
  return Array.from({ length: N }, (_, i) => {
    const l = llmOf(i);
    const created = new Date(l.at - 500).toISOString();
    return {
      name: `t${i}`,
      input: 'q',
      created_at: created,
      spans: [
        {
          type: 'llm',
          name: 'call',
          input: 'x',
          created_at: new Date(l.at).toISOString(),
          model: l.model,
          tags: l.tags,
          status_code: l.status,
          metrics: {
            num_input_tokens: l.input,
            num_output_tokens: l.output,
            duration_ns: l.duration,
            ...(l.quality !== undefined ? { quality: l.quality } : {}),
          },
        },
        { type: 'tool', name: 'lookup', input: 'x', created_at: new Date(l.at + 1).toISOString(), metrics: { duration_ns: 5_000_000 } },
      ],
    };
  });
}

/** DuckDB's quantile_cont: linear interpolation at q * (n - 1) of the sorted values. */
function quantile(values: number[], q: number): number | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const pos = q * (s.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo]! + (s[hi]! - s[lo]!) * (pos - lo);
}

const ops = {
  count: (v: number[]) => v.length,
  sum: (v: number[]) => (v.length ? v.reduce((a, b) => a + b, 0) : null),
  avg: (v: number[]) => (v.length ? v.reduce((a, b) => a + b, 0) / v.length : null),
  min: (v: number[]) => (v.length ? Math.min(...v) : null),
  max: (v: number[]) => (v.length ? Math.max(...v) : null),
  p50: (v: number[]) => quantile(v, 0.5),
  p90: (v: number[]) => quantile(v, 0.9),
  p95: (v: number[]) => quantile(v, 0.95),
  p99: (v: number[]) => quantile(v, 0.99),
};

const hourOf = (ms: number) => new Date(ms - (ms % 3_600_000)).toISOString();

/** Numbers compared to 9 significant digits (sums of doubles in another order). */
function near(got: unknown, want: number | null, what: string): void {
  if (want === null) {
    assert.equal(got, null, what);
    return;
  }
  assert.equal(typeof got, 'number', `${what}: a number, got ${String(got)}`);
  assert.ok(Math.abs((got as number) - want) <= Math.abs(want) * 1e-9 + 1e-12, `${what}: ${String(got)} != ${want}`);
}

async function seeded(t: Parameters<typeof openStore>[0], sealHalf: boolean) {
  const fx = await openStore(t, { threads: 1 });
  const all = traces();
  const half = sealHalf ? N / 2 : N;
  await fx.store.logTraces(fx.projectId, { log_stream_id: fx.logStreamId, reliable: true, traces: all.slice(0, half) } as never);
  if (sealHalf) {
    await fx.store.flush();
    await fx.store.logTraces(fx.projectId, { log_stream_id: fx.logStreamId, reliable: true, traces: all.slice(half) } as never);
  }
  return fx;
}

for (const sealHalf of [false, true]) {
  const where = sealHalf ? 'half sealed, half in memory' : 'in memory';

  test(`hourly buckets of llm spans, every op, empty hours present (${where})`, async (t) => {
    const { store, projectId, logStreamId } = await seeded(t, sealHalf);
    const measures = [
      { op: 'count' },
      { op: 'sum', column_id: 'metrics/num_input_tokens', alias: 'tokens_in' },
      ...(['avg', 'min', 'max', 'p50', 'p90', 'p95', 'p99'] as const).map((op) => ({ op, column_id: 'metrics/duration_ns' })),
      { op: 'count', alias: 'errors', filters: [{ type: 'number', column_id: 'status_code', operator: 'gte', value: 400 }] },
      { op: 'count', column_id: 'metrics/quality', alias: 'scored' },
      { op: 'avg', column_id: 'metrics/quality' },
    ];
    const got = await store.aggregate('span', projectId, {
      log_stream_id: logStreamId,
      filters: [{ type: 'text', column_id: 'type', operator: 'eq', value: 'llm' }],
      group_by: [{ column_id: 'created_at', interval: '1h' }],
      measures,
    } as never);
    assert.equal(got.interval, '1h');
    const llms = Array.from({ length: N }, (_, i) => llmOf(i));
    const hours = Array.from({ length: 6 }, (_, h) => new Date(BASE + h * 3_600_000).toISOString());
    assert.deepEqual(
      got.rows.map((r) => r['created_at']),
      hours,
      'every hour from the first to the last record, the empty ones too',
    );
    for (const row of got.rows) {
      const inHour = llms.filter((l) => hourOf(l.at) === row['created_at']);
      const at = String(row['created_at']);
      assert.equal(row['count'], inHour.length, `${at} count`);
      near(row['tokens_in'], ops.sum(inHour.map((l) => l.input)), `${at} sum tokens`);
      for (const op of ['avg', 'min', 'max', 'p50', 'p90', 'p95', 'p99'] as const)
        near(row[`${op}(metrics/duration_ns)`], ops[op](inHour.map((l) => l.duration)), `${at} ${op} duration`);
      assert.equal(row['errors'], inHour.filter((l) => l.status >= 400).length, `${at} errors`);
      const scored = inHour.flatMap((l) => (l.quality !== undefined ? [l.quality] : []));
      assert.equal(row['scored'], scored.length, `${at} count of a metric counts records with a value`);
      near(row['avg(metrics/quality)'], ops.avg(scored), `${at} avg quality`);
    }
    assert.equal(got.rows[2]!['count'], 0, 'an empty hour counts 0');
    assert.equal(got.rows[2]!['p95(metrics/duration_ns)'], null, 'and measures nothing');

    // The same numbers from the library's SQL over the same store.
    const bySql = await store.data.sql(
      'SELECT time_bucket(INTERVAL 1 HOUR, created_at) AS h, count(*) AS n, sum(num_input_tokens) AS tokens, ' +
        'quantile_cont(duration_ns, 0.95) AS p95 FROM spans WHERE run_id = $1 AND type = $2 GROUP BY ALL ORDER BY h',
      [logStreamId, 'llm'],
    );
    const nonEmpty = got.rows.filter((r) => r['count'] !== 0);
    assert.equal(bySql.length, nonEmpty.length);
    bySql.forEach((s, i) => {
      assert.equal(Number(s['n']), nonEmpty[i]!['count']);
      near(nonEmpty[i]!['tokens_in'], Number(s['tokens']), 'tokens as sql sums them');
      near(nonEmpty[i]!['p95(metrics/duration_ns)'], Number(s['p95']), 'p95 as sql computes it');
    });
  });

  test(`groups by model and by tags, computed cost by model, auto buckets (${where})`, async (t) => {
    const { store, projectId, logStreamId } = await seeded(t, sealHalf);
    const llms = Array.from({ length: N }, (_, i) => llmOf(i));
    const byModel = await store.aggregate('span', projectId, {
      log_stream_id: logStreamId,
      filters: [{ type: 'text', column_id: 'type', operator: 'eq', value: 'llm' }],
      group_by: ['model'],
      measures: [{ op: 'count' }, { op: 'sum', column_id: 'metrics/cost', alias: 'cost' }],
    } as never);
    assert.equal(byModel.groups_truncated, false);
    assert.deepEqual(new Set(byModel.rows.map((r) => r['model'])), new Set(MODELS));
    for (const row of byModel.rows) {
      const mine = llms.filter((l) => l.model === row['model']);
      assert.equal(row['count'], mine.length);
      const costs = mine.flatMap((l) => {
        const c = withComputedCost('llm', l.model, { num_input_tokens: l.input, num_output_tokens: l.output })['cost'];
        return typeof c === 'number' ? [c] : [];
      });
      near(row['cost'], ops.sum(costs), `cost of ${String(row['model'])}`);
    }
    assert.equal(byModel.rows.find((r) => r['model'] === 'in-house-7b')!['cost'], null, 'a model without a price has no cost');
    const sqlCost = await store.data.sql('SELECT model, sum(cost) AS c FROM spans WHERE run_id = $1 AND type = $2 GROUP BY ALL', [
      logStreamId,
      'llm',
    ]);
    for (const s of sqlCost)
      near(byModel.rows.find((r) => r['model'] === s['model'])!['cost'], s['c'] === null ? null : Number(s['c']), `sql cost ${s['model']}`);

    const byTag = await store.aggregate('span', projectId, {
      log_stream_id: logStreamId,
      group_by: ['tags', { column_id: 'created_at', interval: 'auto' }],
      measures: [{ op: 'count' }],
    } as never);
    assert.equal(byTag.interval, '5m', 'auto: the narrowest width giving at most 300 buckets over 5 h 19 min');
    const total = (tag: string | null) => byTag.rows.filter((r) => r['tags'] === tag).reduce((a, r) => a + Number(r['count']), 0);
    assert.equal(total('a'), llms.filter((l) => l.tags.includes('a')).length, 'a record counts once per distinct tag');
    assert.equal(total('b'), llms.filter((l) => l.tags.includes('b')).length);
    assert.equal(total(null), llms.filter((l) => l.tags.length === 0).length + N, 'untagged llm spans and every tool span');
    const buckets = new Set(byTag.rows.map((r) => r['created_at']));
    assert.equal(buckets.size, 64, 'every 5-minute bucket from 00:00 to 05:15, each with every tag group');
    assert.equal(byTag.rows.length, buckets.size * 3);
  });

  test(`auto buckets span the live records: deleted ones do not stretch the range (${where})`, async (t) => {
    const { store, projectId, logStreamId } = await seeded(t, sealHalf);
    const first = ['t0', 't1', 't2', 't3', 't4'];
    const gone = await store.records.delete('trace', projectId, {
      log_stream_id: logStreamId,
      filters: [{ type: 'text', column_id: 'name', operator: 'one_of', value: first }],
    } as never);
    assert.equal(gone.deleted, first.length * 3, 'each trace with its two spans');
    for (const level of ['trace', 'span'] as const) {
      const got = await store.aggregate(level, projectId, {
        log_stream_id: logStreamId,
        group_by: [{ column_id: 'created_at', interval: 'auto' }],
        measures: [{ op: 'count' }],
      } as never);
      assert.equal(got.interval, '5m', `${level}: 5 h 15 min of live records`);
      assert.equal(got.rows[0]!['created_at'], new Date(BASE + 5 * 60_000).toISOString(), `${level}: from the first live record`);
      assert.ok(Number(got.rows[0]!['count']) > 0, `${level}: the first bucket holds records`);
      const total = got.rows.reduce((a, r) => a + Number(r['count']), 0);
      assert.equal(total, (level === 'trace' ? 1 : 2) * (N - first.length));
    }
  });

  test(`trace-level metrics read the value search shows, filters apply (${where})`, async (t) => {
    const { store, projectId, logStreamId } = await seeded(t, sealHalf);
    const since = new Date(BASE + 60 * 60_000).toISOString();
    const filters = [{ type: 'date', column_id: 'created_at', operator: 'gte', value: since }];
    const got = await store.aggregate('trace', projectId, {
      log_stream_id: logStreamId,
      filters,
      measures: [
        { op: 'count' },
        { op: 'sum', column_id: 'metrics/num_input_tokens', alias: 'tokens' },
        { op: 'max', column_id: 'metrics/duration_ns', alias: 'slowest' },
      ],
    } as never);
    const shown = await store.partialSearch('trace', projectId, {
      log_stream_id: logStreamId,
      filters,
      pagination: { starting_token: 0, limit: 1000 },
      select_columns: { column_ids: ['id'], metric_columns_names: ['num_input_tokens', 'duration_ns'] },
    } as never);
    const value = (r: Rec, m: string) => r['metric_info']?.[m]?.value as number | undefined;
    const seen = shown.records as Rec[];
    assert.equal(got.rows[0]!['count'], seen.length);
    const llms = Array.from({ length: N }, (_, i) => llmOf(i)).filter((l) => l.at >= Date.parse(since));
    assert.equal(seen.length, llms.length);
    assert.equal(got.rows[0]!['tokens'], ops.sum(llms.map((l) => l.input)), 'each trace rolls up its llm span tokens');
    assert.equal(got.rows[0]!['tokens'], ops.sum(seen.map((r) => value(r, 'num_input_tokens') ?? 0)), 'as search shows them');
    assert.equal(got.rows[0]!['slowest'], Math.max(...seen.map((r) => value(r, 'duration_ns') ?? 0)));
  });
}
