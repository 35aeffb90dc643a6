// The last step of a search: the page's rows as the records the API returns (stored form to wire
// form, the metrics a selection asks for, each metric's status, own or rolled up, and child counts)
// and the page around them (tokens to go on).
import type { Row } from '../../db/database.js';
import type { Level, RollUpMethod } from '../columns.js';
import { storedToRecord } from '../../record/row-codec.js';
import { statusView, storedScores } from '../../record/scores.js';
import type { DerivedStatuses } from './derived-statuses.js';
import { pick } from './page-rows.js';
import type { Selection } from './page-shape.js';

export interface SearchResult {
  records: Record<string, unknown>[];
  num_rows: number;
  num_records: number;
  starting_token: number;
  limit: number;
  paginated: boolean;
  next_starting_token: number | null;
  last_row_id: string | null;
}

export interface PageParts {
  readonly level: Level;
  /** The page's rows (stored form), in order. */
  readonly rows: readonly Row[];
  /** Roll-ups by record id, then metric name. */
  readonly rolled: ReadonlyMap<string, ReadonlyMap<string, number>>;
  /** Child counts by record id, when asked for. */
  readonly counts: ReadonlyMap<string, number> | null;
  readonly selection: Selection | null;
  /** Whether the records are whole (a search) or partial (only the selection). */
  readonly whole: boolean;
  readonly withMetadata: boolean;
  readonly rollUp: (name: string) => RollUpMethod;
  /** Statuses of metrics a record should carry and does not yet (pending, not computed here), or null. */
  readonly derived?: DerivedStatuses;
  readonly start: number;
  readonly limit: number;
  /** Whether more records follow the page. */
  readonly more: boolean;
}

export function assemblePage(p: PageParts): SearchResult {
  const records = p.rows.map((row) => {
    const rec = storedToRecord(row, p.whole);
    if ('metrics' in rec) {
      const own = pick(rec['metrics'] as Record<string, unknown>, p.selection);
      rec['metrics'] = own;
      const scores = 'extra' in row ? storedScores(row['extra']) : {};
      const known = new Set([...Object.keys(rec['metrics'] as object), ...Object.keys(scores)]);
      const derived = p.derived?.(row, known) ?? null;
      rec['metric_info'] = metricStatus(
        own,
        pick(scores, p.selection) as typeof scores,
        derived === null ? {} : (pick(derived, p.selection) as Record<string, Record<string, unknown>>),
        pick(Object.fromEntries(p.rolled.get(String(row['id'])) ?? []), p.selection),
        p.withMetadata,
        p.rollUp,
      );
    }
    if (p.counts) rec[p.level === 'trace' ? 'num_spans' : 'num_traces'] = p.counts.get(String(row['id'])) ?? 0;
    return rec;
  });
  return {
    records,
    num_rows: records.length,
    num_records: records.length,
    starting_token: p.start,
    limit: p.limit,
    paginated: p.more,
    next_starting_token: p.more ? p.start + records.length : null,
    last_row_id: records.length > 0 ? String(records[records.length - 1]!['id']) : null,
  };
}

/**
 * `metrics` keeps exactly what was logged or scored; `metric_info` (the official client's
 * MetricStatus) reports each value, own ('success', with the scorer's explanation and version when a
 * scorer of the store computed it), a scorer's failure ('failed', 'error', 'not_applicable',
 * 'not_computed', with its message), a scorer still to run ('pending'), or, where the record has
 * none of those, the roll-up of its descendants' values ('roll_up').
 */
function metricStatus(
  own: Record<string, unknown>,
  scores: ReturnType<typeof storedScores>,
  derived: Record<string, Record<string, unknown>>,
  rolled: Record<string, unknown>,
  withMetadata: boolean,
  rollUp: (name: string) => RollUpMethod,
): Record<string, unknown> | null {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(own)) {
    const s = scores[k];
    if (s?.status_type === 'success') out[k] = { ...statusView(s, withMetadata), value: v };
    else out[k] = withMetadata ? { status_type: 'success', value: v, metadata: null } : { status_type: 'success', value: v };
  }
  for (const k of Object.keys(scores).sort()) {
    const s = scores[k]!;
    if (out[k] === undefined && s.status_type !== 'success') out[k] = statusView(s, withMetadata);
  }
  for (const k of Object.keys(derived).sort()) if (out[k] === undefined) out[k] = derived[k];
  // Rolled-up entries in name order, so the same record always reads the same.
  for (const k of Object.keys(rolled).sort())
    if (out[k] === undefined) out[k] = { status_type: 'roll_up', value: rolled[k], roll_up_method: rollUp(k) };
  return Object.keys(out).length > 0 ? out : null;
}
