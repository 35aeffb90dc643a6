// What a scorer that ran inside the store left on a record, beside the number. The `metrics` map holds
// only numbers (a success's value); everything else about each computed metric (its status, the
// scorer and version that produced it, an explanation or a failure's message) is kept in the record's
// `extra` JSON under `scores`, one entry per metric name. A metric a client logged has a value and no
// entry here: that is how the two are told apart (a client's value is never replaced unless asked).

/** Statuses a scorer's run leaves on a record (pending and roll_up are derived when a record is read). */
export const STORED_STATUSES = ['success', 'failed', 'error', 'not_applicable', 'not_computed'] as const;
export type StoredStatus = (typeof STORED_STATUSES)[number];

export interface StoredScore {
  status_type: StoredStatus;
  scorer_id: string;
  scorer_name: string;
  /** The version number that ran (null for a scorer without versions). */
  scorer_version: number | null;
  /** When it ran (ISO 8601). */
  scored_at: string;
  /** 'online' (scored as it arrived), or the id of the recompute job that scored it. */
  by: string;
  explanation?: string;
  /** Why a failure failed, or why a metric does not apply. */
  message?: string;
  /** LLM judges: the votes averaged, and the model that answered. */
  num_judges?: number;
  model_alias?: string;
}

export const SCORES_KEY = 'scores';

function isScore(v: unknown): v is StoredScore {
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as StoredScore).status_type === 'string' &&
    (STORED_STATUSES as readonly string[]).includes((v as StoredScore).status_type)
  );
}

/** The scores held in a record's `extra` (its parsed object or its JSON text); {} when it has none. */
export function storedScores(extra: unknown): Record<string, StoredScore> {
  let obj = extra;
  if (typeof obj === 'string') {
    try {
      obj = JSON.parse(obj);
    } catch {
      return {};
    }
  }
  if (typeof obj !== 'object' || obj === null) return {};
  const scores = (obj as Record<string, unknown>)[SCORES_KEY];
  if (typeof scores !== 'object' || scores === null || Array.isArray(scores)) return {};
  const out: Record<string, StoredScore> = {};
  for (const [k, v] of Object.entries(scores)) if (isScore(v)) out[k] = v;
  return out;
}

/** `extra` with these scores set (others kept); a new object, the old one untouched. */
export function withScores(extra: unknown, scores: Readonly<Record<string, StoredScore>>): Record<string, unknown> {
  const base = typeof extra === 'object' && extra !== null && !Array.isArray(extra) ? (extra as Record<string, unknown>) : {};
  const prior = storedScores(base);
  return { ...base, [SCORES_KEY]: { ...prior, ...scores } };
}

/** A stored score as the answers' MetricStatus (without the value, which comes from `metrics`). */
export function statusView(s: StoredScore, withMetadata: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = { status_type: s.status_type };
  if (s.explanation !== undefined) out['explanation'] = s.explanation;
  if (s.message !== undefined) out['message'] = s.message;
  if (s.num_judges !== undefined) {
    out['num_judges'] = s.num_judges;
    out['scorer_type'] = 'Plus';
  }
  if (s.model_alias !== undefined) out['model_alias'] = s.model_alias;
  out['scorer_version'] = s.scorer_version;
  if (withMetadata) out['metadata'] = { scorer_id: s.scorer_id, scorer_name: s.scorer_name, scored_at: s.scored_at, by: s.by };
  return out;
}
