// Checked conversions into the record's types, for rows whose shape the compiler cannot know: DuckDB
// results (checked against the column types), imported rows and the rows of old log files (converted
// as a batch would store them, so the stored record is the same as without the conversion).
import { StorageError } from '../errors.js';
import {
  BIGINT_FIELDS,
  BOOLEAN_FIELDS,
  IO_FIELDS,
  JSON_FIELDS,
  NUMBER_FIELDS,
  NUMBER_MAP_FIELDS,
  STRING_FIELDS,
  STRING_MAP_FIELDS,
  TAG_FIELDS,
} from './field-names.js';
import { RECORD_COLUMNS, type ColumnKind } from './record-columns.js';
import type { Draft, FieldName, LogRow, RecordFields, StoredRequired, StoredRow } from './record.js';

const ANY_VALUE_FIELDS = [...JSON_FIELDS, ...IO_FIELDS];
const REQUIRED: ReadonlySet<string> = new Set<StoredRequired>(['seq', 'id', 'type', 'project_id', 'run_id', 'created_at']);

function mapOf(v: unknown, value: (x: unknown) => boolean): boolean {
  if (!Array.isArray(v)) return false;
  const entries: readonly unknown[] = v;
  for (const e of entries) {
    if (typeof e !== 'object' || e === null || !('key' in e) || !('value' in e)) return false;
    if (typeof e.key !== 'string' || (e.value !== null && !value(e.value))) return false;
  }
  return true;
}

/** Whether `v` is what DuckDB returns for a non-NULL value of a column of this kind. */
function storedValue(kind: ColumnKind, v: unknown): boolean {
  switch (kind) {
    case 'i64':
    case 'ts':
      return typeof v === 'bigint';
    case 'i32':
    case 'f64':
      return typeof v === 'number';
    case 'bool':
      return typeof v === 'boolean';
    case 'utf8':
      return typeof v === 'string';
    case 'tags':
      return Array.isArray(v) && v.every((t) => t === null || typeof t === 'string');
    case 'map_f64':
      return mapOf(v, (x) => typeof x === 'number');
    case 'map_utf8':
      return mapOf(v, (x) => typeof x === 'string');
  }
}

/** Whether a result row is a stored row: every column present, of its type, the required ones not NULL. */
export function isStoredRow(row: Readonly<Record<string, unknown>>): row is StoredRow {
  return storedRowProblem(row) === null;
}

function storedRowProblem(row: Readonly<Record<string, unknown>>): string | null {
  for (const c of RECORD_COLUMNS) {
    const v = row[c.name];
    if (v === null && !REQUIRED.has(c.name)) continue;
    if (!storedValue(c.kind, v)) return c.name;
  }
  return null;
}

/** The rows of a record lookup as stored rows; a row that is not one (a column of another type) is refused. */
export function storedRows(rows: readonly Readonly<Record<string, unknown>>[]): StoredRow[] {
  const out: StoredRow[] = [];
  for (const row of rows) {
    if (!isStoredRow(row)) throw new StorageError(`a stored record has an unexpected value in column ${storedRowProblem(row)}`);
    out.push(row);
  }
  return out;
}

function numberOf(v: unknown): number | undefined {
  return typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : undefined;
}

function isMap<V>(m: object, value: (x: unknown) => x is V): m is Record<string, V> {
  return Object.values(m).every(value);
}

const isNumber = (x: unknown): x is number => typeof x === 'number';
const isString = (x: unknown): x is string => typeof x === 'string';

/** A map of numbers (entries of another type left out, as a batch leaves them out). */
function numberMap(v: unknown): Record<string, number> | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  if (isMap(v, isNumber)) return v;
  const out: Record<string, number> = {};
  for (const [k, x] of Object.entries(v)) if (typeof x === 'number') out[k] = x;
  return out;
}

/** A map of strings (null entries left out, other values as JSON text, as a batch stores them). */
function stringMap(v: unknown): Record<string, string> | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  if (isMap(v, isString)) return v;
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) if (x !== null && x !== undefined) out[k] = typeof x === 'string' ? x : JSON.stringify(x);
  return out;
}

/** A list of tags (other values as text, as a batch stores them). */
function tagList(v: unknown): string[] | undefined {
  if (!Array.isArray(v)) return undefined;
  return v.every(isString) ? v : v.map((t) => (typeof t === 'string' ? t : String(t)));
}

/**
 * The fields of a row whose values are of unknown type (`get` gives a field's value, null or undefined
 * when absent), each converted as a batch would store it: numbers and booleans of another type are
 * left out (stored NULL), other values of a text column become text, JSON columns take any value.
 */
export function fieldsFrom(get: (name: FieldName) => unknown): RecordFields {
  const f: RecordFields = {};
  for (const k of STRING_FIELDS) {
    const v = get(k);
    if (v !== null && v !== undefined) f[k] = typeof v === 'string' ? v : String(v);
  }
  for (const k of NUMBER_FIELDS) {
    const v = numberOf(get(k));
    if (v !== undefined) f[k] = v;
  }
  for (const k of BIGINT_FIELDS) {
    const v = numberOf(get(k));
    if (v !== undefined) f[k] = v;
  }
  for (const k of BOOLEAN_FIELDS) {
    const v = get(k);
    if (typeof v === 'boolean') f[k] = v;
  }
  for (const k of TAG_FIELDS) {
    const v = tagList(get(k));
    if (v !== undefined) f[k] = v;
  }
  for (const k of NUMBER_MAP_FIELDS) {
    const v = numberMap(get(k));
    if (v !== undefined) f[k] = v;
  }
  for (const k of STRING_MAP_FIELDS) {
    const v = stringMap(get(k));
    if (v !== undefined) f[k] = v;
  }
  for (const k of ANY_VALUE_FIELDS) {
    const v = get(k);
    if (v !== null && v !== undefined) f[k] = v;
  }
  return f;
}

/** Whether fields make a draft: an id, a type and a creation time. */
export function isDraft(f: RecordFields): f is Draft {
  return f.id !== undefined && f.type !== undefined && f.created_at !== undefined;
}

/** Whether fields make a log row: a draft placed in a project and run, with a seq. */
export function isLogRow(f: RecordFields): f is LogRow {
  return isDraft(f) && f.seq !== undefined && f.project_id !== undefined && f.run_id !== undefined;
}
