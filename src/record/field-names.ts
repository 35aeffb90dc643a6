// The record's field names grouped by what their values are, derived from RECORD_COLUMNS: the codecs
// walk these lists, so a column added there is converted by its kind without a further edit. Within
// a group every field holds the same type, so a loop over a group writes fields without a cast.
import { RECORD_COLUMNS } from './record-columns.js';
import type { FieldColumn } from './record.js';

type Holding<K, H> = Extract<FieldColumn, { kind: K; holds: H }>;

export const STRING_FIELDS = RECORD_COLUMNS.filter((c): c is Holding<'utf8', 'value'> => c.kind === 'utf8' && c.holds === 'value').map((c) => c.name);
/** 32-bit integers and doubles: numbers in a record and as DuckDB returns them. */
export const NUMBER_FIELDS = RECORD_COLUMNS.filter((c): c is Holding<'i32' | 'f64', 'value'> => (c.kind === 'i32' || c.kind === 'f64') && c.holds === 'value').map((c) => c.name);
/** BIGINTs and timestamps: numbers in a record, bigints as DuckDB returns them. */
export const BIGINT_FIELDS = RECORD_COLUMNS.filter((c): c is Holding<'i64' | 'ts', 'value'> => (c.kind === 'i64' || c.kind === 'ts') && c.holds === 'value').map((c) => c.name);
export const BOOLEAN_FIELDS = RECORD_COLUMNS.filter((c): c is Holding<'bool', 'value'> => c.kind === 'bool' && c.holds === 'value').map((c) => c.name);
export const TAG_FIELDS = RECORD_COLUMNS.filter((c): c is Holding<'tags', 'value'> => c.kind === 'tags' && c.holds === 'value').map((c) => c.name);
export const NUMBER_MAP_FIELDS = RECORD_COLUMNS.filter((c): c is Holding<'map_f64', 'value'> => c.kind === 'map_f64' && c.holds === 'value').map((c) => c.name);
export const STRING_MAP_FIELDS = RECORD_COLUMNS.filter((c): c is Holding<'map_utf8', 'value'> => c.kind === 'map_utf8' && c.holds === 'value').map((c) => c.name);
/** Any JSON value, stored as JSON text. */
export const JSON_FIELDS = RECORD_COLUMNS.filter((c): c is Holding<'utf8', 'json'> => c.holds === 'json').map((c) => c.name);
/** A string stored as-is, any other JSON value as JSON text with `<name>_json` true. */
export const IO_FIELDS = RECORD_COLUMNS.filter((c): c is Holding<'utf8', 'io'> => c.holds === 'io').map((c) => c.name);
