// Wire shapes of scoring inside the store: declarative scorer rules (what a code scorer registered over
// HTTP may be: a kind of check with its field, reference and parameters, never code), the body of
// recompute_metrics as the official client sends it, and the job that reports a recompute's progress.
import { Type, type Static } from '../vendor/typebox.js';
import { Nullable, Uuid } from './common.js';
import { FilterTree, RecordFilter, SortClause } from './query.js';

export const RULE_KINDS = [
  'exact_match',
  'contains',
  'regex',
  'valid_json',
  'json_schema',
  'levenshtein',
  'bleu',
  'rouge',
  'tool_error',
  'threshold',
  'latency',
  'cost',
] as const;
export type RuleKind = (typeof RULE_KINDS)[number];

/**
 * A field of the record a rule reads: its input, output, reference answer (dataset_output), name,
 * status code, or one metric or metadata value by key.
 */
export const RULE_FIELD = '^(input|output|dataset_input|dataset_output|name|status_code|(metrics|user_metadata|dataset_metadata)\\..+)$';
const Field = Type.String({ pattern: RULE_FIELD, maxLength: 300 });

/**
 * A declarative scorer: `kind` and the parameters that kind takes (scorers.md lists which); every
 * other field is optional here and required by kind when the scorer is registered.
 */
export const ScorerRule = Type.Object(
  {
    kind: Type.Enum([...RULE_KINDS]),
    /** What is checked (default: output). */
    field: Type.Optional(Field),
    /** What it is compared with: another field (default for bleu, rouge, levenshtein, exact_match: dataset_output)... */
    reference: Type.Optional(Field),
    /** ...or a fixed text (exact_match, levenshtein), or the texts to look for (contains). */
    value: Type.Optional(
      Type.Union([Type.String({ maxLength: 100_000 }), Type.Array(Type.String({ maxLength: 10_000 }), { maxItems: 1000 })]),
    ),
    /** contains: whether any or all of the values must occur (default any). */
    match: Type.Optional(Type.Enum(['any', 'all'])),
    case_sensitive: Type.Optional(Type.Boolean()),
    /** exact_match: compare without leading and trailing white space (default true). */
    trim: Type.Optional(Type.Boolean()),
    /** regex: an RE2 pattern (linear time: no back-references or look-around). */
    pattern: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
    /** json_schema: the JSON Schema the field's JSON must satisfy. */
    schema: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true }), Type.Boolean()])),
    /** threshold, cost: inclusive bounds (1 within them, 0 outside). */
    min: Type.Optional(Type.Number()),
    max: Type.Optional(Type.Number()),
    /** latency: the most milliseconds metrics.duration_ns may take to score 1. */
    max_ms: Type.Optional(Type.Number({ minimum: 0 })),
    /** cost: the metric holding the cost (default cost). */
    metric: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  },
  { additionalProperties: false },
);
export type ScorerRule = Static<typeof ScorerRule>;

/** POST /projects/{project_id}/recompute_metrics (also spelled recompute-metrics), as the official client sends it. */
export const RecomputeBody = Type.Object({
  scorer_ids: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 100 }),
  log_stream_id: Type.Optional(Nullable(Uuid)),
  experiment_id: Type.Optional(Nullable(Uuid)),
  metrics_testing_id: Type.Optional(Nullable(Uuid)),
  filters: Type.Optional(Nullable(Type.Array(RecordFilter))),
  filter_tree: Type.Optional(Nullable(FilterTree)),
  sort: Type.Optional(Nullable(SortClause)),
  starting_token: Type.Optional(Type.Integer({ minimum: 0 })),
  limit: Type.Optional(Type.Integer({ minimum: 1 })),
  previous_last_row_id: Type.Optional(Nullable(Type.String())),
  truncate_fields: Type.Optional(Type.Boolean()),
  /** tracelake: also replace values the client logged under the same metric name (default false). */
  overwrite_logged: Type.Optional(Type.Boolean()),
});
export type RecomputeBody = Static<typeof RecomputeBody>;

export const JOB_STATUSES = ['pending', 'processing', 'completed', 'failed'] as const;

/** A recompute job as GET /jobs/{job_id} shows it (the hosted service's JobDB fields, and tracelake's counts). */
export const ScoreJob = Type.Object({
  id: Uuid,
  job_name: Type.String(),
  project_id: Uuid,
  run_id: Uuid,
  status: Type.Enum([...JOB_STATUSES]),
  created_at: Type.String(),
  updated_at: Type.String(),
  processing_started: Nullable(Type.String()),
  completed_at: Nullable(Type.String()),
  failed_at: Nullable(Type.String()),
  retries: Type.Integer(),
  request_data: Type.Record(Type.String(), Type.Unknown()),
  error_message: Nullable(Type.String()),
  progress_message: Nullable(Type.String()),
  steps_completed: Type.Integer(),
  steps_total: Type.Integer(),
  progress_percent: Type.Number(),
  /** Records by outcome: success, failed, error, not_applicable, not_computed, and skipped (a value the client logged). */
  counts: Type.Record(Type.String(), Type.Integer()),
});
export type ScoreJob = Static<typeof ScoreJob>;

export const JobIdParams = Type.Object({ job_id: Uuid });
