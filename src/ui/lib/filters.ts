// The filter builder's model and its translation to and from the API's filter_tree ({filter},
// {and: [...]}, {or: [...]}, {not: ...}). Operators come from each column's filter_type as
// available_columns reports it. Durations (data_unit nano_seconds) are entered in milliseconds.
import type { ColumnInfo, FilterType } from './types.js';

export interface Operator {
  op: string;
  label: string;
}

export const OPERATORS: Record<Exclude<FilterType, 'fully_annotated'>, Operator[]> = {
  text: [
    { op: 'contains', label: 'contains' },
    { op: 'eq', label: 'is' },
    { op: 'ne', label: 'is not' },
    { op: 'one_of', label: 'is one of' },
    { op: 'not_in', label: 'is none of' },
  ],
  collection: [
    { op: 'contains', label: 'has' },
    { op: 'one_of', label: 'has any of' },
    { op: 'not_in', label: 'has none of' },
    { op: 'eq', label: 'is exactly' },
  ],
  id: [
    { op: 'eq', label: 'is' },
    { op: 'ne', label: 'is not' },
    { op: 'contains', label: 'contains' },
    { op: 'one_of', label: 'is one of' },
    { op: 'not_in', label: 'is none of' },
  ],
  date: [
    { op: 'gte', label: 'on or after' },
    { op: 'lt', label: 'before' },
    { op: 'gt', label: 'after' },
    { op: 'lte', label: 'on or before' },
    { op: 'eq', label: 'at' },
    { op: 'ne', label: 'not at' },
  ],
  number: [
    { op: 'gt', label: '>' },
    { op: 'gte', label: '≥' },
    { op: 'lt', label: '<' },
    { op: 'lte', label: '≤' },
    { op: 'eq', label: '=' },
    { op: 'ne', label: '≠' },
    { op: 'between', label: 'between' },
  ],
  boolean: [
    { op: 'eq', label: 'is' },
    { op: 'ne', label: 'is not' },
  ],
};

export const LIST_OPERATORS = new Set(['one_of', 'not_in']);

export interface Cond {
  kind: 'cond';
  key: number;
  column: string;
  operator: string;
  /** What the user typed (lists comma-separated, dates as local date-time, durations in ms). */
  value: string;
  /** The upper bound of `between`. */
  value2: string;
  caseSensitive: boolean;
}

export interface Group {
  kind: 'group';
  key: number;
  op: 'and' | 'or';
  negate: boolean;
  children: (Cond | Group)[];
}

let nextKey = 1;
export const newKey = (): number => nextKey++;

export function filterTypeOf(column: ColumnInfo | undefined): Exclude<FilterType, 'fully_annotated'> {
  const t = column?.filter_type ?? (column?.category === 'metric' ? 'number' : 'text');
  return t === 'fully_annotated' ? 'text' : t;
}

export function operatorsFor(column: ColumnInfo | undefined): Operator[] {
  return OPERATORS[filterTypeOf(column)];
}

/** Factor from what the user types to what the API stores (ms -> ns for durations). */
export const scaleOf = (column: ColumnInfo | undefined): number => (column?.data_unit === 'nano_seconds' ? 1e6 : 1);

export function newCond(column: ColumnInfo): Cond {
  const ops = operatorsFor(column);
  const type = filterTypeOf(column);
  return {
    kind: 'cond',
    key: newKey(),
    column: column.id,
    operator: ops[0]!.op,
    value: type === 'boolean' ? 'true' : '',
    value2: '',
    caseSensitive: type !== 'text',
  };
}

