// The operators of the catalog lists (projects, log streams, scorers), one matcher per value kind.
// A matcher is prepared once per request (operator and value checked, case folded, dates parsed) and
// then applied to every row; the lists are small in-memory tables, so this is plain TypeScript.
//
// Decided once, here:
// - A missing value (null) never satisfies eq, contains, one_of, gt, gte, lt, lte or between, and
//   always satisfies ne and not_in ("is not x" is true of nothing). A missing collection is empty.
// - `one_of []` matches nothing; `not_in []` matches everything. one_of/not_in also take one string.
// - eq, ne and contains on text, ids and enums take one string; a list there is refused (use one_of).
// - Text: `contains` is a substring test. case_sensitive false compares lower-cased strings.
// - Ids compare case-insensitively (UUIDs have no case); `contains` is a substring of the id.
// - Collections (tags, node types, capabilities): eq is set equality (a string is a one-item set),
//   contains means every given value is present, one_of means at least one is, not_in none is.
// - Dates compare as instants (any offset accepted); eq is equality to the millisecond.
// - between takes [low, high] and includes both ends.
import { invalid } from '../errors.js';
import {
  BOOL_OPERATORS,
  COLLECTION_OPERATORS,
  DATE_OPERATORS,
  ENUM_OPERATORS,
  ID_OPERATORS,
  NUMBER_OPERATORS,
  TEXT_OPERATORS,
} from '../schemas/list-filters.js';

export type Loc = (string | number)[];
type Op = string;

function checkOperator(op: unknown, allowed: readonly string[], loc: Loc, kind: string): Op {
  if (typeof op === 'string' && allowed.includes(op)) return op;
  throw invalid(
    [...loc, 'operator'],
    `Input should be one of ${allowed.map((a) => `'${a}'`).join(', ')} (operators of a ${kind} filter)`,
    op,
    'enum',
  );
}

/** One string for eq/ne/contains, a list (or one string) for one_of/not_in. */
function strings(op: Op, value: unknown, loc: Loc): string[] {
  const many = op === 'one_of' || op === 'not_in';
  if (typeof value === 'string') return [value];
  if (many && Array.isArray(value) && value.every((v) => typeof v === 'string')) return value as string[];
  if (!many && Array.isArray(value))
    throw invalid([...loc, 'value'], `operator ${op} takes one string; use one_of or not_in for a list`, undefined, 'string_type');
  throw invalid(
    [...loc, 'value'],
    many ? 'Input should be a valid string or a list of strings' : 'Input should be a valid string',
    value,
    'string_type',
  );
}

/** name, label, project and run names. `fold` normalises both sides (case folding, or looser). */
export function textMatcher(
  op: unknown,
  value: unknown,
  fold: (s: string) => string,
  loc: Loc,
  allowed: readonly string[] = TEXT_OPERATORS,
): (actual: string | null | undefined) => boolean {
  const o = checkOperator(op, allowed, loc, 'text');
  const wanted = strings(o, value, loc).map(fold);
  const first = wanted[0] ?? '';
  const set = new Set(wanted);
  switch (o) {
    case 'eq':
      return (a) => a != null && fold(a) === first;
    case 'ne':
      return (a) => a == null || fold(a) !== first;
    case 'contains':
      return (a) => a != null && fold(a).includes(first);
    case 'one_of':
      return (a) => a != null && set.has(fold(a));
    default:
      return (a) => a == null || !set.has(fold(a));
  }
}

export const exact = (s: string): string => s;
export const lower = (s: string): string => s.toLowerCase();
export const caseFold = (caseSensitive: boolean | undefined, byDefault: boolean): ((s: string) => string) =>
  (caseSensitive ?? byDefault) ? exact : lower;

/** Enumerations (scorer_type, model_type, project type): exact values, no contains. */
export function enumMatcher(op: unknown, value: unknown, loc: Loc): (actual: string | null | undefined) => boolean {
  return textMatcher(op, value, exact, loc, ENUM_OPERATORS);
}

