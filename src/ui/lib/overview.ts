// The overview's questions to the aggregate API and the series its charts draw (DOM-free: unit-tested
// under Node). One first call settles the buckets (the traces over time, `auto` width); every other
// call asks for the same width over the same bounds, so all charts share their buckets.
import type { FilterTree } from './filters.js';
import type { TimeRange } from './routes.js';

export const WIDTH_MS: Record<string, number> = { '1m': 60_000, '5m': 300_000, '1h': 3_600_000, '1d': 86_400_000 };
const SPAN_MS = { hour: 3_600_000, day: 86_400_000, week: 7 * 86_400_000 };

/** Metrics every overview draws in its own charts, not as scorer metrics. */
export const BUILT_IN_METRICS = new Set([
  'duration_ns',
  'num_input_tokens',
  'num_output_tokens',
  'num_total_tokens',
  'num_reasoning_tokens',
  'num_cached_input_tokens',
  'time_to_first_token_ns',
  'cost',
]);

export type AggRow = Record<string, unknown>;
export interface AggAnswer {
  rows: AggRow[];
  interval?: string;
}

const dateLeaf = (operator: string, value: string): FilterTree => ({ filter: { type: 'date', column_id: 'created_at', operator, value } });

/** created_at bounds of a range as filters (none for all time); `now` in ms. */
export function rangeFilters(range: TimeRange, now: number): FilterTree[] {
  if (range.kind === 'all') return [];
  if (range.kind === 'custom')
    return [dateLeaf('gte', new Date(range.from).toISOString()), dateLeaf('lt', new Date(range.to).toISOString())];
  return [dateLeaf('gte', new Date(now - SPAN_MS[range.span]).toISOString()), dateLeaf('lt', new Date(now).toISOString())];
}

export const andOf = (leaves: FilterTree[]): FilterTree | null =>
  leaves.length === 0 ? null : leaves.length === 1 ? leaves[0]! : { and: leaves };

/** The first call: traces per bucket with their latency percentiles. */
export function tracesBody(run: Record<string, string>, filters: FilterTree[]): Record<string, unknown> {
  const tree = andOf(filters);
  return {
    ...run,
    ...(tree ? { filter_tree: tree } : {}),
    group_by: [{ column_id: 'created_at', interval: 'auto' }],
    measures: [
      { op: 'count', alias: 'traces' },
      { op: 'p50', column_id: 'metrics/duration_ns', alias: 'p50' },
      { op: 'p95', column_id: 'metrics/duration_ns', alias: 'p95' },
      { op: 'p99', column_id: 'metrics/duration_ns', alias: 'p99' },
    ],
  };
}

/** Filters holding exactly the buckets the first answer has: later calls get the same buckets. */
export function bucketFilters(answer: AggAnswer): FilterTree[] {
  const first = answer.rows[0]?.['created_at'];
  const last = answer.rows[answer.rows.length - 1]?.['created_at'];
  const width = WIDTH_MS[answer.interval ?? ''];
  if (typeof first !== 'string' || typeof last !== 'string' || width === undefined) return [];
  return [dateLeaf('gte', first), dateLeaf('lt', new Date(Date.parse(last) + width).toISOString())];
}

/** Spans per bucket with errors among them (status code 400 and up). */
export function errorsBody(run: Record<string, string>, filters: FilterTree[], interval: string): Record<string, unknown> {
  return {
    ...run,
    filter_tree: andOf(filters),
    group_by: [{ column_id: 'created_at', interval }],
    measures: [
      { op: 'count', alias: 'spans' },
      { op: 'count', alias: 'errors', filters: [{ type: 'number', column_id: 'status_code', operator: 'gte', value: 400 }] },
    ],
  };
}

/** llm spans' tokens and cost per bucket and model. */
export function modelsBody(run: Record<string, string>, filters: FilterTree[], interval: string): Record<string, unknown> {
  return {
    ...run,
    filter_tree: andOf([...filters, { filter: { type: 'text', column_id: 'type', operator: 'eq', value: 'llm' } }]),
    group_by: [{ column_id: 'created_at', interval }, 'model'],
    measures: [
      { op: 'sum', column_id: 'metrics/num_input_tokens', alias: 'input' },
      { op: 'sum', column_id: 'metrics/num_output_tokens', alias: 'output' },
      { op: 'sum', column_id: 'metrics/cost', alias: 'cost' },
    ],
    limit: 8,
  };
}

