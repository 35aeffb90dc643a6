// Runs side by side: the aggregate questions asked of each run and the measures compared (DOM-free:
// unit-tested under Node). Every run gets the same questions; differences are against the first run.
import type { AggAnswer } from './overview.js';

export interface Measure {
  key: string;
  label: string;
  /** How a value reads: a count, a duration in ns, a percentage, USD or a plain number. */
  unit: 'count' | 'ns' | 'percent' | 'usd' | 'number';
  /** Whether a larger value is worse (latency, errors, cost): the difference shows red when it grows. */
  higherIsWorse: boolean | null;
}

export const FIXED_MEASURES: Measure[] = [
  { key: 'traces', label: 'Traces', unit: 'count', higherIsWorse: null },
  { key: 'p50', label: 'Latency p50', unit: 'ns', higherIsWorse: true },
  { key: 'p95', label: 'Latency p95', unit: 'ns', higherIsWorse: true },
  { key: 'error_rate', label: 'Error rate (spans)', unit: 'percent', higherIsWorse: true },
  { key: 'tokens', label: 'Tokens (llm spans)', unit: 'count', higherIsWorse: true },
  { key: 'cost', label: 'Cost (llm spans)', unit: 'usd', higherIsWorse: true },
];

export const metricMeasure = (name: string): Measure => ({
  key: `metric:${name}`,
  label: `Average ${name}`,
  unit: 'number',
  higherIsWorse: null,
});

export function tracesBody(run: Record<string, string>, metrics: string[]): Record<string, unknown> {
  return {
    ...run,
    measures: [
      { op: 'count', alias: 'traces' },
      { op: 'p50', column_id: 'metrics/duration_ns', alias: 'p50' },
      { op: 'p95', column_id: 'metrics/duration_ns', alias: 'p95' },
      ...metrics.map((m) => ({ op: 'avg', column_id: `metrics/${m}`, alias: `metric:${m}` })),
    ],
  };
}

export function spansBody(run: Record<string, string>): Record<string, unknown> {
  const llm = [{ type: 'text', column_id: 'type', operator: 'eq', value: 'llm' }];
  return {
    ...run,
    measures: [
      { op: 'count', alias: 'spans' },
      { op: 'count', alias: 'errors', filters: [{ type: 'number', column_id: 'status_code', operator: 'gte', value: 400 }] },
      { op: 'sum', column_id: 'metrics/num_input_tokens', alias: 'input', filters: llm },
      { op: 'sum', column_id: 'metrics/num_output_tokens', alias: 'output', filters: llm },
      { op: 'sum', column_id: 'metrics/cost', alias: 'cost', filters: llm },
    ],
  };
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** One run's values by measure key, from its two answers. */
export function runValues(traces: AggAnswer, spans: AggAnswer, metrics: string[]): Record<string, number | null> {
  const t = traces.rows[0] ?? {};
  const s = spans.rows[0] ?? {};
  const n = num(s['spans']) ?? 0;
  const input = num(s['input']);
  const output = num(s['output']);
  return {
    traces: num(t['traces']) ?? 0,
    p50: num(t['p50']),
    p95: num(t['p95']),
    error_rate: n > 0 ? (100 * (num(s['errors']) ?? 0)) / n : null,
    tokens: input === null && output === null ? null : (input ?? 0) + (output ?? 0),
    cost: num(s['cost']),
    ...Object.fromEntries(metrics.map((m) => [`metric:${m}`, num(t[`metric:${m}`])])),
  };
}

/** The change from the first run's value, as a fraction (null where either is missing or the base is 0). */
export function change(base: number | null, value: number | null): number | null {
  if (base === null || value === null || base === 0) return null;
  return (value - base) / Math.abs(base);
}
