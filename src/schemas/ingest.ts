// Ingest bodies: Log spans and Log traces (what the official client's logger sends), with every span
// kind the clients log as one recursive node shape. Kind-specific rules (llm input is a message list,
// ...) are checked by src/ingest, which names the exact path; unknown keys are ignored here.
import { Type, type Static } from '../vendor/typebox.js';
import { Nullable, OptionalUuid, RunIds, Uuid } from './common.js';

export const SPAN_TYPES = ['agent', 'workflow', 'llm', 'retriever', 'tool', 'control'] as const;
export type SpanType = (typeof SPAN_TYPES)[number];
export const RECORD_TYPES = ['trace', 'session', ...SPAN_TYPES] as const;
export type RecordType = (typeof RECORD_TYPES)[number];
export const LOGGING_METHODS = ['playground', 'python_client', 'typescript_client', 'api_direct'] as const;
export const AGENT_TYPES = ['default', 'planner', 'react', 'reflection', 'router', 'classifier', 'supervisor', 'judge'] as const;

const Timestamp = Type.Union([Type.String(), Type.Number({ minimum: -8.64e15, maximum: 8.64e15 })], {
  description: 'ISO 8601 date-time (or epoch milliseconds)',
});
/** Stored as INTEGER: anything wider would be refused by the column (and must be refused here, before it is acknowledged). */
const Int32 = Type.Integer({ minimum: -2147483648, maximum: 2147483647 });
const Text = Nullable(Type.String());
const Metadata = Nullable(Type.Record(Type.String(), Type.Unknown()));

/** Fields every step (trace or span) may carry. */
const stepFields = {
  id: OptionalUuid,
  name: Type.Optional(Text),
  input: Type.Optional(Type.Unknown()),
  output: Type.Optional(Type.Unknown()),
  redacted_input: Type.Optional(Type.Unknown()),
  redacted_output: Type.Optional(Type.Unknown()),
  created_at: Type.Optional(Nullable(Timestamp)),
  user_metadata: Type.Optional(Metadata),
  tags: Type.Optional(Nullable(Type.Array(Type.String()))),
  status_code: Type.Optional(Nullable(Int32)),
  metrics: Type.Optional(Metadata),
  external_id: Type.Optional(Text),
  dataset_input: Type.Optional(Text),
  dataset_output: Type.Optional(Text),
  dataset_metadata: Type.Optional(Metadata),
  session_id: OptionalUuid,
  trace_id: OptionalUuid,
  parent_id: OptionalUuid,
  step_number: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 2147483647 }))),
  is_complete: Type.Optional(Nullable(Type.Boolean())),
  duration_ns: Type.Optional(Nullable(Type.Number())),
  error_message: Type.Optional(Text),
  progress_message: Type.Optional(Text),
};

/** Kind-specific fields; all optional, checked against the kind in src/ingest. */
const kindFields = {
  agent_type: Type.Optional(Nullable(Type.Enum([...AGENT_TYPES]))),
  tools: Type.Optional(Nullable(Type.Array(Type.Unknown()))),
  events: Type.Optional(Nullable(Type.Array(Type.Unknown()))),
  model: Type.Optional(Text),
  temperature: Type.Optional(Nullable(Type.Number())),
  finish_reason: Type.Optional(Text),
  tool_call_id: Type.Optional(Text),
  control_id: Type.Optional(Nullable(Int32)),
  agent_name: Type.Optional(Text),
  check_stage: Type.Optional(Nullable(Type.Enum(['pre', 'post']))),
  applies_to: Type.Optional(Nullable(Type.Enum(['llm_call', 'tool_call']))),
  evaluator_name: Type.Optional(Text),
  selector_path: Type.Optional(Text),
};

export const SpanNode = Type.Cyclic(
  {
    Span: Type.Object({
      type: Type.Enum([...SPAN_TYPES]),
      ...stepFields,
      ...kindFields,
      spans: Type.Optional(Nullable(Type.Array(Type.Ref('Span')))),
    }),
  },
  'Span',
);
export type SpanInput = Static<typeof SpanNode>;

