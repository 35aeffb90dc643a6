// Wire shapes the viewer reads from the v2 API (only the fields it uses).

export type FilterType = 'text' | 'collection' | 'id' | 'date' | 'number' | 'boolean' | 'fully_annotated';

/** One entry of available_columns. */
export interface ColumnInfo {
  id: string;
  label?: string | null;
  category: string;
  data_type?: string | null;
  data_unit?: string | null;
  filter_type?: FilterType | null;
  filterable?: boolean | null;
  sortable?: boolean | null;
  multi_valued?: boolean | null;
  allowed_values?: string[] | null;
  roll_up_method?: string | null;
}

/** A metric's status in an answer's metric_info: how its value came to be, or why there is none. */
export interface MetricStatus {
  status_type: string;
  value?: unknown;
  roll_up_method?: string;
  /** Why a scorer failed, or why it does not apply or cannot run here. */
  message?: string;
  explanation?: string;
  scorer_version?: number | null;
  num_judges?: number;
  model_alias?: string;
}

/** A record as partial_search or search returns it. */
export interface RecordRow {
  id: string;
  type: string;
  name?: string | null;
  input?: unknown;
  output?: unknown;
  created_at?: string | null;
  parent_id?: string | null;
  trace_id?: string | null;
  session_id?: string | null;
  run_id?: string | null;
  project_id?: string | null;
  step_number?: number | null;
  status_code?: number | null;
  error_message?: string | null;
  tags?: string[] | null;
  metrics?: Record<string, unknown> | null;
  metric_info?: Record<string, MetricStatus> | null;
  num_spans?: number;
  num_traces?: number;
  [field: string]: unknown;
}

export interface SearchPage {
  records: RecordRow[];
  next_starting_token: number | null;
  starting_token: number;
  limit: number;
}

export interface RunInfo {
  id: string;
  name: string;
  kind: 'log_stream' | 'experiment' | 'metrics_testing';
  created_at: string;
}

export interface ProjectInfo {
  id: string;
  name: string;
  created_at: string;
  runs?: RunInfo[];
}

/** A scorer of the catalog as /scorers/list returns it (the fields the viewer reads). */
export interface ScorerItem {
  id: string;
  name: string;
  label?: string | null;
  description?: string | null;
  scorer_type: string;
  model_type?: string | null;
  output_type?: string | null;
  input_type?: string | null;
  scoreable_node_types?: string[] | null;
  metric_name?: string | null;
  deprecated?: boolean | null;
  default_version_id?: string | null;
  defaults?: { model_name?: string | null; num_judges?: number | null; filters?: unknown[] | null; cot_enabled?: boolean | null } | null;
  default_version?: { id: string; model_name?: string | null; num_judges?: number | null; cot_enabled?: boolean | null } | null;
}

/** One scorer enabled in a run, as GET scorer-settings answers it (knobs resolved against the scorer's defaults). */
export interface ScorerConfig {
  id: string;
  name: string;
  scorer_type: string;
  metric_name?: string | null;
  model_name?: string | null;
  num_judges?: number | null;
  filters?: unknown[] | null;
  scoreable_node_types?: string[] | null;
  cot_enabled?: boolean | null;
  output_type?: string | null;
  input_type?: string | null;
  sample_rate?: number | null;
  scorer_version?: { id: string; version?: number } | null;
}

export interface RunScorerSettings {
  run_id: string;
  scorers: ScorerConfig[];
  segment_filters: unknown[] | null;
}

/** A recompute job as GET /projects/{id}/jobs/{job_id} reports it. */
export interface ScoreJob {
  id: string;
  status: 'pending' | 'processing' | 'completed' | 'failed';
  steps_completed: number;
  steps_total: number;
  progress_percent: number;
  error_message: string | null;
  progress_message: string | null;
  counts: Record<string, number>;
}
