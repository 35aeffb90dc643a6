// What a metric on a record says about itself: its value and where it came from (logged, computed by a
// scorer, rolled up from the record's spans), or why it has none (the scorer failed, does not apply,
// cannot run here, or has not run yet). DOM-free: unit-tested under Node.
import { metricValue } from './format.js';
import type { RecordRow } from './types.js';

export type MetricStatusKind = 'success' | 'roll_up' | 'failed' | 'error' | 'not_applicable' | 'not_computed' | 'pending';

export interface MetricState {
  value: number | null;
  status: MetricStatusKind;
  /** The roll-up method when the value is the record's descendants' roll-up. */
  rollUp: string | null;
  /** A failure's reason, or why the metric does not apply or cannot be computed here. */
  message: string | null;
  explanation: string | null;
  /** The scorer version that produced the value (null when a client logged it or it is unknown). */
  version: number | null;
  judges: number | null;
  model: string | null;
}

const KNOWN = new Set<string>(['success', 'roll_up', 'failed', 'error', 'not_applicable', 'not_computed', 'pending']);

/** Short words for a status, as a cell or a badge shows them. */
export const STATUS_WORDS: Record<MetricStatusKind, string> = {
  success: 'scored',
  roll_up: 'roll-up',
  failed: 'failed',
  error: 'error',
  not_applicable: 'n/a',
  not_computed: 'not computed',
  pending: 'pending',
};

/** A sentence for a status without a value, for a tooltip or a screen reader. */
export const STATUS_MEANING: Record<MetricStatusKind, string> = {
  success: 'Computed',
  roll_up: 'Rolled up from its spans',
  failed: 'The scorer failed on this record',
  error: 'The scorer could not reach its judge',
  not_applicable: 'The scorer does not apply to this record',
  not_computed: 'The scorer cannot run on this server',
  pending: 'Waiting to be scored',
};

const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** The state of one metric on a record; null when the record says nothing about it. */
export function metricState(r: RecordRow, name: string): MetricState | null {
  const info = r.metric_info?.[name];
  const { value, rollUp } = metricValue(r, name);
  if (!info && value === null) return null;
  const raw = info?.status_type ?? 'success';
  const status: MetricStatusKind = KNOWN.has(raw) ? (raw as MetricStatusKind) : value !== null ? 'success' : 'failed';
  return {
    value,
    status: value !== null && rollUp === null && status !== 'roll_up' ? 'success' : status,
    rollUp,
    message: text(info?.message),
    explanation: text(info?.explanation),
    version: typeof info?.scorer_version === 'number' ? info.scorer_version : null,
    judges: typeof info?.num_judges === 'number' ? info.num_judges : null,
    model: text(info?.model_alias),
  };
}

/** Whether a value was computed by a scorer of the store (it carries a version or an explanation) rather than logged. */
export function isComputed(s: MetricState): boolean {
  return s.status === 'success' && (s.version !== null || s.explanation !== null || s.model !== null);
}

/** Where a metric's value came from, or what became of it, in a few words. */
export function metricSource(s: MetricState): string {
  if (s.status === 'roll_up') return `roll-up (${s.rollUp ?? 'roll-up'} of its spans)`;
  if (s.status === 'success') {
    if (!isComputed(s)) return 'logged';
    const parts = ['scorer'];
    if (s.version !== null) parts.push(`v${s.version}`);
    if (s.judges !== null) parts.push(`${s.judges} judge${s.judges === 1 ? '' : 's'}`);
    if (s.model) parts.push(s.model);
    return parts.join(', ');
  }
  return STATUS_WORDS[s.status];
}

/** A cell's tooltip for a metric: the status's meaning and its message or explanation. */
export function metricTitle(s: MetricState): string {
  const base =
    s.status === 'success'
      ? isComputed(s)
        ? `Computed by a scorer${s.version !== null ? ` (version ${s.version})` : ''}`
        : 'Logged'
      : s.status === 'roll_up'
        ? `${s.rollUp ?? 'roll-up'} over its spans`
        : STATUS_MEANING[s.status];
  const more = s.message ?? s.explanation;
  return more ? `${base}: ${more}` : base;
}
