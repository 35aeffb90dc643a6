// The physical shape of a record: one wide row for spans of every kind, traces and sessions. The same
// list defines the Arrow batches of the write-ahead log, the in-memory DuckDB tables and the Parquet
// segments. Only these names enter SQL.

/** How a column is held in an Arrow batch (and so in the log and the in-memory table). */
export type ColumnKind = 'i64' | 'i32' | 'f64' | 'bool' | 'ts' | 'utf8' | 'tags' | 'map_f64' | 'map_utf8';

export interface PhysicalColumn {
  /** Column name in the batches, the in-memory tables and the Parquet files. */
  readonly name: string;
  /** DuckDB type in the in-memory tables and the Parquet files. */
  readonly type: string;
  readonly kind: ColumnKind;
}

const c = (name: string, type: string, kind: ColumnKind): PhysicalColumn => ({ name, type, kind });
const text = (name: string) => c(name, 'VARCHAR', 'utf8');

/**
 * Input and output keep their original shape: a string is stored as-is, any other value as JSON text
 * with `<name>_json` true. `tools` and `extra` are JSON text.
 */
export const RECORD_COLUMNS: readonly PhysicalColumn[] = [
  c('seq', 'BIGINT', 'i64'),
  text('id'),
  text('type'),
  text('project_id'),
  text('run_id'),
  text('session_id'),
  text('trace_id'),
  text('parent_id'),
  c('step_number', 'INTEGER', 'i32'),
  text('name'),
  text('input'),
  c('input_json', 'BOOLEAN', 'bool'),
  text('output'),
  c('output_json', 'BOOLEAN', 'bool'),
  c('created_at', 'TIMESTAMP', 'ts'),
  c('updated_at', 'TIMESTAMP', 'ts'),
  c('tags', 'VARCHAR[]', 'tags'),
  c('metrics', 'MAP(VARCHAR, DOUBLE)', 'map_f64'),
  c('user_metadata', 'MAP(VARCHAR, VARCHAR)', 'map_utf8'),
  c('dataset_metadata', 'MAP(VARCHAR, VARCHAR)', 'map_utf8'),
  c('status_code', 'INTEGER', 'i32'),
  text('external_id'),
  text('dataset_input'),
  text('dataset_output'),
  c('is_complete', 'BOOLEAN', 'bool'),
  c('has_children', 'BOOLEAN', 'bool'),
  text('progress_message'),
  text('error_message'),
  text('agent_type'),
  text('agent_name'),
  text('tools'),
  text('model'),
  c('temperature', 'DOUBLE', 'f64'),
  text('finish_reason'),
  text('tool_call_id'),
  c('control_id', 'INTEGER', 'i32'),
  text('check_stage'),
  text('applies_to'),
  text('evaluator_name'),
  text('selector_path'),
  text('previous_session_id'),
  /** Everything else the client sent that has no column (events, redactions, odd metric values). */
  text('extra'),
];

export const COLUMN_NAMES = RECORD_COLUMNS.map((col) => col.name);

export function tableDdl(table: string): string {
  return `CREATE TABLE IF NOT EXISTS ${table} (${RECORD_COLUMNS.map((col) => `${col.name} ${col.type}`).join(', ')})`;
}

/** Record kinds are stored apart so trace and session questions skip span files. */
export type RecordKind = 'span' | 'trace' | 'session';
export const KIND_SQL = `CASE type WHEN 'trace' THEN 'trace' WHEN 'session' THEN 'session' ELSE 'span' END`;
export function kindOf(type: string): RecordKind {
  return type === 'trace' ? 'trace' : type === 'session' ? 'session' : 'span';
}

/** SELECT list that returns stored rows with timestamps as epoch microseconds (exact in JS numbers). */
export const STORED_SELECT = 'SELECT * REPLACE (epoch_us(created_at) AS created_at, epoch_us(updated_at) AS updated_at)';
