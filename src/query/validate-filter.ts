// Request filters (the flat `filters` list and the `filter_tree`) -> a validated Expr, or a 422 that
// names the JSON path, the bad value and the allowed choices. Runs before any SQL is written.
import { InvalidRequestError, type ValidationIssue } from '../errors.js';
import { parseTimestampUs } from '../record/time.js';
import { resolveColumn, suggestColumn, type ColumnDef, type FilterType, type Level, type MetricInfo } from './columns.js';
import { DEFAULT_OPERATOR, OPERATORS, type Expr, type Leaf } from './filter-ast.js';

export const QUERY_LIMITS = {
  /** Deepest nesting of and/or/not accepted in a filter tree. */
  maxDepth: 32,
  /** Most leaves and nodes in one request's filters and tree together. */
  maxNodes: 1000,
  /** Most values in one one_of / not_in list. */
  maxListValues: 10_000,
};

type Loc = (string | number)[];

export interface FilterInput {
  filters?: unknown[] | null;
  filter_tree?: unknown;
}

class Collector {
  readonly issues: ValidationIssue[] = [];
  nodes = 0;
  fail(loc: Loc, msg: string, input?: unknown, type = 'value_error'): null {
    const issue: ValidationIssue = { loc, msg, type };
    if (input !== undefined && (typeof input !== 'object' || input === null)) issue.input = input;
    this.issues.push(issue);
    return null;
  }
}

/**
 * Validates `filters` and `filter_tree` together; null when neither filters anything. `at`: where the
 * two fields sit in the request (an aggregate's measure has a filter tree of its own).
 */
export function validateFilters(
  input: FilterInput,
  level: Level,
  metrics?: (name: string) => MetricInfo | undefined,
  at: Loc = ['body'],
): Expr | null {
  const c = new Collector();
  const parts: Expr[] = [];
  (input.filters ?? []).forEach((f, i) => {
    const leaf = validateLeaf(f, [...at, 'filters', i], level, metrics, c);
    if (leaf) parts.push({ leaf });
  });
  if (input.filter_tree !== undefined && input.filter_tree !== null) {
    const tree = validateNode(input.filter_tree, [...at, 'filter_tree'], 1, level, metrics, c);
    if (tree) parts.push(tree);
  }
  if (c.issues.length > 0) throw new InvalidRequestError(c.issues);
  if (parts.length === 0) return null;
  return parts.length === 1 ? parts[0]! : { and: parts };
}

function validateNode(
  node: unknown,
  loc: Loc,
  depth: number,
  level: Level,
  metrics: ((n: string) => MetricInfo | undefined) | undefined,
  c: Collector,
): Expr | null {
  if (++c.nodes > QUERY_LIMITS.maxNodes)
    return c.issues.length === 0 ? c.fail(loc, `filter tree has more than ${QUERY_LIMITS.maxNodes} nodes`, undefined, 'too_long') : null;
  if (depth > QUERY_LIMITS.maxDepth)
    return c.fail(loc, `filter tree is nested more than ${QUERY_LIMITS.maxDepth} levels deep`, undefined, 'too_deep');
  if (typeof node !== 'object' || node === null || Array.isArray(node))
    return c.fail(loc, 'Input should be a filter node: {filter}, {and: [...]}, {or: [...]} or {not: {...}}', node, 'model_type');
  const keys = ['filter', 'and', 'or', 'not'].filter(
    (k) => (node as Record<string, unknown>)[k] !== undefined && (node as Record<string, unknown>)[k] !== null,
  );
  if (keys.length !== 1) {
    return c.fail(
      loc,
      `a filter node has exactly one of filter, and, or, not (got ${keys.length === 0 ? 'none' : keys.join(', ')})`,
      undefined,
      'value_error',
    );
  }
  const key = keys[0]!;
  const value = (node as Record<string, unknown>)[key];
  if (key === 'filter') {
    const leaf = validateLeaf(value, [...loc, 'filter'], level, metrics, c);
    return leaf ? { leaf } : null;
  }
  if (key === 'not') {
    const inner = validateNode(value, [...loc, 'not'], depth + 1, level, metrics, c);
    return inner ? { not: inner } : null;
  }
  if (!Array.isArray(value)) return c.fail([...loc, key], 'Input should be a valid list of filter nodes', value, 'list_type');
  const items: Expr[] = [];
  let ok = true;
  value.forEach((child, i) => {
    const e = validateNode(child, [...loc, key, i], depth + 1, level, metrics, c);
    if (e) items.push(e);
    else ok = false;
  });
  if (!ok) return null;
  return key === 'and' ? { and: items } : { or: items };
}

