// The validated filter tree: what the compiler and the planner work on. Built by validate-filter.ts
// from the request body (whose shapes are in src/schemas/query.ts); every column is resolved already.
import type { ColumnDef, FilterType } from './columns.js';

/** Operators by filter kind, as the hosted service accepts them; types and validation derive from this one table. */
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
  } else if ('and' in e)
    e.and.forEach((x) => {
      metricsOf(x, out);
    });
  else if ('or' in e)
    e.or.forEach((x) => {
      metricsOf(x, out);
    });
  else metricsOf(e.not, out);
  return out;
}
