// What one scorer makes of one record: a number (booleans as 0/1, fractions in 0-1) or a typed
// failure with its reason, and what every kind of scorer is run as: a batch of records in, one
// outcome per record out, in order.
import type { LogRow } from '../record/record.js';

export type Outcome =
  | { status: 'success'; value: number; explanation?: string; num_judges?: number; model_alias?: string }
  | { status: 'failed' | 'error' | 'not_applicable' | 'not_computed'; message: string };

/** A record as scorers see it: its stored fields (input and output in their logged shape, metrics, metadata...). */
export type ScorableRecord = Readonly<LogRow>;

export type Runner = (records: readonly ScorableRecord[]) => Promise<Outcome[]>;

export const notApplicable = (message: string): Outcome => ({ status: 'not_applicable', message });
export const failed = (message: string): Outcome => ({ status: 'failed', message });

/** A scorer function's answer as an outcome: a finite number, a boolean, or { value, explanation }. */
export function outcomeOf(answer: unknown): Outcome {
  if (typeof answer === 'boolean') return { status: 'success', value: answer ? 1 : 0 };
  if (typeof answer === 'number') {
    return Number.isFinite(answer) ? { status: 'success', value: answer } : failed(`the scorer returned ${answer}, not a finite number`);
  }
  if (answer === null || answer === undefined) return notApplicable('the scorer returned no value for this record');
  if (typeof answer === 'object' && 'value' in answer) {
    const { value, explanation } = answer as { value: unknown; explanation?: unknown };
    const inner = outcomeOf(value);
    if (inner.status === 'success' && typeof explanation === 'string') return { ...inner, explanation };
    return inner;
  }
  return failed(`the scorer returned ${typeof answer === 'string' ? JSON.stringify(answer.slice(0, 100)) : typeof answer}, not a number`);
}
