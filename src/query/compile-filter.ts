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
import { TAG_LIST_COLUMN, TAG_SET_COLUMN, tagSetNeedle } from '../record/record-columns.js';
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

/**
 * The filter as a WHERE condition: the same rows as compileFilter, but leaves outside any NOT drop
 * their coalesce(..., false). Without NOT, AND and OR are monotone, so a NULL leaf that a WHERE then
 * treats as false gives the result false would; under NOT (and in ne, not_in) NULL must become false
 * first, so those keep it. Plain comparisons let DuckDB push conjunctions into the Parquet scan
 * (skipping row groups by their min/max statistics) and cost less per row.
 */
export function compileWhere(e: Expr, ctx: CompileContext): string {
  if ('leaf' in e) return compileLeaf(e.leaf, ctx, true);
  if ('and' in e) return e.and.length === 0 ? 'true' : e.and.length === 1 ? compileWhere(e.and[0]!, ctx) : `(${e.and.map((x) => compileWhere(x, ctx)).join(' AND ')})`;
  if ('or' in e) return e.or.length === 0 ? 'false' : e.or.length === 1 ? compileWhere(e.or[0]!, ctx) : `(${e.or.map((x) => compileWhere(x, ctx)).join(' OR ')})`;
  return `(NOT ${compileFilter(e.not, ctx)})`;
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
 * Membership of a column in a list of values. Up to LONG_LIST values are one placeholder each in an
 * IN list, which DuckDB uses to skip row groups by min/max; it then tests the IN list after the scan
 * (a hash probe), so every column the query reads is decoded for every row. Up to SHORT_LIST values
 * the same placeholders are also tested by list_contains, which DuckDB evaluates inside the scan:
 * the other columns are decoded only where a row matches (measured at 1M spans, keys of a page by
 * 2-32 trace ids: 1.5-3.5x less CPU; a count of the filter column alone costs about the same). A longer
 * list becomes a semi-join on the unnested list parameter. A NULL column yields NULL either way, which
 * compileWhere's positive tests treat as false.
 */
export const LONG_LIST = 256;
export const SHORT_LIST = 32;
/** Tag lists up to this long are tested as substrings of tag_set (one test per value). */
const TAG_SET_LIST = 16;
function memberOf(col: string, values: string[], cs: boolean, ctx: CompileContext): string {
  if (values.length === 0) return 'false';
  if (values.length > LONG_LIST) {
    const p = `${ctx.params.add(values)}::VARCHAR[]`;
    return cs ? `${col} IN (SELECT unnest(${p}))` : `${col} IN (SELECT lower(unnest(${p})))`;
  }
  return inPlaceholders(col, values.map((v) => lower(ctx.params.add(v), cs)));
}

/** `col` in a list of at most LONG_LIST placeholders (or expressions of them), as memberOf tests it. */
export function inPlaceholders(col: string, items: readonly string[]): string {
  const list = items.join(', ');
  if (items.length === 1 || items.length > SHORT_LIST) return `${col} IN (${list})`;
  return `(${col} IN (${list}) AND list_contains([${list}], ${col}))`;
}

const COMPARE = { eq: '=', gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

/** `loose`: the leaf stands outside any NOT (see compileWhere), so a positive test may yield NULL. */
function compileLeaf(leaf: Leaf, ctx: CompileContext, loose = false): string {
  const ok = loose ? (sql: string) => sql : safe;
  switch (leaf.kind) {
    case 'text':
      return textLeaf(leaf, ctx, ok);
    case 'collection':
      return collectionLeaf(leaf, ctx, ok);
    case 'id':
      return idLeaf(leaf, ctx, ok);
    case 'date':
      return dateLeaf(leaf, ctx, ok);
    case 'number':
      return numberLeaf(leaf, ctx, ok);
    case 'boolean':
      return booleanLeaf(leaf, ctx, ok);
    case 'fully_annotated':
      return 'false';
    default: {
      const never: never = leaf;
      throw new Error(`unknown filter kind ${JSON.stringify(never)}`);
    }
  }
}

function textLeaf(leaf: Extract<Leaf, { kind: 'text' }>, ctx: CompileContext, ok: (sql: string) => string): string {
  const cs = leaf.caseSensitive;
  const col = lower(leaf.column.sql, cs);
  switch (leaf.op) {
    case 'eq':
      return ok(`${col} = ${lower(ctx.params.add(leaf.value as string), cs)}`);
    case 'ne':
      return not(safe(`${col} = ${lower(ctx.params.add(leaf.value as string), cs)}`));
    case 'contains': {
      const pattern = cs ? null : caselessPattern(leaf.value as string);
      if (pattern !== null) return ok(`regexp_matches(${leaf.column.sql}, ${ctx.params.add(pattern)})`);
      return ok(`contains(${col}, ${lower(ctx.params.add(leaf.value as string), cs)})`);
    }
    case 'one_of':
      return ok(memberOf(col, asList(leaf.value), cs, ctx));
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
 * every code point in test/storage/indexes/text-index.test.ts); any other character only itself. Null (use
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

function collectionLeaf(leaf: Extract<Leaf, { kind: 'collection' }>, ctx: CompileContext, ok: (sql: string) => string): string {
  const cs = leaf.caseSensitive;
  if (leaf.column.sql === 'r.tags' && leaf.op !== 'eq' && asList(leaf.value).length <= TAG_SET_LIST) return tagSetLeaf(leaf, ctx, ok);
  const col = lowerList(`coalesce(${leaf.column.sql}, [])`, cs);
  switch (leaf.op) {
    case 'contains':
      return ok(`list_contains(${col}, ${lower(ctx.params.add(leaf.value as string), cs)})`);
    case 'eq':
      return ok(`list_sort(list_distinct(${col})) = list_sort(list_distinct(${lowerList(`${ctx.params.add(asList(leaf.value))}::VARCHAR[]`, cs)}))`);
    case 'one_of':
      return ok(`list_has_any(${col}, ${lowerList(`${ctx.params.add(asList(leaf.value))}::VARCHAR[]`, cs)})`);
    case 'not_in':
      return not(safe(`list_has_any(${col}, ${lowerList(`${ctx.params.add(asList(leaf.value))}::VARCHAR[]`, cs)})`));
  }
}

/**
 * Tag membership as substring tests on the tag_set column where segments store it, exactly
 * list_contains over tags (src/record/record-columns.ts: each tag enclosed in \x1f and escaped, so a
 * match is one whole tag; lower() maps each code point alone and never to \x1e, \x1f, 0 or 1); the
 * list test on tag_list elsewhere (memory tables, older segments). A source gives each row one of the
 * two (the other NULL), so only one column is read per part.
 */
function tagSetLeaf(leaf: Extract<Leaf, { kind: 'collection' }>, ctx: CompileContext, ok: (sql: string) => string): string {
  const cs = leaf.caseSensitive;
  const values = asList(leaf.value);
  const set = lower(`r.${TAG_SET_COLUMN}`, cs);
  const list = lowerList(`r.${TAG_LIST_COLUMN}`, cs);
  const any = values.map((v) => `contains(${set}, ${lower(ctx.params.add(tagSetNeedle(v)), cs)})`);
  const bySet = any.length === 0 ? 'false' : any.length === 1 ? any[0]! : `(${any.join(' OR ')})`;
  const byList = leaf.op === 'contains' ? `list_contains(${list}, ${lower(ctx.params.add(values[0]!), cs)})` : `list_has_any(${list}, ${lowerList(`${ctx.params.add(values)}::VARCHAR[]`, cs)})`;
  const has = `coalesce(${bySet}, ${byList})`;
  return leaf.op === 'not_in' ? not(safe(has)) : ok(has);
}

function idLeaf(leaf: Extract<Leaf, { kind: 'id' }>, ctx: CompileContext, ok: (sql: string) => string): string {
  const col = leaf.column.sql;
  switch (leaf.op) {
    case 'eq':
      return ok(`${col} = ${ctx.params.add(leaf.value as string)}`);
    case 'ne':
      return not(safe(`${col} = ${ctx.params.add(leaf.value as string)}`));
    case 'contains':
      return ok(`contains(${col}, ${ctx.params.add(leaf.value as string)})`);
    case 'one_of':
      return ok(memberOf(col, asList(leaf.value), true, ctx));
    case 'not_in':
      return not(safe(memberOf(col, asList(leaf.value), true, ctx)));
  }
}

function dateLeaf(leaf: Extract<Leaf, { kind: 'date' }>, ctx: CompileContext, ok: (sql: string) => string): string {
  const v = `make_timestamp(${ctx.params.add(leaf.value)}::BIGINT)`;
  if (leaf.op === 'ne') return not(safe(`${leaf.column.sql} = ${v}`));
  return ok(`${leaf.column.sql} ${COMPARE[leaf.op]} ${v}`);
}

function numberLeaf(leaf: Extract<Leaf, { kind: 'number' }>, ctx: CompileContext, ok: (sql: string) => string): string {
  const col = leaf.column.metric !== undefined ? ctx.metric(leaf.column.metric) : leaf.column.sql;
  if (leaf.op === 'between') {
    const [lo, hi] = leaf.value as [number, number];
    return ok(`${col} BETWEEN ${ctx.params.add(lo)} AND ${ctx.params.add(hi)}`);
  }
  const v = ctx.params.add(leaf.value as number);
  if (leaf.op === 'ne') return not(safe(`${col} = ${v}`));
  return ok(`${col} ${COMPARE[leaf.op]} ${v}`);
}

function booleanLeaf(leaf: Extract<Leaf, { kind: 'boolean' }>, ctx: CompileContext, ok: (sql: string) => string): string {
  const v = ctx.params.add(leaf.value);
  return leaf.op === 'eq' ? ok(`${leaf.column.sql} = ${v}`) : not(safe(`${leaf.column.sql} = ${v}`));
}
