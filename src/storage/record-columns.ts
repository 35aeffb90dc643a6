// The physical shape of a record: one wide row for spans of every kind, traces and sessions.
// The same list defines the in-memory batch table, the Parquet segments, and how a write-ahead
// log line (JSON written by src/ingest) is read back by DuckDB. Only these names enter SQL.

export interface PhysicalColumn {
  /** Column name in the batch table and the Parquet files. */
  readonly name: string;
  /** DuckDB type in the batch table and the Parquet files. */
  readonly type: string;
  /** Type DuckDB reads from the log line's JSON (defaults to `type`). */
  readonly wire?: string;
  /** SQL turning the wire value `w` into the stored value (defaults to `w`). */
  readonly load?: string;
}

/** Input and output keep their original shape: strings as-is, other values as JSON text plus a flag. */
const textOf = (w: string) => `CASE WHEN json_type(${w}) = 'VARCHAR' THEN ${w} ->> '$' ELSE ${w}::VARCHAR END`;
const isJson = (w: string) => `coalesce(json_type(${w}) <> 'VARCHAR', false)`;

export const RECORD_COLUMNS: readonly PhysicalColumn[] = [
  { name: 'seq', type: 'BIGINT' },
  { name: 'id', type: 'VARCHAR' },
  { name: 'type', type: 'VARCHAR' },
  { name: 'project_id', type: 'VARCHAR' },
  { name: 'run_id', type: 'VARCHAR' },
  { name: 'session_id', type: 'VARCHAR' },
  { name: 'trace_id', type: 'VARCHAR' },
  { name: 'parent_id', type: 'VARCHAR' },
  { name: 'step_number', type: 'INTEGER' },
  { name: 'name', type: 'VARCHAR' },
  { name: 'input', type: 'VARCHAR', wire: 'JSON', load: textOf('input') },
  { name: 'input_json', type: 'BOOLEAN', wire: 'JSON', load: isJson('input') },
  { name: 'output', type: 'VARCHAR', wire: 'JSON', load: textOf('output') },
  { name: 'output_json', type: 'BOOLEAN', wire: 'JSON', load: isJson('output') },
  { name: 'created_at', type: 'TIMESTAMP', wire: 'BIGINT', load: 'make_timestamp(created_at)' },
  { name: 'updated_at', type: 'TIMESTAMP', wire: 'BIGINT', load: 'make_timestamp(updated_at)' },
  { name: 'tags', type: 'VARCHAR[]' },
  { name: 'metrics', type: 'MAP(VARCHAR, DOUBLE)' },
  { name: 'user_metadata', type: 'MAP(VARCHAR, VARCHAR)' },
  { name: 'dataset_metadata', type: 'MAP(VARCHAR, VARCHAR)' },
  { name: 'status_code', type: 'INTEGER' },
  { name: 'external_id', type: 'VARCHAR' },
  { name: 'dataset_input', type: 'VARCHAR' },
  { name: 'dataset_output', type: 'VARCHAR' },
  { name: 'is_complete', type: 'BOOLEAN' },
  { name: 'has_children', type: 'BOOLEAN' },
  { name: 'progress_message', type: 'VARCHAR' },
  { name: 'error_message', type: 'VARCHAR' },
  { name: 'agent_type', type: 'VARCHAR' },
  { name: 'agent_name', type: 'VARCHAR' },
  { name: 'tools', type: 'VARCHAR', wire: 'JSON', load: 'tools::VARCHAR' },
  { name: 'model', type: 'VARCHAR' },
  { name: 'temperature', type: 'DOUBLE' },
  { name: 'finish_reason', type: 'VARCHAR' },
  { name: 'tool_call_id', type: 'VARCHAR' },
  { name: 'control_id', type: 'INTEGER' },
  { name: 'check_stage', type: 'VARCHAR' },
  { name: 'applies_to', type: 'VARCHAR' },
  { name: 'evaluator_name', type: 'VARCHAR' },
  { name: 'selector_path', type: 'VARCHAR' },
  { name: 'previous_session_id', type: 'VARCHAR' },
  /** Everything else the client sent that has no column (events, redactions, odd metric values). */
  { name: 'extra', type: 'VARCHAR', wire: 'JSON', load: 'extra::VARCHAR' },
];

/** The JSON keys a log line may carry; `input` feeds two columns, so keys are de-duplicated. */
export function wireColumns(): [string, string][] {
  const seen = new Map<string, string>();
  for (const c of RECORD_COLUMNS) {
    const key = c.wire === 'JSON' && c.name.endsWith('_json') ? c.name.slice(0, -5) : c.name;
    if (!seen.has(key)) seen.set(key, c.wire ?? c.type);
  }
  return [...seen];
}

export function tableDdl(table: string): string {
  return `CREATE TABLE IF NOT EXISTS ${table} (${RECORD_COLUMNS.map((c) => `${c.name} ${c.type}`).join(', ')})`;
}

/** SELECT list turning wire columns of a log read into stored columns. */
export function loadSelectList(): string {
  return RECORD_COLUMNS.map((c) => `${c.load ?? c.name} AS ${c.name}`).join(', ');
}

/** Record kinds are stored apart so trace and session questions skip span files. */
export type RecordKind = 'span' | 'trace' | 'session';
export const KIND_SQL = `CASE type WHEN 'trace' THEN 'trace' WHEN 'session' THEN 'session' ELSE 'span' END`;
export function kindOf(type: string): RecordKind {
  return type === 'trace' ? 'trace' : type === 'session' ? 'session' : 'span';
}

/** SELECT list that returns stored rows with timestamps as epoch microseconds (exact in JS numbers). */
export const STORED_SELECT = 'SELECT * REPLACE (epoch_us(created_at) AS created_at, epoch_us(updated_at) AS updated_at)';
