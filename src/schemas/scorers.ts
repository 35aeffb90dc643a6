// Wire shapes of the scorer catalog: the Scorer item and its parts, the list request with every
// filter and sort the hosted service accepts, and the bodies that register, change and version a scorer.
import { Type, type Static } from '../vendor/typebox.js';
import { Nullable, Uuid } from './common.js';
import { ScorerRule } from './scoring.js';
import {
  ActionsQuery,
  BoolFilter,
  CollectionFilter,
  ColumnSort,
  DateFilter,
  EnumFilter,
  IdFilter,
  PageQueryFields,
  PageResponseFields,
  TEXT_OPERATORS,
  TextFilter,
} from './list-filters.js';

export const SCORER_TYPES = ['llm', 'code', 'luna', 'preset'] as const;
export const REGISTERED_SCORER_TYPES = ['llm', 'code'] as const;
export const MODEL_TYPES = ['slm', 'llm', 'code'] as const;
export const OUTPUT_TYPES = [
  'boolean',
  'categorical',
  'count',
  'discrete',
  'freeform',
  'percentage',
  'multilabel',
  'retrieved_chunk_list_boolean',
  'boolean_multilabel',
] as const;
export const INPUT_TYPES = [
  'basic',
  'llm_spans',
  'retriever_spans',
  'sessions_normalized',
  'sessions_trace_io_only',
  'tool_spans',
  'trace_input_only',
  'trace_io_only',
  'trace_normalized',
  'trace_output_only',
  'agent_spans',
  'workflow_spans',
] as const;
export const MULTIMODAL_CAPABILITIES = ['vision', 'audio'] as const;
export const ROLL_UP_METHODS = ['average', 'sum', 'max', 'min', 'category_count', 'percentage_true', 'percentage_false'] as const;
/** A roll-up config holds methods of one family: numbers, or categories (booleans count as categories). */
export const NUMERIC_ROLL_UPS = ['average', 'sum', 'max', 'min'] as const;
export const CATEGORICAL_ROLL_UPS = ['category_count', 'percentage_true', 'percentage_false'] as const;
export const PAYLOAD_FORMATS = ['query', 'response', 'pairwise', 'node_input_output'] as const;

const Strings = Type.Array(Type.String());

// ------------------------------------------------------------------ parts of a scorer

export const NodeFilter = Type.Union([
  Type.Object({
    name: Type.Literal('node_name'),
    operator: Type.Enum([...TEXT_OPERATORS]),
    value: Type.Union([Type.String(), Strings]),
    case_sensitive: Type.Optional(Type.Boolean({ default: true })),
  }),
  Type.Object({
    name: Type.Literal('metadata'),
    operator: Type.Enum(['one_of', 'not_in', 'eq', 'ne']),
    key: Type.String(),
    value: Type.Union([Type.String(), Strings]),
  }),
  Type.Object({
    name: Type.Literal('modality'),
    operator: Type.Enum(['eq', 'ne', 'one_of', 'not_in']),
    value: Type.Union([Type.String(), Strings]),
  }),
]);

export type NodeFilter = Static<typeof NodeFilter>;

export const ScorerInvocation = Type.Object({
  required_inputs: Type.Optional(Type.Array(Type.Enum(['query', 'response']), { uniqueItems: true })),
  payload_format: Type.Enum([...PAYLOAD_FORMATS]),
});

export const ScorerDefaults = Type.Object({
  model_name: Type.Optional(Nullable(Type.String())),
  num_judges: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  filters: Type.Optional(Nullable(Type.Array(NodeFilter))),
  scoreable_node_types: Type.Optional(Nullable(Strings)),
  cot_enabled: Type.Optional(Nullable(Type.Boolean())),
  output_type: Type.Optional(Nullable(Type.Enum([...OUTPUT_TYPES]))),
  input_type: Type.Optional(Nullable(Type.Enum([...INPUT_TYPES]))),
  invocation: Type.Optional(Nullable(ScorerInvocation)),
});

export const RollUpConfig = Type.Object({ roll_up_methods: Type.Array(Type.Enum([...ROLL_UP_METHODS]), { minItems: 1 }) });

