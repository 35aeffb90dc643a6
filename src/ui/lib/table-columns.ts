// Which columns a table shows by default, what they are called, and what each request selects
// (DOM-free: unit-tested under Node).
import type { TableLevel } from './routes.js';
import type { ColumnInfo } from './types.js';

const DEFAULTS: Record<TableLevel, string[]> = {
  traces: ['name', 'input', 'output', 'created_at', 'metrics/duration_ns', 'metrics/num_total_tokens', 'status_code', 'tags'],
  spans: ['type', 'name', 'input', 'output', 'created_at', 'metrics/duration_ns', 'metrics/num_total_tokens', 'status_code', 'tags'],
  sessions: ['name', 'input', 'output', 'created_at', 'metrics/duration_ns', 'metrics/num_total_tokens'],
};

const LABELS: Record<string, string> = {
  type: 'Kind',
  created_at: 'Created',
  updated_at: 'Updated',
  status_code: 'Status',
  'metrics/duration_ns': 'Duration',
  'metrics/num_total_tokens': 'Tokens',
  'metrics/num_input_tokens': 'Input tokens',
  'metrics/num_output_tokens': 'Output tokens',
  'metrics/time_to_first_token_ns': 'Time to first token',
};

export function columnLabel(c: ColumnInfo | undefined, id: string): string {
  return LABELS[id] ?? c?.label ?? id.replace(/^metrics\//, '');
}

/** The columns to show: the URL's choice, else the level's defaults, keeping only those the run has. */
export function visibleColumns(level: TableLevel, chosen: string[] | null, available: readonly ColumnInfo[]): string[] {
  const known = new Set(available.map((c) => c.id));
  const wanted = chosen ?? DEFAULTS[level];
  const out = wanted.filter((id) => known.has(id));
  return out.length ? out : available.slice(0, 4).map((c) => c.id);
}

export const defaultColumns = (level: TableLevel): string[] => DEFAULTS[level];

/** Column ids a table page asks partial_search for: the visible ones plus what a row always needs. */
export function selectedColumnIds(visible: readonly string[], available: readonly ColumnInfo[]): string[] {
  const known = new Set(available.map((c) => c.id));
  const extra = ['name', 'created_at', 'status_code', 'error_message'].filter((id) => known.has(id));
  return [...new Set([...visible, ...extra])];
}

/** The direction a first click on a header sorts by: largest or newest first, text A to Z. */
export function firstSortAscending(c: ColumnInfo | undefined): boolean {
  const t = c?.data_type ?? (c?.category === 'metric' ? 'floating_point' : 'text');
  return !(t === 'integer' || t === 'floating_point' || t === 'timestamp');
}