function validateLeaf(
  raw: unknown,
  loc: Loc,
  level: Level,
  metrics: ((n: string) => MetricInfo | undefined) | undefined,
  c: Collector,
): Leaf | null {
  c.nodes++;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return c.fail(loc, 'Input should be a filter object', raw, 'model_type');
  const f = raw as Record<string, unknown>;
  const type = f['type'];
  const kinds = Object.keys(OPERATORS) as FilterType[];
  if (typeof type !== 'string' || !kinds.includes(type as FilterType)) {
    return c.fail([...loc, 'type'], `Input should be one of ${kinds.map((k) => `'${k}'`).join(', ')}`, type, 'enum');
  }
  let kind = type as FilterType;
  if (kind === 'fully_annotated') {
    if (f['column_id'] !== undefined && f['column_id'] !== null && f['column_id'] !== 'fully_annotated') {
      return c.fail([...loc, 'column_id'], "Input should be 'fully_annotated'", f['column_id'], 'literal_error');
    }
    const users = f['user_ids'];
    if (users !== undefined && users !== null && (!Array.isArray(users) || users.some((u) => typeof u !== 'string'))) {
      return c.fail([...loc, 'user_ids'], 'Input should be a list of user ids', users, 'list_type');
    }
    return { kind, userIds: (users as string[] | null | undefined) ?? null };
  }
  const column = validateColumn(f, loc, kind, level, metrics, c);
  if (!column) return null;
  const op = f['operator'] ?? DEFAULT_OPERATOR[kind];
  // An id filter on a text column is an exact text match: galileo 1.32 looks sessions up by
  // external_id that way (its operators are all text operators too).
  if (kind === 'id' && column.filter_type === 'text') kind = 'text';
  const allowed = OPERATORS[kind] as readonly string[];
  if (typeof op !== 'string' || !allowed.includes(op)) {
    const msg =
      op === undefined
        ? `Field required: ${kind} filters need an operator (one of ${allowed.join(', ')})`
        : `Input should be one of ${allowed.map((o) => `'${o}'`).join(', ')} for a ${kind} filter`;
    return c.fail([...loc, 'operator'], msg, op, op === undefined ? 'missing' : 'enum');
  }
  const cs = f['case_sensitive'];
  if (cs !== undefined && cs !== null && typeof cs !== 'boolean')
    return c.fail([...loc, 'case_sensitive'], 'Input should be a valid boolean', cs, 'bool_type');
  const caseSensitive = cs !== false;
  const vloc = [...loc, 'value'];
  const value = f['value'];
  switch (kind) {
    case 'text':
    case 'collection': {
      const listOp = op === 'one_of' || op === 'not_in' || (kind === 'collection' && op === 'eq');
      const v = listOp ? stringList(value, vloc, c) : oneString(value, vloc, c, op);
      if (v === null) return null;
      if (kind === 'text' && column.allowed_values && op === 'eq' && caseSensitive && !column.allowed_values.includes(v as string)) {
        return c.fail(
          vloc,
          `Input should be one of ${column.allowed_values.map((a) => `'${a}'`).join(', ')} for column ${column.id}`,
          value,
          'enum',
        );
      }
      return kind === 'text'
        ? { kind, column, op: op as Extract<Leaf, { kind: 'text' }>['op'], value: v, caseSensitive }
        : { kind, column, op: op as Extract<Leaf, { kind: 'collection' }>['op'], value: v, caseSensitive };
    }
    case 'id': {
      const listOp = op === 'one_of' || op === 'not_in';
      const v = listOp ? stringList(value, vloc, c) : oneString(value, vloc, c, op);
      if (v === null) return null;
      const lowered = Array.isArray(v) ? v.map((x) => x.toLowerCase()) : v.toLowerCase();
      return { kind, column, op: op as Extract<Leaf, { kind: 'id' }>['op'], value: lowered };
    }
    case 'date': {
      if (typeof value !== 'string' && typeof value !== 'number')
        return c.fail(vloc, 'Input should be a valid datetime (ISO 8601)', value, 'datetime_type');
      const us = parseTimestampUs(value);
      if (us === null)
        return c.fail(vloc, 'Input should be a valid datetime (ISO 8601, e.g. 2026-01-31T12:00:00Z)', value, 'datetime_parsing');
      return { kind, column, op: op as Extract<Leaf, { kind: 'date' }>['op'], value: us };
    }
    case 'number': {
      if (op === 'between') {
        if (!Array.isArray(value) || value.length !== 2 || !value.every(isNum))
          return c.fail(vloc, 'between takes a list of two numbers [low, high]', value, 'list_type');
        if ((value[0] as number) > (value[1] as number))
          return c.fail(vloc, 'between takes [low, high] with low <= high', undefined, 'value_error');
        return { kind, column, op: 'between', value: [value[0] as number, value[1] as number] };
      }
      if (!isNum(value))
        return c.fail(
          vloc,
          `Input should be a valid number${Array.isArray(value) ? ' (a list is only accepted by between)' : ''}`,
          value,
          'float_type',
        );
      return { kind, column, op: op as Extract<Leaf, { kind: 'number' }>['op'], value };
    }
    case 'boolean':
      if (typeof value !== 'boolean') return c.fail(vloc, 'Input should be a valid boolean', value, 'bool_type');
      return { kind, column, op: op as Extract<Leaf, { kind: 'boolean' }>['op'], value };
    default:
      return c.fail([...loc, 'type'], `unsupported filter kind ${String(kind)}`);
  }
}