const Color = Type.String({ minLength: 1 });
const NumericPicker = Type.Object({
  type: Type.Literal('numeric'),
  constraints: Type.Array(
    Type.Object({
      color: Color,
      operator: Type.Enum(['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'between']),
      value: Type.Union([Type.Number(), Type.Array(Type.Number(), { minItems: 2, maxItems: 2 })]),
    }),
    { minItems: 1 },
  ),
});
const BooleanPicker = Type.Object({
  type: Type.Literal('boolean'),
  constraints: Type.Array(Type.Object({ color: Color, operator: Type.Literal('eq'), value: Type.Boolean() }), { minItems: 1 }),
});
const CategoryConstraint = Type.Object({
  color: Color,
  operator: Type.Enum(['eq', 'one_of']),
  value: Type.Union([Type.String(), Strings]),
});
const CategoricalPicker = Type.Object({ type: Type.Literal('categorical'), constraints: Type.Array(CategoryConstraint, { minItems: 1 }) });
const MultiLabelPicker = Type.Object({ type: Type.Literal('multi_label'), constraints: Type.Array(CategoryConstraint, { minItems: 1 }) });

export const ColorPicker = Type.Union([NumericPicker, BooleanPicker, CategoricalPicker, MultiLabelPicker]);
export type ColorPicker = Static<typeof ColorPicker>;
export const NumericColorPicker = NumericPicker;

export const GeneratedScorer = Type.Object({
  id: Uuid,
  name: Type.String(),
  chain_poll_template: Type.Object({ template: Type.String() }, { additionalProperties: true }),
  instructions: Nullable(Type.String()),
  user_prompt: Nullable(Type.String()),
});

export const RegisteredScorer = Type.Object({
  id: Uuid,
  name: Type.String(),
  code_sha256: Nullable(Type.String()),
  code_length: Type.Integer(),
});

export const ScorerVersion = Type.Object({
  id: Uuid,
  version: Type.Integer(),
  scorer_id: Uuid,
  generated_scorer: Nullable(GeneratedScorer),
  registered_scorer: Nullable(RegisteredScorer),
  finetuned_scorer: Nullable(Type.Object({}, { additionalProperties: true })),
  model_name: Nullable(Type.String()),
  num_judges: Nullable(Type.Integer()),
  cot_enabled: Nullable(Type.Boolean()),
  scoreable_node_types: Type.Optional(Nullable(Strings)),
  output_type: Type.Optional(Nullable(Type.String())),
  input_type: Type.Optional(Nullable(Type.String())),
  created_at: Type.Optional(Nullable(Type.String())),
  created_by: Type.Optional(Nullable(Type.String())),
  /** tracelake: the declarative check a code scorer registered over HTTP runs (scorers.md). */
  rule: Type.Optional(Nullable(ScorerRule)),
  /** tracelake: a code scorer defined by the library in-process (store.scorers.define): its function's fingerprint. */
  library_fingerprint: Type.Optional(Nullable(Type.String())),
});
export type ScorerVersion = Static<typeof ScorerVersion>;

const Permission = Type.Object({ action: Type.String(), allowed: Type.Boolean(), message: Type.Optional(Nullable(Type.String())) });
const UserSummary = Nullable(
  Type.Object({ id: Type.String(), email: Type.String(), first_name: Nullable(Type.String()), last_name: Nullable(Type.String()) }),
);
export const ScopeProject = Type.Object({ id: Uuid, name: Type.String() });

/** The API's Scorer item (required: id, name, scorer_type, tags). */
export const Scorer = Type.Object({
  id: Uuid,
  permissions: Type.Array(Permission),
  name: Type.String(),
  label: Nullable(Type.String()),
  description: Nullable(Type.String()),
  tags: Strings,
  scorer_type: Type.Enum([...SCORER_TYPES]),
  model_type: Nullable(Type.Enum([...MODEL_TYPES])),
  output_type: Nullable(Type.Enum([...OUTPUT_TYPES])),
  input_type: Nullable(Type.Enum([...INPUT_TYPES])),
  scoreable_node_types: Nullable(Strings),
  multimodal_capabilities: Nullable(Strings),
  required_scorers: Nullable(Strings),
  required_metric_ids: Nullable(Strings),
  deprecated: Nullable(Type.Boolean()),
  ground_truth: Nullable(Type.Boolean()),
  user_prompt: Nullable(Type.String()),
  roll_up_method: Nullable(Type.Enum([...ROLL_UP_METHODS])),
  roll_up_config: Nullable(RollUpConfig),
  included_fields: Strings,
  defaults: Nullable(ScorerDefaults),
  invocation: Nullable(ScorerInvocation),
  metric_color_picker_config: Nullable(ColorPicker),
  color_threshold_config: Nullable(NumericPicker),
  metric_name: Nullable(Type.String()),
  is_global: Type.Boolean(),
  scope_projects: Type.Array(ScopeProject),
  created_by: Nullable(Type.String()),
  created_by_user: Type.Optional(UserSummary),
  created_at: Nullable(Type.String()),
  updated_at: Nullable(Type.String()),
  default_version_id: Nullable(Uuid),
  latest_version: Nullable(ScorerVersion),
  default_version: Nullable(ScorerVersion),
});
export type Scorer = Static<typeof Scorer>;

// ------------------------------------------------------------------ list scorers

const LabelFilter = Type.Object({
  name: Type.Literal('label'),
  operator: Type.Enum([...TEXT_OPERATORS]),
  value: Type.Union([Type.String(), Strings]),
  case_sensitive: Type.Optional(Type.Boolean({ default: true })),
  strict: Type.Optional(
    Type.Boolean({ default: true, description: 'false: compare labels loosely (case, accents, spacing, - and _ ignored)' }),
  ),
});

export const ScorerFilter = Type.Union([
  TextFilter('name', false),
  EnumFilter('scorer_type', SCORER_TYPES),
  EnumFilter('model_type', MODEL_TYPES),
  CollectionFilter('tags'),
  IdFilter('creator'),
  DateFilter('created_at'),
  DateFilter('updated_at'),
  LabelFilter,
  CollectionFilter('scoreable_node_types'),
  CollectionFilter('multimodal_capabilities'),
  IdFilter('id'),
  BoolFilter('is_global'),
  Type.Object({
    name: Type.Literal('scope_projects'),
    project_ids: Type.Array(Uuid, { minItems: 1, maxItems: 1000 }),
    include_global: Type.Optional(Type.Boolean({ default: false })),
  }),
  Type.Object({ name: Type.Literal('exclude_slm_scorers') }),
  Type.Object({ name: Type.Literal('exclude_multimodal_scorers') }),
]);
export type ScorerFilter = Static<typeof ScorerFilter>;

function UuidSort<N extends string>(name: N) {
  return Type.Object({
    name: Type.Literal(name),
    ascending: Type.Optional(Type.Boolean({ default: true })),
    sort_type: Type.Optional(Type.Literal('custom_uuid')),
    value: Uuid,
  });
}

export const ScorerSort = Type.Union([
  ColumnSort('name'),
  ColumnSort('updated_at'),
  UuidSort('enabled_in_run'),
  UuidSort('enabled_in_playground'),
]);
export type ScorerSort = Static<typeof ScorerSort>;

export const SCORER_ACTION_VALUES = ['update', 'delete', 'share', 'export', 'autotune_apply'] as const;

export const ListScorersQuery = Type.Object({ actions: ActionsQuery(SCORER_ACTION_VALUES), ...PageQueryFields });
export const ListScorersBody = Type.Object({
  filters: Type.Optional(Nullable(Type.Array(ScorerFilter))),
  sort: Type.Optional(Nullable(ScorerSort)),
});
export type ListScorersBody = Static<typeof ListScorersBody>;
export const ListScorersResponse = Type.Object({ ...PageResponseFields, scorers: Type.Array(Scorer) });
export type ListScorersResponse = Static<typeof ListScorersResponse>;

// ------------------------------------------------------------------ register, change, version

/** What a version of a registered scorer carries: the judge prompt (llm) or the code (code). */
export const ScorerVersionInput = Type.Object({
  model_name: Type.Optional(Nullable(Type.String())),
  num_judges: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  cot_enabled: Type.Optional(Nullable(Type.Boolean())),
  scoreable_node_types: Type.Optional(Nullable(Strings)),
  output_type: Type.Optional(Nullable(Type.Enum([...OUTPUT_TYPES]))),
  input_type: Type.Optional(Nullable(Type.Enum([...INPUT_TYPES]))),
  user_prompt: Type.Optional(Nullable(Type.String())),
  instructions: Type.Optional(Nullable(Type.String())),
  chain_poll_template: Type.Optional(Nullable(Type.String())),
  code: Type.Optional(Nullable(Type.String())),
  /** tracelake: a declarative check for a code scorer (kind, field, reference, parameters: scorers.md). */
  rule: Type.Optional(Nullable(ScorerRule)),
  /** Make the new version the default one (otherwise the default stays where it was). */
  set_as_default: Type.Optional(Type.Boolean({ default: false })),
});
export type ScorerVersionInput = Static<typeof ScorerVersionInput>;

const ScopeProjectInput = Type.Object({ id: Uuid, name: Type.Optional(Nullable(Type.String())) });

const editableFields = {
  label: Type.Optional(Nullable(Type.String())),
  description: Type.Optional(Nullable(Type.String())),
  tags: Type.Optional(Nullable(Strings)),
  model_type: Type.Optional(Nullable(Type.Enum([...MODEL_TYPES]))),
  output_type: Type.Optional(Nullable(Type.Enum([...OUTPUT_TYPES]))),
  input_type: Type.Optional(Nullable(Type.Enum([...INPUT_TYPES]))),
  scoreable_node_types: Type.Optional(Nullable(Strings)),
  multimodal_capabilities: Type.Optional(Nullable(Type.Array(Type.Enum([...MULTIMODAL_CAPABILITIES])))),
  required_scorers: Type.Optional(Nullable(Strings)),
  ground_truth: Type.Optional(Nullable(Type.Boolean())),
  user_prompt: Type.Optional(Nullable(Type.String())),
  roll_up_method: Type.Optional(Nullable(Type.Enum([...ROLL_UP_METHODS]))),
  roll_up_config: Type.Optional(Nullable(RollUpConfig)),
  included_fields: Type.Optional(Nullable(Strings)),
  defaults: Type.Optional(Nullable(ScorerDefaults)),
  invocation: Type.Optional(Nullable(ScorerInvocation)),
  metric_color_picker_config: Type.Optional(Nullable(ColorPicker)),
  color_threshold_config: Type.Optional(Nullable(NumericPicker)),
  metric_name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255 }))),
  is_global: Type.Optional(Nullable(Type.Boolean())),
  scope_projects: Type.Optional(Nullable(Type.Array(ScopeProjectInput, { maxItems: 1000 }))),
};

export const CreateScorerBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  scorer_type: Type.Optional(Type.Enum([...REGISTERED_SCORER_TYPES], { default: 'llm' })),
  ...editableFields,
  /** The first version; without it version 1 is built from `defaults` and `user_prompt`. */
  version: Type.Optional(Nullable(ScorerVersionInput)),
});
export type CreateScorerBody = Static<typeof CreateScorerBody>;

export const UpdateScorerBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  ...editableFields,
  deprecated: Type.Optional(Nullable(Type.Boolean())),
  default_version_id: Type.Optional(Uuid),
  /** The version number to make the default (an alternative to default_version_id). */
  default_version: Type.Optional(Type.Integer({ minimum: 1 })),
});
export type UpdateScorerBody = Static<typeof UpdateScorerBody>;

export const ScorerIdParams = Type.Object({ scorer_id: Uuid });
export const ScorerActionsQuery = Type.Object({ actions: ActionsQuery(SCORER_ACTION_VALUES) });
/** A version as GET /scorers/{id}/versions shows it: with the code of a code scorer. */
export const ScorerVersionWithCode = Type.Object({ ...ScorerVersion.properties, code: Type.Optional(Nullable(Type.String())) });