export const TraceNode = Type.Object({
  type: Type.Optional(Type.Enum(['trace'])),
  ...stepFields,
  spans: Type.Optional(Nullable(Type.Array(SpanNode))),
});
export type TraceInput = Static<typeof TraceNode>;

const ingestOptions = {
  ...RunIds,
  logging_method: Type.Optional(Nullable(Type.Enum([...LOGGING_METHODS]))),
  client_version: Type.Optional(Text),
  reliable: Type.Optional(Nullable(Type.Boolean())),
};

export const LogSpansBody = Type.Object({
  ...ingestOptions,
  spans: Type.Array(SpanNode, { minItems: 1 }),
  trace_id: Uuid,
  parent_id: Uuid,
  session_id: OptionalUuid,
});
export type LogSpansRequest = Static<typeof LogSpansBody>;

export const LogTracesBody = Type.Object({
  ...ingestOptions,
  session_id: OptionalUuid,
  session_external_id: Type.Optional(Text),
  traces: Type.Array(TraceNode, { minItems: 1 }),
  is_complete: Type.Optional(Nullable(Type.Boolean())),
  include_trace_ids: Type.Optional(Nullable(Type.Boolean())),
});
export type LogTracesRequest = Static<typeof LogTracesBody>;

export const LogSpansResponse = Type.Object({
  project_id: Type.String(),
  project_name: Type.String(),
  records_count: Type.Integer(),
  trace_id: Type.String(),
  parent_id: Type.String(),
  session_id: Type.Optional(Nullable(Type.String())),
  log_stream_id: Type.Optional(Nullable(Type.String())),
  experiment_id: Type.Optional(Nullable(Type.String())),
  metrics_testing_id: Type.Optional(Nullable(Type.String())),
});

export const LogTracesResponse = Type.Object({
  project_id: Type.String(),
  project_name: Type.String(),
  records_count: Type.Integer(),
  traces_count: Type.Integer(),
  spans_count: Type.Integer(),
  session_id: Type.Optional(Nullable(Type.String())),
  log_stream_id: Type.Optional(Nullable(Type.String())),
  experiment_id: Type.Optional(Nullable(Type.String())),
  metrics_testing_id: Type.Optional(Nullable(Type.String())),
  trace_ids: Type.Optional(Type.Array(Type.String())),
});

/** PATCH /projects/{id}/traces/{trace_id} and /spans/{span_id} (streaming clients conclude records). */
export const UpdateRecordBody = Type.Object({
  ...RunIds,
  logging_method: Type.Optional(Nullable(Type.Enum([...LOGGING_METHODS]))),
  client_version: Type.Optional(Text),
  reliable: Type.Optional(Nullable(Type.Boolean())),
  trace_id: OptionalUuid,
  span_id: OptionalUuid,
  input: Type.Optional(Type.Unknown()),
  output: Type.Optional(Type.Unknown()),
  tags: Type.Optional(Nullable(Type.Array(Type.String()))),
  status_code: Type.Optional(Nullable(Int32)),
  is_complete: Type.Optional(Nullable(Type.Boolean())),
  duration_ns: Type.Optional(Nullable(Type.Number())),
});

export const UpdateRecordResponse = Type.Object(
  {
    project_id: Type.String(),
    project_name: Type.String(),
    session_id: Type.String(),
    records_count: Type.Integer(),
    trace_id: Type.Optional(Type.String()),
    span_id: Type.Optional(Type.String()),
    log_stream_id: Type.Optional(Nullable(Type.String())),
    experiment_id: Type.Optional(Nullable(Type.String())),
    metrics_testing_id: Type.Optional(Nullable(Type.String())),
  },
  { additionalProperties: true },
);

export const CreateSessionBody = Type.Object({
  ...RunIds,
  id: OptionalUuid,
  name: Type.Optional(Text),
  previous_session_id: OptionalUuid,
  external_id: Type.Optional(Text),
  user_metadata: Type.Optional(Metadata),
});

export const CreateSessionResponse = Type.Object({
  id: Type.String(),
  name: Nullable(Type.String()),
  project_id: Type.String(),
  project_name: Type.String(),
  previous_session_id: Type.Optional(Nullable(Type.String())),
  external_id: Type.Optional(Nullable(Type.String())),
});