/** Traces' averages of scorer metrics per bucket, or (no interval) their least and greatest values over the whole range. */
export function metricsBody(run: Record<string, string>, filters: FilterTree[], interval: string | null, metrics: string[]) {
  return {
    ...run,
    filter_tree: andOf(filters),
    ...(interval ? { group_by: [{ column_id: 'created_at', interval }] } : {}),
    measures: metrics.flatMap((m) =>
      interval
        ? [{ op: 'avg', column_id: `metrics/${m}`, alias: m }]
        : (['min', 'max'] as const).map((op) => ({ op, column_id: `metrics/${m}`, alias: `${op}:${m}` })),
    ),
  };
}

/** Bars of a metric's distribution. */
export const HISTOGRAM_BINS = 10;

/** A bar of a distribution: values from `lo` up to `hi` (the last bar holds `hi` too). */
export interface Bin {
  lo: number;
  hi: number;
  last: boolean;
}

/** `n` bins of equal width from min to max; one bin when every value is the same. */
export function binsOf(min: number, max: number, n = HISTOGRAM_BINS): Bin[] {
  if (!(max > min)) return [{ lo: min, hi: max, last: true }];
  const width = (max - min) / n;
  return Array.from({ length: n }, (_, k) => ({ lo: min + k * width, hi: k === n - 1 ? max : min + (k + 1) * width, last: k === n - 1 }));
}

/** The filters holding one bin's values of a metric. */
export function binFilters(metric: string, bin: Bin): Record<string, unknown>[] {
  const column_id = `metrics/${metric}`;
  return [
    { type: 'number', column_id, operator: 'gte', value: bin.lo },
    { type: 'number', column_id, operator: bin.last ? 'lte' : 'lt', value: bin.hi },
  ];
}

/** Traces per bin of a metric (measures b0, b1, ...): one count each, filtered to its bin. */
export function histogramBody(run: Record<string, string>, filters: FilterTree[], metric: string, bins: Bin[]): Record<string, unknown> {
  return {
    ...run,
    filter_tree: andOf(filters),
    measures: bins.map((b, k) => ({ op: 'count', alias: `b${k}`, filters: binFilters(metric, b) })),
  };
}

export interface Series {
  name: string;
  values: (number | null)[];
}

/** Buckets and one series per measure alias, from a time-grouped answer. */
export function seriesOf(answer: AggAnswer, aliases: string[]): { buckets: string[]; series: Series[] } {
  const buckets = answer.rows.map((r) => String(r['created_at']));
  return { buckets, series: aliases.map((a) => ({ name: a, values: answer.rows.map((r) => numberOr(r[a])) })) };
}

/** One series per model of a measure (or the sum of several), aligned on the given buckets. */
export function byModel(answer: AggAnswer, buckets: string[], measures: string[]): Series[] {
  const at = new Map(buckets.map((b, i) => [b, i]));
  const out = new Map<string, (number | null)[]>();
  for (const r of answer.rows) {
    const name = r['model'] === null || r['model'] === undefined ? '(no model)' : String(r['model']);
    let values = out.get(name);
    if (!values) {
      values = buckets.map(() => null);
      out.set(name, values);
    }
    const i = at.get(String(r['created_at']));
    if (i === undefined) continue;
    let sum: number | null = null;
    for (const m of measures) {
      const v = numberOr(r[m]);
      if (v !== null) sum = (sum ?? 0) + v;
    }
    values[i] = sum;
  }
  return [...out].map(([name, values]) => ({ name, values })).filter((s) => s.values.some((v) => v !== null && v !== 0));
}

/** Errors per 100 spans in each bucket (null where there were none). */
export function errorRate(answer: AggAnswer): (number | null)[] {
  return answer.rows.map((r) => {
    const n = Number(r['spans']);
    return n > 0 ? (100 * Number(r['errors'])) / n : null;
  });
}

const numberOr = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** A filter tree holding one bucket (its start up to the next), the table's filter after a click. */
export function bucketTree(bucket: string, interval: string, extra: FilterTree[] = []): FilterTree {
  const end = new Date(Date.parse(bucket) + (WIDTH_MS[interval] ?? 0)).toISOString();
  return { and: [dateLeaf('gte', new Date(bucket).toISOString()), dateLeaf('lt', end), ...extra] };
}

/** A chart's data as CSV: a bucket column and one column per series. */
export function toCsv(buckets: string[], series: Series[]): string {
  const q = (s: string) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  const lines = [['bucket', ...series.map((s) => q(s.name))].join(',')];
  buckets.forEach((b, i) => {
    lines.push([b, ...series.map((s) => (s.values[i] === null || s.values[i] === undefined ? '' : String(s.values[i])))].join(','));
  });
  return `${lines.join('\n')}\n`;
}
