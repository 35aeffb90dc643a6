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

export interface MetricStatus {
  status_type: string;
  value?: unknown;
  roll_up_method?: string;
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
