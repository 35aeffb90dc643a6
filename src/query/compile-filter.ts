// Filter tree -> one SQL boolean expression over the record alias `r`. Identifiers come only from
// the column registry; every value (and every metric name) is a positional parameter. Pure and
// synchronous; one small function per leaf kind; vectorised DuckDB functions only.
//
// Semantics, decided once (also in the README, "The filter language"):
// - A record without a value (NULL, a missing metric, no tags) never matches a positive test (eq,
//   contains, one_of, gt, between, ...). Every leaf is wrapped in coalesce(..., false), so SQL's
//   three-valued logic never leaks out.
// - Negations are exact complements: `ne` is NOT eq, `not_in` is NOT one_of, and {not: x} is NOT x.
//   So a record without the value DOES match ne, not_in and not.
// - `one_of []` matches nothing; `not_in []` matches everything.
// - case_sensitive defaults to true. When false, both sides go through DuckDB's Unicode lower().
// - `contains` on text is a substring test; on a collection (tags) it is element membership.
//   Collection `eq` compares as sets (order and duplicates ignored); `one_of` means "has any of",
//   `not_in` "has none of". Text on input/output searches their stored text: the string as sent, or
//   the JSON text of a message list or document list.
// - Metric filters read the record's own value; at trace and session level, and for spans with
//   children, a record without its own value takes the roll-up of its descendants' values (the
//   planner supplies that expression through `ctx.metric`).
// - Dates: a value with a zone is converted to UTC, one without a zone is read as UTC; records store
//   UTC microseconds; eq is exact to the microsecond.
// - `between [a, b]` is inclusive on both ends.
// - fully_annotated matches nothing: tracelake has no annotation queues yet.
import type { Expr, Leaf } from './filter-ast.js';
import type { Params } from './params.js';

export interface CompileContext {
  readonly params: Params;
  /** SQL for a metric's value (own value, or own-else-rolled-up), given its name. */
  metric(name: string): string;
}

/** A context whose metric values are the record's own (no roll-ups). */
export function ownMetrics(params: Params): CompileContext {
  return { params, metric: (name) => `r.metrics[${params.add(name)}]` };
}

export function compileFilter(e: Expr, ctx: CompileContext): string {
  if ('leaf' in e) return compileLeaf(e.leaf, ctx);
  if ('and' in e) return e.and.length === 0 ? 'true' : e.and.length === 1 ? compileFilter(e.and[0]!, ctx) : `(${e.and.map((x) => compileFilter(x, ctx)).join(' AND ')})`;
  if ('or' in e) return e.or.length === 0 ? 'false' : e.or.length === 1 ? compileFilter(e.or[0]!, ctx) : `(${e.or.map((x) => compileFilter(x, ctx)).join(' OR ')})`;
  return `(NOT ${compileFilter(e.not, ctx)})`;
}

const safe = (sql: string) => `coalesce(${sql}, false)`;
const not = (sql: string) => `(NOT ${sql})`;
const lower = (sql: string, cs: boolean) => (cs ? sql : `lower(${sql})`);
const lowerList = (sql: string, cs: boolean) => (cs ? sql : `list_transform(${sql}, lambda x: lower(x))`);
const asList = (v: string | string[]) => (Array.isArray(v) ? v : [v]);

/**
 * Membership of a column in a list parameter. list_contains compares each row with every value, fine
 * for a few values; a long list (more than LONG_LIST) becomes a hash semi-join instead.
 */
export const LONG_LIST = 16;
function memberOf(col: string, values: string[], cs: boolean, ctx: CompileContext): string {
  const p = `${ctx.params.add(values)}::VARCHAR[]`;
  if (values.length > LONG_LIST) return cs ? `${col} IN (SELECT unnest(${p}))` : `${col} IN (SELECT lower(unnest(${p})))`;
  return `list_contains(${lowerList(p, cs)}, ${col})`;
}

