// The record's field names grouped by what their values are, derived from RECORD_COLUMNS: the codecs
// walk these lists, so a column added there is converted by its kind without a further edit. Within
// a group every field holds the same type, so a loop over a group writes fields without a cast.
import { RECORD_COLUMNS, type ColumnHolds, type ColumnKind, type RecordColumn } from './record-columns.js';
import type { FieldColumn } from './record.js';

type Holding<K, H> = Extract<FieldColumn, { kind: K; holds: H }>;

/** Whether a column is of one of `kinds` and holds `holds`. */
function holding<K extends ColumnKind, H extends ColumnHolds>(kinds: readonly K[], holds: H): (c: RecordColumn) => c is Holding<K, H> {
  return (c): c is Holding<K, H> => kinds.some((k) => k === c.kind) && c.holds === holds;
}

const names = <C extends FieldColumn>(is: (c: RecordColumn) => c is C): readonly C['name'][] =>
  RECORD_COLUMNS.filter(is).map((c) => c.name);

export const STRING_FIELDS = names(holding(['utf8'], 'value'));
/** 32-bit integers and doubles: numbers in a record and as DuckDB returns them. */
export const NUMBER_FIELDS = names(holding(['i32', 'f64'], 'value'));
/** BIGINTs and timestamps: numbers in a record, bigints as DuckDB returns them. */
export const BIGINT_FIELDS = names(holding(['i64', 'ts'], 'value'));
export const BOOLEAN_FIELDS = names(holding(['bool'], 'value'));
export const TAG_FIELDS = names(holding(['tags'], 'value'));
export const NUMBER_MAP_FIELDS = names(holding(['map_f64'], 'value'));
export const STRING_MAP_FIELDS = names(holding(['map_utf8'], 'value'));
/** Any JSON value, stored as JSON text. */
export const JSON_FIELDS = names(holding(['utf8'], 'json'));
/** A string stored as-is, any other JSON value as JSON text with `<name>_json` true. */
export const IO_FIELDS = names(holding(['utf8'], 'io'));
