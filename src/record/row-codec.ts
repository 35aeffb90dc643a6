// Stored rows (as DuckDB returns them) <-> API records and log rows. The one place that knows how
// input/output keep their original shape and how maps and timestamps come back from DuckDB.
import { formatTimestampUs } from './time.js';
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
import type { ApiRecord, LogRow, MapEntries, RecordLinks, SelectedRow, StoredRow } from './record.js';

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

function mapObject<T>(v: unknown): Record<string, T> {
  const out: Record<string, T> = {};
  if (Array.isArray(v)) for (const e of v as { key: string; value: T }[]) out[e.key] = e.value;
  return out;
}

function parseJson(text: unknown): unknown {
  if (typeof text !== 'string') return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function ioValue(text: unknown, isJson: unknown): unknown {
  if (text === null || text === undefined) return null;
  return isJson ? parseJson(text) : text;
}

/** A MAP's entries as an object; entries without a value are left out (a batch would not store them). */
function entriesObject<V>(entries: MapEntries<V>): Record<string, V> {
  const out: Record<string, V> = {};
  for (const e of entries) if (e.value !== null) out[e.key] = e.value;
  return out;
}

/** A stored row back into the log-row form, to write a new version of the record. NULLs are left out. */
export function storedToWire(row: StoredRow): LogRow {
  const w: LogRow = {
    seq: Number(row.seq),
    id: row.id,
    type: row.type,
    project_id: row.project_id,
    run_id: row.run_id,
    created_at: Number(row.created_at),
  };
  for (const k of STRING_FIELDS) {
    const v = row[k];
    if (v !== null) w[k] = v;
  }
  for (const k of NUMBER_FIELDS) {
    const v = row[k];
    if (v !== null) w[k] = v;
  }
  for (const k of BIGINT_FIELDS) {
    const v = row[k];
    if (v !== null) w[k] = Number(v);
  }
  for (const k of BOOLEAN_FIELDS) {
    const v = row[k];
    if (v !== null) w[k] = v;
  }
  for (const k of TAG_FIELDS) {
    const v = row[k];
    // A null tag reads back as the text a batch would store for it.
    if (v !== null) w[k] = v.map((t) => (typeof t === 'string' ? t : String(t)));
  }
  for (const k of NUMBER_MAP_FIELDS) {
    const v = row[k];
    if (v !== null) w[k] = entriesObject(v);
  }
  for (const k of STRING_MAP_FIELDS) {
    const v = row[k];
    if (v !== null) w[k] = entriesObject(v);
  }
  for (const k of JSON_FIELDS) {
    const v = row[k];
    if (v !== null) w[k] = parseJson(v);
  }
  for (const k of IO_FIELDS) w[k] = ioValue(row[k], row[`${k}_json`]);
  return w;
}

/** The links of a stored record (see RecordLinks). */
export function linksOf(row: StoredRow): RecordLinks {
  return {
    seq: Number(row.seq),
    project_id: row.project_id,
    type: row.type,
    trace_id: row.trace_id,
    session_id: row.session_id,
    has_children: row.has_children === true,
  };
}

const SPAN_ONLY = ['parent_id', 'step_number'] as const;
const BY_KIND: Record<string, readonly string[]> = {
  agent: ['agent_type'],
  llm: ['tools', 'model', 'temperature', 'finish_reason'],
  tool: ['tool_call_id'],
  control: ['control_id', 'agent_name', 'check_stage', 'applies_to', 'evaluator_name', 'selector_path'],
  session: ['previous_session_id'],
};

/**
 * A stored row as the API returns it (an Extended*Record). Absent columns of a
 * partial selection stay absent. Empty annotation/feedback structures are included with full records.
 */
export function storedToRecord(row: SelectedRow, full = true): ApiRecord {
  const type = String(row['type']);
  const r: ApiRecord = {};
  const has = (k: string) => k in row;
  const set = (k: string, v: unknown) => {
    if (has(k)) r[k] = v;
  };
  set('id', row['id']);
  set('type', type);
  set('project_id', row['project_id']);
  set('run_id', row['run_id']);
  if (type !== 'session') set('session_id', row['session_id']);
  if (type !== 'session') set('trace_id', row['trace_id']);
  if (type !== 'trace' && type !== 'session') for (const k of SPAN_ONLY) set(k, k === 'step_number' ? num(row[k]) : row[k]);
  set('name', row['name'] ?? '');
  if (has('input')) r['input'] = ioValue(row['input'], row['input_json']) ?? '';
  if (has('output')) r['output'] = ioValue(row['output'], row['output_json']);
  set('created_at', row['created_at'] == null ? null : formatTimestampUs(Number(row['created_at'])));
  set('updated_at', row['updated_at'] == null ? null : formatTimestampUs(Number(row['updated_at'])));
  if (type !== 'session') set('tags', (row['tags'] as string[] | null) ?? []);
  set('metrics', mapObject(row['metrics']));
  set('user_metadata', mapObject(row['user_metadata']));
  set('dataset_metadata', mapObject(row['dataset_metadata']));
  set('status_code', num(row['status_code']));
  set('external_id', row['external_id'] ?? null);
  set('dataset_input', row['dataset_input'] ?? null);
  set('dataset_output', row['dataset_output'] ?? null);
  set('is_complete', row['is_complete'] ?? true);
  set('has_children', row['has_children'] ?? false);
  set('progress_message', row['progress_message'] ?? '');
  set('error_message', row['error_message'] ?? '');
  for (const k of BY_KIND[type] ?? []) {
    if (!has(k)) continue;
    const v = row[k];
    r[k] = k === 'tools' ? parseJson(v) : typeof v === 'bigint' ? Number(v) : (v ?? null);
  }
  if (has('extra') && row['extra'] != null) {
    const extra = parseJson(row['extra']) as Record<string, unknown>;
    for (const k of ['events', 'redacted_input', 'redacted_output'] as const) if (extra[k] !== undefined) r[k] = extra[k];
    if (extra['metrics'] && has('metrics')) r['metrics'] = { ...(r['metrics'] as object), ...(extra['metrics'] as object) };
  }
  if (full) {
    r['feedback_rating_info'] = {};
    r['annotations'] = {};
    r['annotation_aggregates'] = {};
    r['annotation_agreement'] = {};
    r['annotation_queue_ids'] = [];
    r['file_ids'] = [];
    r['file_modalities'] = [];
    r['metric_info'] = null;
    r['files'] = null;
  }
  return r;
}
