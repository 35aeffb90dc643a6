// Stored rows (as DuckDB returns them) <-> API records and log lines. The one place that knows how
// input/output keep their original shape and how maps and timestamps come back from DuckDB.
import type { Row } from '../db/database.js';
import { formatTimestampUs } from './time.js';
import type { WireRow } from '../storage/record-store.js';


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

/** A stored row back into the log-line form, to write a new version of the record. */
export function storedToWire(row: Row): WireRow {
  const w: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) {
    if (v === null || v === undefined || k === 'input_json' || k === 'output_json') continue;
    w[k] = typeof v === 'bigint' ? Number(v) : v;
  }
  w['input'] = ioValue(row['input'], row['input_json']);
  w['output'] = ioValue(row['output'], row['output_json']);
  if (row['metrics'] != null) w['metrics'] = mapObject(row['metrics']);
  if (row['user_metadata'] != null) w['user_metadata'] = mapObject(row['user_metadata']);
  if (row['dataset_metadata'] != null) w['dataset_metadata'] = mapObject(row['dataset_metadata']);
  if (row['tools'] != null) w['tools'] = parseJson(row['tools']);
  if (row['extra'] != null) w['extra'] = parseJson(row['extra']);
  return w as WireRow;
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
 * A stored row as the API returns it (an Extended*Record of COMPAT.md 5.5). Absent columns of a
 * partial selection stay absent. Empty annotation/feedback structures are included with full records.
 */
export function storedToRecord(row: Row, full = true): Record<string, unknown> {
  const type = String(row['type']);
  const r: Record<string, unknown> = {};
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
