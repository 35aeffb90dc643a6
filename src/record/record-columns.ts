// The physical shape of a record: one wide row for spans of every kind, traces and sessions. The same
// list defines the Arrow batches of the write-ahead log, the in-memory DuckDB tables, the Parquet
// segments and the record's TypeScript types (record.ts): adding a column is one edit here. Only these
// names enter SQL.

/** How a column is held in an Arrow batch (and so in the log and the in-memory table). */
export type ColumnKind = 'i64' | 'i32' | 'f64' | 'bool' | 'ts' | 'utf8' | 'tags' | 'map_f64' | 'map_utf8';

/**
 * What a record holds in a column: the value its kind says (`value`); any JSON value, stored as JSON
 * text (`json`); a string stored as-is or any other JSON value stored as JSON text with the flag
 * `<name>_json` true (`io`); or that flag (`flag`), which a batch derives and no record holds.
 */
export type ColumnHolds = 'value' | 'json' | 'io' | 'flag';

export interface PhysicalColumn {
  /** Column name in the batches, the in-memory tables and the Parquet files. */
  readonly name: string;
  /** DuckDB type in the in-memory tables and the Parquet files. */
  readonly type: string;
  readonly kind: ColumnKind;
  readonly holds: ColumnHolds;
}

// One literal for every column, so all of them share one object shape (the batch builder reads them per row).
const column = <N extends string, K extends ColumnKind, H extends ColumnHolds>(name: N, type: string, kind: K, holds: H) =>
  ({ name, type, kind, holds }) as const;
const c = <N extends string, K extends ColumnKind>(name: N, type: string, kind: K) => column(name, type, kind, 'value');
const text = <N extends string>(name: N) => column(name, 'VARCHAR', 'utf8', 'value');
const json = <N extends string>(name: N) => column(name, 'VARCHAR', 'utf8', 'json');
const io = <N extends string>(name: N) => column(name, 'VARCHAR', 'utf8', 'io');
const flag = <N extends string>(name: N) => column(name, 'BOOLEAN', 'bool', 'flag');

/**
 * Input and output keep their original shape: a string is stored as-is, any other value as JSON text
 * with `<name>_json` true. `tools` and `extra` are JSON text.
 */
export const RECORD_COLUMNS = [
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
  io('input'),
  flag('input_json'),
  io('output'),
  flag('output_json'),
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
  json('tools'),
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
  json('extra'),
] as const satisfies readonly PhysicalColumn[];

/** One column of RECORD_COLUMNS, with its literal name, kind and holds. */
export type RecordColumn = (typeof RECORD_COLUMNS)[number];
export type ColumnName = RecordColumn['name'];

export const COLUMN_NAMES: readonly ColumnName[] = RECORD_COLUMNS.map((col) => col.name);

/** A fresh, empty table of records: a memory table holds exactly its log file's rows, never a table left by an earlier store on the same database. */
export function tableDdl(table: string): string {
  return `CREATE OR REPLACE TABLE ${table} (${RECORD_COLUMNS.map((col) => `${col.name} ${col.type}`).join(', ')})`;
}

/** Record kinds are stored apart so trace and session questions skip span files. */
export type RecordKind = 'span' | 'trace' | 'session';
export const KIND_SQL = `CASE type WHEN 'trace' THEN 'trace' WHEN 'session' THEN 'session' ELSE 'span' END`;
export function kindOf(type: string): RecordKind {
  return type === 'trace' ? 'trace' : type === 'session' ? 'session' : 'span';
}

/** SELECT list that returns stored rows with timestamps as epoch microseconds (exact in JS numbers). */
export const STORED_SELECT = 'SELECT * REPLACE (epoch_us(created_at) AS created_at, epoch_us(updated_at) AS updated_at)';

/**
 * A record's tags as one low-cardinality string, stored in segments beside `tags` (a derived column,
 * written by writeSegment): the distinct tags, each escaped (\x1e -> \x1e0, \x1f -> \x1e1) and sorted,
 * each enclosed in \x1f; '' without tags, NULL when tags is NULL. Membership is then a substring test,
 * `\x1f<escaped tag>\x1f`, on a dictionary-encoded string column: several times cheaper to read and
 * test than the list of strings. Deriving it at query time costs far more than the list test, so
 * sources expose it only where stored (NULL elsewhere), and TAG_LIST_COLUMN, the list, only where it is
 * not (NULL in segments that store tag_set): a filter tests whichever is not NULL.
 */
export const TAG_SET_COLUMN = 'tag_set';
export const TAG_LIST_COLUMN = 'tag_list';
export const TAG_SET_SQL =
  "CASE WHEN tags IS NULL THEN NULL WHEN len(list_distinct(tags)) = 0 THEN '' ELSE " +
  'chr(31) || array_to_string(list_sort(list_distinct(list_transform(tags, ' +
  "lambda x: replace(replace(x, chr(30), chr(30) || '0'), chr(31), chr(30) || '1')))), chr(31)) || chr(31) END";

/** The needle a tag becomes in TAG_SET_COLUMN (escaped as there, enclosed in \x1f). */
export function tagSetNeedle(tag: string): string {
  return `\x1f${tag.replaceAll('\x1e', '\x1e0').replaceAll('\x1f', '\x1e1')}\x1f`;
}