function isNum(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

function oneString(v: unknown, loc: Loc, c: Collector, op: string): string | null {
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return c.fail(loc, `${op} takes one string; use one_of for a list`, undefined, 'string_type');
  return c.fail(loc, 'Input should be a valid string', v, 'string_type');
}

function stringList(v: unknown, loc: Loc, c: Collector): string[] | null {
  if (typeof v === 'string') return [v];
  if (!Array.isArray(v)) return c.fail(loc, 'Input should be a string or a list of strings', v, 'list_type');
  if (v.length > QUERY_LIMITS.maxListValues)
    return c.fail(loc, `a list may hold at most ${QUERY_LIMITS.maxListValues} values`, undefined, 'too_long');
  const bad = v.findIndex((x) => typeof x !== 'string');
  if (bad >= 0) return c.fail([...loc, bad], 'Input should be a valid string', v[bad], 'string_type');
  return v as string[];
}

function validateColumn(
  f: Record<string, unknown>,
  loc: Loc,
  kind: FilterType,
  level: Level,
  metrics: ((n: string) => MetricInfo | undefined) | undefined,
  c: Collector,
): ColumnDef | null {
  const byId = f['column_id'];
  const byName = f['name'];
  if (byId !== undefined && byId !== null && byName !== undefined && byName !== null && byId !== byName) {
    // Either of the two may be the mistake: both are named.
    const msg = `column_id "${String(byId)}" and name "${String(byName)}" name different columns; send one`;
    c.fail([...loc, 'column_id'], msg, undefined);
    return c.fail([...loc, 'name'], msg, undefined);
  }
  const field = byId !== undefined && byId !== null ? 'column_id' : 'name';
  const id = f[field];
  if (id === undefined || id === null) {
    c.fail([...loc, 'column_id'], 'Field required: the column to filter on (column_id, or its alias name)', undefined, 'missing');
    return c.fail([...loc, 'name'], 'Field required: the column to filter on (column_id, or its alias name)', undefined, 'missing');
  }
  if (typeof id !== 'string') return c.fail([...loc, field], 'Input should be a valid string', id, 'string_type');
  const column = resolveColumn(id, level, metrics);
  if (!column) {
    const hint = suggestColumn(id, level);
    return c.fail([...loc, field], `unknown column "${id}" for ${level}s${hint ? `; did you mean "${hint}"?` : ''}`, id, 'value_error');
  }
  if (!column.filterable) return c.fail([...loc, field], `column ${column.id} cannot be filtered`, id);
  if (column.filter_type !== kind && !(kind === 'id' && column.filter_type === 'text')) {
    return c.fail([...loc, 'type'], `column ${column.id} takes a ${column.filter_type} filter, not ${kind}`, kind, 'value_error');
  }
  return column;
}
