// The validated filter tree: what the compiler and the planner work on. Built by validate-filter.ts
// from the request body (whose shapes are in src/schemas/query.ts); every column is resolved already.
import type { ColumnDef, FilterType } from './columns.js';

/** Operators by filter kind (COMPAT.md 4); types and validation derive from this one table. */
export const OPERATORS = {
  id: ['eq', 'ne', 'one_of', 'not_in', 'contains'],
  date: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte'],
  number: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'between'],
  boolean: ['eq', 'ne'],
  collection: ['eq', 'contains', 'one_of', 'not_in'],
  text: ['eq', 'ne', 'contains', 'one_of', 'not_in'],
  fully_annotated: [],
} as const satisfies Record<FilterType, readonly string[]>;

/** Kinds whose operator may be left out, and what it then is. */
export const DEFAULT_OPERATOR: Partial<Record<FilterType, string>> = { id: 'eq', boolean: 'eq' };

type Op<K extends FilterType> = (typeof OPERATORS)[K][number];

export type Leaf =
  | { kind: 'text'; column: ColumnDef; op: Op<'text'>; value: string | string[]; caseSensitive: boolean }
  | { kind: 'collection'; column: ColumnDef; op: Op<'collection'>; value: string | string[]; caseSensitive: boolean }
  | { kind: 'id'; column: ColumnDef; op: Op<'id'>; value: string | string[] }
  | { kind: 'date'; column: ColumnDef; op: Op<'date'>; value: number }
  | { kind: 'number'; column: ColumnDef; op: Op<'number'>; value: number | [number, number] }
  | { kind: 'boolean'; column: ColumnDef; op: Op<'boolean'>; value: boolean }
  | { kind: 'fully_annotated'; userIds: string[] | null };

export type Expr = { leaf: Leaf } | { and: Expr[] } | { or: Expr[] } | { not: Expr };

/** Metric names an expression reads (for the planner's roll-ups). */
export function metricsOf(e: Expr | null, out = new Set<string>()): Set<string> {
  if (e === null) return out;
  if ('leaf' in e) {
    if (e.leaf.kind !== 'fully_annotated' && e.leaf.column.metric !== undefined) out.add(e.leaf.column.metric);
  } else if ('and' in e) e.and.forEach((x) => metricsOf(x, out));
  else if ('or' in e) e.or.forEach((x) => metricsOf(x, out));
  else metricsOf(e.not, out);
  return out;
}

/** Span kinds that never have children (ingest refuses child spans under them). */
export const CHILDLESS_TYPES: ReadonlySet<string> = new Set(['llm', 'control']);

/** Types a leaf pins the row to (text eq / one_of on `type`), or null when it does not. */
function typesOf(e: Expr): Set<string> | null {
  if (!('leaf' in e) || e.leaf.kind !== 'text' || e.leaf.column.id !== 'type') return null;
  if (e.leaf.op !== 'eq' && e.leaf.op !== 'one_of') return null;
  const values = Array.isArray(e.leaf.value) ? e.leaf.value : [e.leaf.value];
  return new Set(values.map((v) => (e.leaf.kind === 'text' && e.leaf.caseSensitive ? v : v.toLowerCase())));
}

function intersect(a: Set<string> | null, b: Set<string> | null): Set<string> | null {
  if (a === null) return b;
  if (b === null) return a;
  return new Set([...a].filter((x) => b.has(x)));
}

const childless = (types: Set<string> | null) => types !== null && [...types].every((t) => CHILDLESS_TYPES.has(t));

/**
 * Metrics whose roll-ups a query can skip: every place the filter reads them is ANDed with a `type`
 * test that only llm or control spans pass, and those never have descendants, so their value is
 * their own. (A static look at the tree, sound for any nesting: a restriction from an enclosing AND
 * holds inside its OR and NOT children; one inside a NOT restricts nothing.)
 */
export function metricsWithoutRollUp(e: Expr | null): Set<string> {
  const safe = new Set<string>();
  const unsafe = new Set<string>();
  const walk = (x: Expr, types: Set<string> | null): void => {
    if ('leaf' in x) {
      if (x.leaf.kind !== 'fully_annotated' && x.leaf.column.metric !== undefined) (childless(types) ? safe : unsafe).add(x.leaf.column.metric);
    } else if ('and' in x) {
      let here = types;
      for (const c of x.and) here = intersect(here, typesOf(c));
      for (const c of x.and) walk(c, here);
    } else if ('or' in x) {
      for (const c of x.or) walk(c, intersect(types, typesOf(c)));
    } else {
      walk(x.not, types);
    }
  };
  if (e) walk(e, typesOf(e));
  for (const m of unsafe) safe.delete(m);
  return safe;
}

/** Whether every row a filter admits is an llm or control span (so no row has descendants). */
export function onlyChildless(e: Expr | null): boolean {
  if (e === null) return false;
  if ('and' in e) {
    let types: Set<string> | null = null;
    for (const c of e.and) types = intersect(types, typesOf(c));
    return childless(types);
  }
  return childless(typesOf(e));
}