export function newGroup(op: 'and' | 'or' = 'and', children: (Cond | Group)[] = []): Group {
  return { kind: 'group', key: newKey(), op, negate: false, children };
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** An ISO instant as a datetime-local value in the browser's zone (milliseconds kept when present). */
export function isoToLocalInput(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const base = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  return d.getMilliseconds() ? `${base}.${pad(d.getMilliseconds(), 3)}` : base;
}

export type FilterTree = { filter: Record<string, unknown> } | { and: FilterTree[] } | { or: FilterTree[] } | { not: FilterTree };

export interface Built {
  tree: FilterTree | null;
  /** One message per condition that could not be turned into a filter. */
  errors: string[];
}

function leaf(c: Cond, column: ColumnInfo | undefined, errors: string[]): FilterTree | null {
  const type = filterTypeOf(column);
  const label = column?.label ?? c.column;
  const f: Record<string, unknown> = { type, column_id: c.column, operator: c.operator };
  const num = (s: string) => {
    const n = Number(s.trim());
    if (s.trim() === '' || !Number.isFinite(n)) {
      errors.push(`${label}: enter a number`);
      return 0;
    }
    return n * scaleOf(column);
  };
  if (type === 'number') {
    f['value'] = c.operator === 'between' ? [num(c.value), num(c.value2)] : num(c.value);
  } else if (type === 'boolean') {
    f['value'] = c.value === 'true';
  } else if (type === 'date') {
    const d = new Date(c.value);
    if (c.value.trim() === '' || Number.isNaN(d.getTime())) errors.push(`${label}: enter a date and time`);
    else f['value'] = d.toISOString();
  } else if (LIST_OPERATORS.has(c.operator)) {
    f['value'] = c.value
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  } else {
    if (c.value === '') errors.push(`${label}: enter a value`);
    f['value'] = c.value;
  }
  if ((type === 'text' || type === 'collection') && !c.caseSensitive) f['case_sensitive'] = false;
  return { filter: f };
}

function node(n: Cond | Group, columns: ReadonlyMap<string, ColumnInfo>, errors: string[]): FilterTree | null {
  if (n.kind === 'cond') return leaf(n, columns.get(n.column), errors);
  const children = n.children.map((c) => node(c, columns, errors)).filter((c): c is FilterTree => c !== null);
  if (children.length === 0) return null;
  const tree: FilterTree = n.op === 'and' ? { and: children } : { or: children };
  return n.negate ? { not: tree } : tree;
}

export function toFilterTree(root: Group, columns: ReadonlyMap<string, ColumnInfo>): Built {
  const errors: string[] = [];
  const tree = node(root, columns, errors);
  return { tree: errors.length ? null : tree, errors };
}

function condFrom(f: Record<string, unknown>, columns: ReadonlyMap<string, ColumnInfo>): Cond {
  const column = String(f['column_id'] ?? f['name'] ?? '');
  const info = columns.get(column);
  const type = filterTypeOf(
    info ??
      (typeof f['type'] === 'string' ? ({ id: column, category: '', filter_type: f['type'] as FilterType } as ColumnInfo) : undefined),
  );
  const scale = scaleOf(info);
  const show = (v: unknown): string => {
    if (Array.isArray(v)) return v.map(show).join(', ');
    if (typeof v === 'number') return String(v / scale);
    if (type === 'date' && typeof v === 'string') return isoToLocalInput(v);
    return v === null || v === undefined ? '' : String(v);
  };
  const operator = String(f['operator'] ?? 'eq');
  const value = f['value'];
  const between = operator === 'between' && Array.isArray(value);
  return {
    kind: 'cond',
    key: newKey(),
    column,
    operator,
    value: between ? show(value[0]) : show(value),
    value2: between ? show(value[1]) : '',
    caseSensitive: f['case_sensitive'] !== false,
  };
}

function groupFrom(tree: unknown, columns: ReadonlyMap<string, ColumnInfo>): Group {
  const t = (tree ?? {}) as Record<string, unknown>;
  if (Array.isArray(t['and']) || Array.isArray(t['or'])) {
    const op = Array.isArray(t['and']) ? 'and' : 'or';
    const children = (t[op] as unknown[]).map((c) => childFrom(c, columns)).filter((c): c is Cond | Group => c !== null);
    return newGroup(op, children);
  }
  if (t['not'] !== undefined) {
    const inner = groupFrom(t['not'], columns);
    return { ...inner, negate: !inner.negate };
  }
  const c = childFrom(tree, columns);
  return newGroup('and', c ? [c] : []);
}

function childFrom(tree: unknown, columns: ReadonlyMap<string, ColumnInfo>): Cond | Group | null {
  if (tree === null || typeof tree !== 'object') return null;
  const t = tree as Record<string, unknown>;
  if (t['filter'] && typeof t['filter'] === 'object') return condFrom(t['filter'] as Record<string, unknown>, columns);
  if (Array.isArray(t['and']) || Array.isArray(t['or']) || t['not'] !== undefined) return groupFrom(t, columns);
  return null;
}

/** The builder's model for a filter_tree (from the URL); unknown node shapes are dropped. */
export function fromFilterTree(tree: unknown, columns: ReadonlyMap<string, ColumnInfo>): Group {
  return tree ? groupFrom(tree, columns) : newGroup();
}

export function countConditions(tree: unknown): number {
  if (tree === null || typeof tree !== 'object') return 0;
  const t = tree as Record<string, unknown>;
  if (t['filter']) return 1;
  if (Array.isArray(t['and'])) return t['and'].reduce((n: number, c) => n + countConditions(c), 0);
  if (Array.isArray(t['or'])) return t['or'].reduce((n: number, c) => n + countConditions(c), 0);
  return countConditions(t['not']);
}

/** A one-line reading of a filter_tree, e.g. `Name contains "chat" and not (Tags has "beta")`. */
export function describeFilter(tree: unknown, columns: ReadonlyMap<string, ColumnInfo>, top = true): string {
  if (tree === null || typeof tree !== 'object') return '';
  const t = tree as Record<string, unknown>;
  if (t['filter']) {
    const c = condFrom(t['filter'] as Record<string, unknown>, columns);
    const info = columns.get(c.column);
    const op = operatorsFor(info).find((o) => o.op === c.operator)?.label ?? c.operator;
    const unit = scaleOf(info) === 1e6 ? ' ms' : '';
    const quote = (s: string) => (filterTypeOf(info) === 'number' ? `${s}${unit}` : `"${s}"`);
    const value = c.operator === 'between' ? `${quote(c.value)} and ${quote(c.value2)}` : quote(c.value);
    return `${info?.label ?? c.column} ${op} ${value}`;
  }
  for (const op of ['and', 'or'] as const) {
    if (Array.isArray(t[op])) {
      const parts = (t[op] as unknown[]).map((c) => describeFilter(c, columns, false)).filter(Boolean);
      const s = parts.join(` ${op} `);
      return top || parts.length < 2 ? s : `(${s})`;
    }
  }
  if (t['not'] !== undefined) return `not ${describeFilter(t['not'], columns, false).replace(/^(?!\()(.*)$/, '($1)')}`;
  return '';
}
