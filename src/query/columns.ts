// The column registry: every standard column of the hosted service (named and typed as it names them) and the
// metric columns `metrics/<name>`. The same registry answers available_columns, validates filters and
// sorts, and supplies the only identifiers that ever enter SQL (`sql`, written here, never from input).

export const SPAN_KINDS = ['agent', 'workflow', 'llm', 'retriever', 'tool', 'control'] as const;
export const ALL_KINDS = ['tool', 'retriever', 'trace', 'workflow', 'llm', 'session', 'agent', 'control'] as const;
const NOSESS = ALL_KINDS.filter((k) => k !== 'session');
const SPAN = ['retriever', 'tool', 'workflow', 'llm', 'agent', 'control'];

export const FILTER_TYPES = ['id', 'date', 'number', 'boolean', 'collection', 'text', 'fully_annotated'] as const;
export type FilterType = (typeof FILTER_TYPES)[number];
export type DataType = 'text' | 'timestamp' | 'string_list' | 'integer' | 'uuid' | 'boolean' | 'floating_point';

/** Which level of the tree a request addresses (spans, traces or sessions endpoints). */
export type Level = 'span' | 'trace' | 'session';

export interface ColumnDef {
  readonly id: string;
  readonly label: string;
  readonly category: 'standard' | 'metric';
  readonly group_label: string;
  readonly description: string;
  readonly data_type: DataType;
  readonly data_unit?: string;
  readonly filter_type: FilterType;
  readonly filterable: boolean;
  readonly sortable: boolean;
  readonly multi_valued: boolean;
  readonly is_optional: boolean;
  readonly is_empty?: boolean;
  readonly applicable_types: readonly string[];
  readonly allowed_values?: readonly string[];
  readonly roll_up_method?: RollUpMethod;
  readonly threshold?: { buckets: number[]; display_value_levels: string[]; inverted: boolean };
  /** SQL for the value, over the record alias `r`. Identifiers only. */
  readonly sql: string;
  /** For metric columns: the metric name (bound as a parameter, never inlined). */
  readonly metric?: string;
}

export const ROLL_UP_METHODS = ['average', 'sum', 'max', 'min', 'percentage_true', 'percentage_false'] as const;
export type RollUpMethod = (typeof ROLL_UP_METHODS)[number];

type Std = [
  id: string,
  dataType: DataType,
  filterType: FilterType,
  applicable: readonly string[],
  optional: boolean,
  description: string,
  extra?: Partial<ColumnDef>,
];

const STANDARD: readonly Std[] = [
  ['input', 'text', 'text', ALL_KINDS, false, 'What the step received: a string, or for llm spans the message list as JSON text.'],
  ['output', 'text', 'text', ALL_KINDS, false, 'What the step produced: a string, or a message/documents as JSON text.'],
  ['name', 'text', 'text', ALL_KINDS, false, 'Name given by the client.'],
  ['created_at', 'timestamp', 'date', ALL_KINDS, false, 'When the step started (UTC).'],
  ['tags', 'string_list', 'collection', NOSESS, false, 'Tags attached by the client.', { multi_valued: true, sortable: false }],
  ['status_code', 'integer', 'number', NOSESS, true, 'HTTP-like status of the step (e.g. 200, 500).'],
  ['external_id', 'text', 'text', ALL_KINDS, true, "The client's own identifier for the record."],
  ['dataset_input', 'text', 'text', NOSESS, false, 'Input of the dataset row the record was run from.'],
  ['dataset_output', 'text', 'text', NOSESS, false, 'Expected output of the dataset row.'],
  ['id', 'uuid', 'id', ALL_KINDS, false, 'Identifier of the record.'],
  ['session_id', 'uuid', 'id', NOSESS, false, 'Session the record belongs to.'],
  ['project_id', 'uuid', 'id', NOSESS, false, 'Project the record belongs to.'],
  ['run_id', 'uuid', 'id', NOSESS, false, 'Log stream, experiment or metrics-testing run of the record.'],
  ['updated_at', 'timestamp', 'date', NOSESS, true, 'When the record was last written (UTC).'],
  ['has_children', 'boolean', 'boolean', NOSESS, true, 'Whether child spans were logged under the record.'],
  ['progress_message', 'text', 'text', ALL_KINDS, false, 'Progress note of a long-running step.'],
  ['error_message', 'text', 'text', ALL_KINDS, false, 'Error reported for the step.'],
  ['is_complete', 'boolean', 'boolean', NOSESS, false, 'Whether the step has finished.'],
  [
    'type',
    'text',
    'text',
    SPAN,
    false,
    'Kind of record.',
    { allowed_values: ['tool', 'retriever', 'trace', 'workflow', 'llm', 'session', 'agent', 'control'] },
  ],
  ['trace_id', 'uuid', 'id', SPAN, false, 'Trace the span belongs to.'],
  ['parent_id', 'uuid', 'id', SPAN, false, 'Trace or span the span hangs under.'],
  ['step_number', 'integer', 'number', SPAN, true, 'Position of the span in its trace (depth-first).'],
  [
    'agent_type',
    'text',
    'text',
    ['agent'],
    false,
    'Role of an agent span.',
    { allowed_values: ['reflection', 'classifier', 'supervisor', 'router', 'react', 'planner', 'judge', 'default'] },
  ],
  ['agent_name', 'text', 'text', ['control', 'agent'], true, 'Name of the agent.'],
  ['tools', 'text', 'text', ['llm'], false, 'Tools offered to the model, as JSON text.'],
  ['model', 'text', 'text', ['llm'], true, 'Model that answered.'],
  ['temperature', 'floating_point', 'number', ['llm'], true, 'Sampling temperature.'],
  ['finish_reason', 'text', 'text', ['llm'], true, 'Why the model stopped.'],
  ['tool_call_id', 'text', 'text', ['tool'], true, 'Identifier of the tool call the span answers.'],
  ['control_id', 'integer', 'number', ['control'], true, 'Identifier of the control.'],
  ['check_stage', 'text', 'text', ['control'], true, 'When the control runs.', { allowed_values: ['pre', 'post'] }],
  ['applies_to', 'text', 'text', ['control'], true, 'What the control checks.', { allowed_values: ['llm_call', 'tool_call'] }],
  ['evaluator_name', 'text', 'text', ['control'], true, 'Evaluator the control used.'],
  ['selector_path', 'text', 'text', ['control'], true, 'Path of the value the control checked.'],
];

