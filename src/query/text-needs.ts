// Substrings a filter requires of the indexed text columns (name, input, output): `contains` leaves
// (either case) that every matching record must satisfy. Required are the leaves reached from the
// root through AND nodes, and an OR node whose every branch requires something becomes "one of these
// lists". A leaf under NOT requires nothing (a record may match without it), nor does an OR with a
// branch that requires nothing. The filter itself still runs on every row read: these only let
// reads leave out row groups that cannot hold a match (src/storage/indexes/text-index.ts).
import type { Expr } from './filter-ast.js';

/** What a matching row holds: a substring of a column, or one of several lists of such (each all required). */
export type TextRequirement =
  | { readonly column: string; readonly needle: string }
  | { readonly any: readonly (readonly TextRequirement[])[] };

const INDEXED = new Set(['name', 'input', 'output']);

/** What every record matching `e` holds, as a list (all required); empty when nothing is known. */
export function requiredContains(e: Expr | null): TextRequirement[] {
  if (e === null) return [];
  if ('leaf' in e) {
    const l = e.leaf;
    if (l.kind === 'text' && l.op === 'contains' && typeof l.value === 'string' && INDEXED.has(l.column.id))
      return [{ column: l.column.id, needle: l.value }];
    return [];
  }
  if ('and' in e) return e.and.flatMap(requiredContains);
  if ('or' in e) {
    const alts = e.or.map(requiredContains);
    return alts.length > 0 && alts.every((a) => a.length > 0) ? [{ any: alts }] : [];
  }
  return [];
}