/** Identifiers. `extra` lets `contains` also look at a second text (a creator's email). */
export function idMatcher(op: unknown, value: unknown, loc: Loc): (actual: string | null | undefined, extra?: string | null) => boolean {
  const o = checkOperator(op ?? 'eq', ID_OPERATORS, loc, 'id');
  if (o === 'contains') {
    const needle = strings(o, value, loc)[0]!.toLowerCase();
    return (a, extra) => a?.toLowerCase().includes(needle) === true || extra?.toLowerCase().includes(needle) === true;
  }
  const m = textMatcher(o, value, lower, loc, ID_OPERATORS);
  return (a) => m(a);
}

export function dateMatcher(op: unknown, value: unknown, loc: Loc): (actual: string | null | undefined) => boolean {
  const o = checkOperator(op, DATE_OPERATORS, loc, 'date');
  const t = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(t)) throw invalid([...loc, 'value'], 'Input should be a valid datetime', value, 'datetime_parsing');
  const cmp = comparator(o);
  return (a) => {
    if (a == null) return o === 'ne';
    return cmp(Date.parse(a), t);
  };
}

export function numberMatcher(op: unknown, value: unknown, loc: Loc): (actual: number | null | undefined) => boolean {
  const o = checkOperator(op, NUMBER_OPERATORS, loc, 'number');
  if (o === 'between') {
    if (!Array.isArray(value) || value.length !== 2 || !value.every((v) => typeof v === 'number' && Number.isFinite(v))) {
      throw invalid([...loc, 'value'], 'between takes a list of two numbers [low, high]', undefined, 'list_type');
    }
    const [lo, hi] = value as [number, number];
    if (lo > hi) throw invalid([...loc, 'value'], `between needs low <= high (got [${lo}, ${hi}])`, undefined, 'value_error');
    return (a) => a != null && a >= lo && a <= hi;
  }
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw invalid(
      [...loc, 'value'],
      `operator ${o} takes one number${Array.isArray(value) ? '; use between for a range' : ''}`,
      Array.isArray(value) ? undefined : value,
      'float_type',
    );
  }
  const cmp = comparator(o);
  return (a) => (a == null ? o === 'ne' : cmp(a, value));
}

function comparator(o: Op): (a: number, b: number) => boolean {
  switch (o) {
    case 'eq':
      return (a, b) => a === b;
    case 'ne':
      return (a, b) => a !== b;
    case 'gt':
      return (a, b) => a > b;
    case 'gte':
      return (a, b) => a >= b;
    case 'lt':
      return (a, b) => a < b;
    default:
      return (a, b) => a <= b;
  }
}

/** tags, scoreable_node_types, multimodal_capabilities. */
export function collectionMatcher(
  op: unknown,
  value: unknown,
  fold: (s: string) => string,
  loc: Loc,
): (actual: readonly string[] | null | undefined) => boolean {
  const o = checkOperator(op, COLLECTION_OPERATORS, loc, 'collection');
  let wanted: string[];
  if (typeof value === 'string') wanted = [value];
  else if (Array.isArray(value) && value.every((v) => typeof v === 'string')) wanted = value as string[];
  else throw invalid([...loc, 'value'], 'Input should be a valid string or a list of strings', value, 'string_type');
  const want = [...new Set(wanted.map(fold))];
  const wantSet = new Set(want);
  // Rows hold a handful of values: plain loops, no per-row sets.
  const has = (a: readonly string[], w: string): boolean => a.some((x) => fold(x) === w);
  switch (o) {
    case 'eq':
      return (a) => {
        const xs = a ?? [];
        return want.every((w) => has(xs, w)) && xs.every((x) => wantSet.has(fold(x)));
      };
    case 'contains':
      return (a) => want.every((w) => has(a ?? [], w));
    case 'one_of':
      return (a) => (a ?? []).some((x) => wantSet.has(fold(x)));
    default:
      return (a) => !(a ?? []).some((x) => wantSet.has(fold(x)));
  }
}

export function boolMatcher(op: unknown, value: unknown, loc: Loc): (actual: boolean) => boolean {
  const o = checkOperator(op ?? 'eq', BOOL_OPERATORS, loc, 'boolean');
  if (typeof value !== 'boolean') throw invalid([...loc, 'value'], 'Input should be a valid boolean', value, 'bool_type');
  return o === 'eq' ? (a) => a === value : (a) => a !== value;
}