const COMPARE = { eq: '=', gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

function compileLeaf(leaf: Leaf, ctx: CompileContext): string {
  switch (leaf.kind) {
    case 'text':
      return textLeaf(leaf, ctx);
    case 'collection':
      return collectionLeaf(leaf, ctx);
    case 'id':
      return idLeaf(leaf, ctx);
    case 'date':
      return dateLeaf(leaf, ctx);
    case 'number':
      return numberLeaf(leaf, ctx);
    case 'boolean':
      return booleanLeaf(leaf, ctx);
    case 'fully_annotated':
      return 'false';
    default: {
      const never: never = leaf;
      throw new Error(`unknown filter kind ${JSON.stringify(never)}`);
    }
  }
}

function textLeaf(leaf: Extract<Leaf, { kind: 'text' }>, ctx: CompileContext): string {
  const cs = leaf.caseSensitive;
  const col = lower(leaf.column.sql, cs);
  switch (leaf.op) {
    case 'eq':
      return safe(`${col} = ${lower(ctx.params.add(leaf.value as string), cs)}`);
    case 'ne':
      return not(safe(`${col} = ${lower(ctx.params.add(leaf.value as string), cs)}`));
    case 'contains': {
      const pattern = cs ? null : caselessPattern(leaf.value as string);
      if (pattern !== null) return safe(`regexp_matches(${leaf.column.sql}, ${ctx.params.add(pattern)})`);
      return safe(`contains(${col}, ${lower(ctx.params.add(leaf.value as string), cs)})`);
    }
    case 'one_of':
      return safe(memberOf(col, asList(leaf.value), cs, ctx));
    case 'not_in':
      return not(safe(memberOf(col, asList(leaf.value), cs, ctx)));
  }
}

/**
 * A case-insensitive `contains` of an ASCII needle as a regular expression over the text as stored:
 * exactly contains(lower(text), lower(needle)), without lowering every row (measured 1.3-1.9x faster
 * at 300k spans). lower() maps each code point on its own, so a match is a run of code points each
 * lowering to the needle's character: an ASCII letter's two cases, plus U+0130 for i and U+212A (the
 * Kelvin sign) for k, the only code points outside ASCII that DuckDB lowers into it (checked over
 * every code point in test/storage/text-index.test.ts); any other character only itself. Null (use
 * lower()) for an empty or non-ASCII needle.
 */
export function caselessPattern(needle: string): string | null {
  if (needle.length === 0 || !/^[\x00-\x7f]*$/.test(needle)) return null;
  let out = '';
  for (const ch of needle) {
    const c = ch.toLowerCase();
    if (c >= 'a' && c <= 'z') out += `[${c}${c.toUpperCase()}${c === 'i' ? '\\x{130}' : c === 'k' ? '\\x{212A}' : ''}]`;
    else if (/[0-9]/.test(c)) out += c;
    else out += `\\x{${c.charCodeAt(0).toString(16)}}`;
  }
  return out;
}

function collectionLeaf(leaf: Extract<Leaf, { kind: 'collection' }>, ctx: CompileContext): string {
  const cs = leaf.caseSensitive;
  const col = lowerList(`coalesce(${leaf.column.sql}, [])`, cs);
  switch (leaf.op) {
    case 'contains':
      return safe(`list_contains(${col}, ${lower(ctx.params.add(leaf.value as string), cs)})`);
    case 'eq':
      return safe(`list_sort(list_distinct(${col})) = list_sort(list_distinct(${lowerList(`${ctx.params.add(asList(leaf.value))}::VARCHAR[]`, cs)}))`);
    case 'one_of':
      return safe(`list_has_any(${col}, ${lowerList(`${ctx.params.add(asList(leaf.value))}::VARCHAR[]`, cs)})`);
    case 'not_in':
      return not(safe(`list_has_any(${col}, ${lowerList(`${ctx.params.add(asList(leaf.value))}::VARCHAR[]`, cs)})`));
  }
}

function idLeaf(leaf: Extract<Leaf, { kind: 'id' }>, ctx: CompileContext): string {
  const col = leaf.column.sql;
  switch (leaf.op) {
    case 'eq':
      return safe(`${col} = ${ctx.params.add(leaf.value as string)}`);
    case 'ne':
      return not(safe(`${col} = ${ctx.params.add(leaf.value as string)}`));
    case 'contains':
      return safe(`contains(${col}, ${ctx.params.add(leaf.value as string)})`);
    case 'one_of':
      return safe(memberOf(col, asList(leaf.value), true, ctx));
    case 'not_in':
      return not(safe(memberOf(col, asList(leaf.value), true, ctx)));
  }
}

function dateLeaf(leaf: Extract<Leaf, { kind: 'date' }>, ctx: CompileContext): string {
  const v = `make_timestamp(${ctx.params.add(leaf.value)}::BIGINT)`;
  if (leaf.op === 'ne') return not(safe(`${leaf.column.sql} = ${v}`));
  return safe(`${leaf.column.sql} ${COMPARE[leaf.op]} ${v}`);
}

function numberLeaf(leaf: Extract<Leaf, { kind: 'number' }>, ctx: CompileContext): string {
  const col = leaf.column.metric !== undefined ? ctx.metric(leaf.column.metric) : leaf.column.sql;
  if (leaf.op === 'between') {
    const [lo, hi] = leaf.value as [number, number];
    return safe(`${col} BETWEEN ${ctx.params.add(lo)} AND ${ctx.params.add(hi)}`);
  }
  const v = ctx.params.add(leaf.value as number);
  if (leaf.op === 'ne') return not(safe(`${col} = ${v}`));
  return safe(`${col} ${COMPARE[leaf.op]} ${v}`);
}

function booleanLeaf(leaf: Extract<Leaf, { kind: 'boolean' }>, ctx: CompileContext): string {
  const v = ctx.params.add(leaf.value);
  return leaf.op === 'eq' ? safe(`${leaf.column.sql} = ${v}`) : not(safe(`${leaf.column.sql} = ${v}`));
}