const LABELS: Record<string, string> = {
  id: 'ID',
  session_id: 'Session ID',
  project_id: 'Project ID',
  run_id: 'Run ID',
  trace_id: 'Trace ID',
  parent_id: 'Parent ID',
  external_id: 'External ID',
  tool_call_id: 'Tool Call ID',
  control_id: 'Control ID',
};

function label(id: string): string {
  return (
    LABELS[id] ??
    id
      .split('_')
      .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
      .join(' ')
  );
}

export const STANDARD_COLUMNS: readonly ColumnDef[] = STANDARD.map(
  ([id, data_type, filter_type, applicable, optional, description, extra]) => ({
    id,
    label: label(id),
    category: 'standard',
    group_label: 'Standard',
    description,
    data_type,
    filter_type,
    filterable: true,
    sortable: true,
    multi_valued: false,
    is_optional: optional,
    applicable_types: applicable,
    sql: `r.${id}`,
    ...extra,
  }),
);

const BY_ID = new Map(STANDARD_COLUMNS.map((c) => [c.id, c]));

export const METRIC_PREFIX = 'metrics/';

/** What is known about a metric beyond its name (from the scorer catalog), to describe its column. */
export interface MetricInfo {
  label?: string;
  group_label?: string;
  description?: string;
  data_unit?: string;
  roll_up_method?: RollUpMethod;
  threshold?: { buckets: number[]; display_value_levels: string[]; inverted: boolean };
  is_empty?: boolean;
}

export function metricColumn(name: string, info: MetricInfo = {}): ColumnDef {
  return {
    id: `${METRIC_PREFIX}${name}`,
    label: info.label ?? name,
    category: 'metric',
    group_label: info.group_label ?? 'Metrics',
    description: info.description ?? `Metric ${name}; records without it have no value.`,
    data_type: 'floating_point',
    ...(info.data_unit ? { data_unit: info.data_unit } : {}),
    filter_type: 'number',
    filterable: true,
    sortable: true,
    multi_valued: false,
    is_optional: true,
    is_empty: info.is_empty ?? false,
    applicable_types: [],
    roll_up_method: info.roll_up_method ?? 'average',
    threshold: info.threshold ?? { buckets: [0.5, 0.8], display_value_levels: ['low', 'medium', 'high'], inverted: false },
    sql: 'r.metrics',
    metric: name,
  };
}

export function standardColumn(id: string): ColumnDef | undefined {
  return BY_ID.get(id);
}

/** Does a column apply at a level (any span kind for spans, else the level's own kind)? */
export function appliesAt(c: ColumnDef, level: Level): boolean {
  if (c.category === 'metric') return true;
  return level === 'span'
    ? c.applicable_types.some((t) => (SPAN_KINDS as readonly string[]).includes(t))
    : c.applicable_types.includes(level);
}

/** Resolves a column id (standard or metrics/<name>) for a level; undefined when unknown there. */
export function resolveColumn(
  id: string,
  level: Level,
  metrics: (name: string) => MetricInfo | undefined = () => undefined,
): ColumnDef | undefined {
  if (id.startsWith(METRIC_PREFIX) && id.length > METRIC_PREFIX.length) {
    const name = id.slice(METRIC_PREFIX.length);
    return metricColumn(name, metrics(name));
  }
  const c = BY_ID.get(id);
  return c && appliesAt(c, level) ? c : undefined;
}

/** The closest known column id, for "did you mean" hints (edit distance at most 3). */
export function suggestColumn(id: string, level: Level): string | undefined {
  let best: string | undefined;
  let bestD = 4;
  for (const c of STANDARD_COLUMNS) {
    if (!appliesAt(c, level)) continue;
    const d = editDistance(id.toLowerCase(), c.id);
    if (d < bestD) {
      bestD = d;
      best = c.id;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length]!;
}

/** A column as available_columns describes it (without the internal SQL). */
export type ColumnInfo = Omit<ColumnDef, 'sql' | 'metric'> & Record<string, unknown>;

export function columnInfo(c: ColumnDef): ColumnInfo {
  const { sql: _sql, metric: _metric, ...info } = c;
  return { ...info, applicable_types: [...c.applicable_types], ...(c.allowed_values ? { allowed_values: [...c.allowed_values] } : {}) };
}
