// Run scorer settings: which scorers are enabled in a run (log stream, experiment or metrics-testing
// run), as the official clients read and write them at /projects/{project_id}/runs/{run_id}/scorer-settings.
import { Type, type Static } from '../vendor/typebox.js';
import { Nullable, Uuid } from './common.js';
import { INPUT_TYPES, OUTPUT_TYPES, ScorerDefaults, ScorerVersion } from './scorers.js';

const knobs = {
  model_name: Type.Optional(Nullable(Type.String())),
  num_judges: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  filters: ScorerDefaults.properties.filters,
  scoreable_node_types: Type.Optional(Nullable(Type.Array(Type.String()))),
  cot_enabled: Type.Optional(Nullable(Type.Boolean())),
  output_type: Type.Optional(Nullable(Type.Enum([...OUTPUT_TYPES]))),
  input_type: Type.Optional(Nullable(Type.Enum([...INPUT_TYPES]))),
  /** tracelake: the share of the records it applies to that online scoring scores (0-1, default 1). */
  sample_rate: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1 }))),
};

/** One enabled scorer: its id (or, as a convenience here, its unique name) and optional knobs. */
export const ScorerConfigInput = Type.Object({
  id: Type.Optional(Uuid),
  name: Type.Optional(Type.String({ minLength: 1 })),
  ...knobs,
  /** Pin a version (by id or number); the scorer's default version runs otherwise. */
  scorer_version: Type.Optional(Nullable(Type.Object({ id: Type.Optional(Uuid), version: Type.Optional(Type.Integer({ minimum: 1 })) }))),
});
export type ScorerConfigInput = Static<typeof ScorerConfigInput>;

export const RunScorerSettingsBody = Type.Object({
  run_id: Type.Optional(Uuid),
  scorers: Type.Array(ScorerConfigInput, { maxItems: 1000 }),
  segment_filters: Type.Optional(Nullable(Type.Array(Type.Unknown()))),
});
export type RunScorerSettingsBody = Static<typeof RunScorerSettingsBody>;

export const ScorerConfig = Type.Object({
  id: Uuid,
  name: Type.String(),
  scorer_type: Type.String(),
  model_type: Nullable(Type.String()),
  metric_name: Nullable(Type.String()),
  model_name: Nullable(Type.String()),
  num_judges: Nullable(Type.Integer()),
  filters: Nullable(Type.Array(Type.Unknown())),
  scoreable_node_types: Nullable(Type.Array(Type.String())),
  cot_enabled: Nullable(Type.Boolean()),
  output_type: Nullable(Type.String()),
  input_type: Nullable(Type.String()),
  sample_rate: Type.Optional(Nullable(Type.Number())),
  scorer_version: Nullable(ScorerVersion),
});
export type ScorerConfig = Static<typeof ScorerConfig>;

export const RunScorerSettings = Type.Object({
  run_id: Uuid,
  scorers: Type.Array(ScorerConfig),
  segment_filters: Nullable(Type.Array(Type.Unknown())),
});
export type RunScorerSettings = Static<typeof RunScorerSettings>;

export const RunScorerSettingsParams = Type.Object({ project_id: Uuid, run_id: Uuid });
