// Stable numeric ids of the record's columns, written into Parquet segments as field ids and used by
// the Iceberg tables' schema (src/iceberg). An id never changes meaning once written: a new column
// takes a new number, a removed one leaves its number unused. Metric columns `m<id>` take
// METRIC_FIELD_BASE + id; nested parts (list elements, map keys and values) have ids of their own.

export const RECORD_FIELD_IDS: Readonly<Record<string, number>> = {
  seq: 1,
  id: 2,
  type: 3,
  project_id: 4,
  run_id: 5,
  session_id: 6,
  trace_id: 7,
  parent_id: 8,
  step_number: 9,
  name: 10,
  input: 11,
  input_json: 12,
  output: 13,
  output_json: 14,
  created_at: 15,
  updated_at: 16,
  tags: 17,
  metrics: 18,
  user_metadata: 19,
  dataset_metadata: 20,
  status_code: 21,
  external_id: 22,
  dataset_input: 23,
  dataset_output: 24,
  is_complete: 25,
  has_children: 26,
  progress_message: 27,
  error_message: 28,
  agent_type: 29,
  agent_name: 30,
  tools: 31,
  model: 32,
  temperature: 33,
  finish_reason: 34,
  tool_call_id: 35,
  control_id: 36,
  check_stage: 37,
  applies_to: 38,
  evaluator_name: 39,
  selector_path: 40,
  previous_session_id: 41,
  extra: 42,
};

/** Ids of the parts of nested columns: a list's element, a map's key and value. */
export const NESTED_FIELD_IDS: Readonly<Record<string, { element: number } | { key: number; value: number }>> = {
  tags: { element: 101 },
  metrics: { key: 102, value: 103 },
  user_metadata: { key: 104, value: 105 },
  dataset_metadata: { key: 106, value: 107 },
};

/** Metric column `m<id>` has field id METRIC_FIELD_BASE + id (far above the record's and the partition's ids). */
export const METRIC_FIELD_BASE = 10_000;

/** The field id of a stored column name, or undefined for columns that have none (tag_set, derived). */
export function fieldIdOf(column: string): number | undefined {
  const own = RECORD_FIELD_IDS[column];
  if (own !== undefined) return own;
  const m = /^m(\d+)$/.exec(column);
  return m ? METRIC_FIELD_BASE + Number(m[1]) : undefined;
}

/**
 * DuckDB's COPY option naming the field ids of these output columns (only names from the registry
 * above and `m<digits>` enter the text; other columns get none).
 */
export function fieldIdsOption(columns: readonly string[]): string {
  const parts: string[] = [];
  for (const col of columns) {
    const id = fieldIdOf(col);
    if (id === undefined) continue;
    const nested = NESTED_FIELD_IDS[col];
    if (!nested) parts.push(`${col}: ${id}`);
    else if ('element' in nested) parts.push(`${col}: {__duckdb_field_id: ${id}, element: ${nested.element}}`);
    else parts.push(`${col}: {__duckdb_field_id: ${id}, key: ${nested.key}, value: ${nested.value}}`);
  }
  return parts.length === 0 ? '' : `, FIELD_IDS {${parts.join(', ')}}`;
}
