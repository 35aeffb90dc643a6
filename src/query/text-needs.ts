// Substrings a filter requires of the indexed text columns: `contains` leaves (either case) that every
// matching record must satisfy, i.e. reached from the root through AND nodes only. A leaf under OR or
// NOT is not required (a record may match without it), so it gives the text index nothing to skip by.
// The filter itself still runs on every row read: these only let reads leave out row groups.
import type { Expr } from './filter-ast.js';

export interface TextRequirement {
  /** Physical column (the registry's id of a text column). */
  readonly column: string;
  readonly needle: string;
}

const INDEXED = new Set(['name', 'input', 'output']);

export function requiredContains(e: Expr | null): TextRequirement[] {
  if (e === null) return [];
  if ('leaf' in e) {
    const l = e.leaf;
    if (l.kind === 'text' && l.op === 'contains' && typeof l.value === 'string' && INDEXED.has(l.column.id)) return [{ column: l.column.id, needle: l.value }];
    return [];
  }
  if ('and' in e) return e.and.flatMap(requiredContains);
  return [];
}
