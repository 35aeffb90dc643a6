// Filter tree -> one SQL boolean expression over the record alias `r`. Identifiers come only from
// the column registry; every value (and every metric name) is a parameter of the fragment (sql.ts).
// Pure and synchronous; one small function per leaf kind; vectorised DuckDB functions only.
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
import { ident, joinSql, param, raw, sql, type Sql } from './sql.js';

export interface CompileContext {
  /** SQL for a metric's value (own value, or own-else-rolled-up), given its name. */
  metric(name: string): Sql;
}

/** A context whose metric values are the record's own (no roll-ups). */
export function ownMetrics(): CompileContext {
  return { metric: (name) => sql`r.metrics[${name}]` };
}

const TRUE = raw('true');
const FALSE = raw('false');

/** Terms joined by AND or OR, in parentheses when there are several. */
function junction(items: readonly Sql[], op: 'AND' | 'OR'): Sql {
  if (items.length === 0) return op === 'AND' ? TRUE : FALSE;
  return items.length === 1 ? items[0]! : sql`(${joinSql(items, ` ${op} `)})`;
}

/**
 * The filter as a WHERE condition: the same rows as compileFilter, but leaves outside any NOT drop
 * their coalesce(..., false). Without NOT, AND and OR are monotone, so a NULL leaf that a WHERE then
 * treats as false gives the result false would; under NOT (and in ne, not_in) NULL must become false
 * first, so those keep it. Plain comparisons let DuckDB push conjunctions into the Parquet scan
 * (skipping row groups by their min/max statistics) and cost less per row.
 */
export function compileWhere(e: Expr, ctx: CompileContext): Sql {
  if ('leaf' in e) return compileLeaf(e.leaf, ctx, true);
  if ('and' in e)
    return junction(
      e.and.map((x) => compileWhere(x, ctx)),
      'AND',
    );
  if ('or' in e)
    return junction(
      e.or.map((x) => compileWhere(x, ctx)),
      'OR',
    );
  return not(compileFilter(e.not, ctx));
}

export function compileFilter(e: Expr, ctx: CompileContext): Sql {
  if ('leaf' in e) return compileLeaf(e.leaf, ctx);
  if ('and' in e)
    return junction(
      e.and.map((x) => compileFilter(x, ctx)),
      'AND',
    );
  if ('or' in e)
    return junction(
      e.or.map((x) => compileFilter(x, ctx)),
      'OR',
    );
  return not(compileFilter(e.not, ctx));
}

const safe = (q: Sql) => sql`coalesce(${q}, false)`;
const not = (q: Sql) => sql`(NOT ${q})`;
const lower = (q: Sql, cs: boolean) => (cs ? q : sql`lower(${q})`);
const lowerList = (q: Sql, cs: boolean) => (cs ? q : sql`list_transform(${q}, lambda x: lower(x))`);
const asList = (v: string | string[]) => (Array.isArray(v) ? v : [v]);
/** A registry column's SQL (ColumnDef.sql: identifiers over `r`, never input). */
const column = (c: { sql: string }) => raw(c.sql);

/**
 * Membership of a column in a list of values. Up to LONG_LIST values are one placeholder each in an IN
 * list, which DuckDB uses to skip row groups by min/max; it then tests the IN list after the scan (a
 * hash probe), so every column the query reads is decoded for every row. Up to SHORT_LIST values the
 * same placeholders are also tested by list_contains, which DuckDB evaluates inside the scan: the other
 * columns are decoded only where a row matches (much less CPU for a page's keys by a few trace ids; a
 * count of the filter column alone costs about the same). A longer list becomes a semi-join on the
 * unnested list parameter. A NULL column yields NULL either way, which compileWhere's positive tests
 * treat as false.
 */
export const LONG_LIST = 256;
export const SHORT_LIST = 32;
/** Tag lists up to this long are tested as substrings of tag_set (one test per value). */
const TAG_SET_LIST = 16;
function memberOf(col: Sql, values: string[], cs: boolean): Sql {
  if (values.length === 0) return FALSE;
  if (values.length > LONG_LIST) {
    const list = sql`${values}::VARCHAR[]`;
    return cs ? sql`${col} IN (SELECT unnest(${list}))` : sql`${col} IN (SELECT lower(unnest(${list})))`;
  }
  return inPlaceholders(
    col,
    values.map((v) => lower(sql`${param(v)}`, cs)),
  );
}

/**
 * `col` in a list of at most LONG_LIST items (placeholders, or expressions of them), as memberOf tests
 * it. Each item is written twice when the list is short: its values are bound once.
 */
export function inPlaceholders(col: Sql, items: readonly Sql[]): Sql {
  const list = joinSql(items);
  if (items.length === 1 || items.length > SHORT_LIST) return sql`${col} IN (${list})`;
  return sql`(${col} IN (${list}) AND list_contains([${list}], ${col}))`;
}

const COMPARE = { eq: raw('='), gt: raw('>'), gte: raw('>='), lt: raw('<'), lte: raw('<=') } as const;

/** `loose`: the leaf stands outside any NOT (see compileWhere), so a positive test may yield NULL. */
function compileLeaf(leaf: Leaf, ctx: CompileContext, loose = false): Sql {
  const ok = loose ? (q: Sql) => q : safe;
  switch (leaf.kind) {
    case 'text':
      return textLeaf(leaf, ok);
    case 'collection':
      return collectionLeaf(leaf, ok);
    case 'id':
      return idLeaf(leaf, ok);
    case 'date':
      return dateLeaf(leaf, ok);
    case 'number':
      return numberLeaf(leaf, ctx, ok);
    case 'boolean':
      return booleanLeaf(leaf, ok);
    case 'fully_annotated':
      return FALSE;
    default: {
      const never: never = leaf;
      throw new Error(`unknown filter kind ${JSON.stringify(never)}`);
    }
  }
}

function textLeaf(leaf: Extract<Leaf, { kind: 'text' }>, ok: (q: Sql) => Sql): Sql {
  const cs = leaf.caseSensitive;
  const col = lower(column(leaf.column), cs);
  switch (leaf.op) {
    case 'eq':
      return ok(sql`${col} = ${lower(sql`${leaf.value as string}`, cs)}`);
    case 'ne':
      return not(safe(sql`${col} = ${lower(sql`${leaf.value as string}`, cs)}`));
    case 'contains': {
      const caseless = cs ? null : caselessContains(column(leaf.column), leaf.value as string);
      if (caseless !== null) return ok(caseless);
      return ok(sql`contains(${col}, ${lower(sql`${leaf.value as string}`, cs)})`);
    }
    case 'one_of':
      return ok(memberOf(col, asList(leaf.value), cs));
    case 'not_in':
      return not(safe(memberOf(col, asList(leaf.value), cs)));
  }
}

/**
 * A case-insensitive `contains` of an ASCII needle as a regular expression over the text as stored:
 * exactly contains(lower(text), lower(needle)), without the cost of lowering every row. lower() maps
 * each code point on its own, so a match is a run of code points each lowering to the needle's
 * character: an ASCII letter's two cases, plus U+0130 for i and U+212A (the Kelvin sign) for k, the
 * only code points outside ASCII that DuckDB lowers into it (checked over every code point in
 * test/storage/indexes/text-index.test.ts); any other character only itself. Null (use lower()) for an
 * empty or non-ASCII needle.
 */
export function caselessPattern(needle: string, exotic = true): string | null {
  if (needle.length === 0 || !/^[\x00-\x7f]*$/.test(needle)) return null;
  let out = '';
  for (const ch of needle) {
    const c = ch.toLowerCase();
    const more = !exotic ? '' : c === 'i' ? '\\x{130}' : c === 'k' ? '\\x{212A}' : '';
    if (c >= 'a' && c <= 'z') out += `[${c}${c.toUpperCase()}${more}]`;
    else if (/[0-9]/.test(c)) out += c;
    else out += `\\x{${c.charCodeAt(0).toString(16)}}`;
  }
  return out;
}

/** The two code points outside ASCII that lower() maps into it, by the letter they lower to. */
const EXOTIC: Readonly<Record<string, string>> = { i: '\u0130', k: '\u212A' };

/**
 * A case-insensitive `contains` of an ASCII needle (caselessPattern) as a filter, or null. RE2 finds
 * a pattern's first character fast only when its class is ASCII; a needle starting with i or k,
 * whose class also holds İ or the Kelvin sign, scanned 2.5x slower (10M spans: 4.5 s against 1.6 s
 * for another word). Such a needle is matched by its ASCII pattern, or, in the rare text holding one
 * of those code points, by the whole pattern: the same rows.
 */
export function caselessContains(col: Sql, needle: string): Sql | null {
  const pattern = caselessPattern(needle);
  if (pattern === null) return null;
  const whole = sql`regexp_matches(${col}, ${pattern})`;
  if (EXOTIC[needle[0]!.toLowerCase()] === undefined) return whole;
  const held = [...new Set([...needle.toLowerCase()].map((c) => EXOTIC[c]).filter((c) => c !== undefined))];
  const guard = joinSql(
    held.map((c) => sql`contains(${col}, ${c})`),
    ' OR ',
  );
  return sql`(regexp_matches(${col}, ${caselessPattern(needle, false)!}) OR ((${guard}) AND ${whole}))`;
}

function collectionLeaf(leaf: Extract<Leaf, { kind: 'collection' }>, ok: (q: Sql) => Sql): Sql {
  const cs = leaf.caseSensitive;
  if (leaf.column.sql === 'r.tags' && leaf.op !== 'eq' && asList(leaf.value).length <= TAG_SET_LIST) return tagSetLeaf(leaf, ok);
  const col = lowerList(sql`coalesce(${column(leaf.column)}, [])`, cs);
  const list = () => lowerList(sql`${asList(leaf.value)}::VARCHAR[]`, cs);
  switch (leaf.op) {
    case 'contains':
      return ok(sql`list_contains(${col}, ${lower(sql`${leaf.value as string}`, cs)})`);
    case 'eq':
      return ok(sql`list_sort(list_distinct(${col})) = list_sort(list_distinct(${list()}))`);
    case 'one_of':
      return ok(sql`list_has_any(${col}, ${list()})`);
    case 'not_in':
      return not(safe(sql`list_has_any(${col}, ${list()})`));
  }
}

/**
 * Tag membership as substring tests on the tag_set column where segments store it, exactly
 * list_contains over tags (src/record/record-columns.ts: each tag enclosed in \x1f and escaped, so a
 * match is one whole tag; lower() maps each code point alone and never to \x1e, \x1f, 0 or 1); the
 * list test on tag_list elsewhere (memory tables, older segments). A source gives each row one of the
 * two (the other NULL), so only one column is read per part.
 */
function tagSetLeaf(leaf: Extract<Leaf, { kind: 'collection' }>, ok: (q: Sql) => Sql): Sql {
  const cs = leaf.caseSensitive;
  const values = asList(leaf.value);
  const set = lower(sql`r.${ident(TAG_SET_COLUMN)}`, cs);
  const list = lowerList(sql`r.${ident(TAG_LIST_COLUMN)}`, cs);
  const bySet = junction(
    values.map((v) => sql`contains(${set}, ${lower(sql`${tagSetNeedle(v)}`, cs)})`),
    'OR',
  );
  const byList =
    leaf.op === 'contains'
      ? sql`list_contains(${list}, ${lower(sql`${values[0]!}`, cs)})`
      : sql`list_has_any(${list}, ${lowerList(sql`${values}::VARCHAR[]`, cs)})`;
  const has = sql`coalesce(${bySet}, ${byList})`;
  return leaf.op === 'not_in' ? not(safe(has)) : ok(has);
}

function idLeaf(leaf: Extract<Leaf, { kind: 'id' }>, ok: (q: Sql) => Sql): Sql {
  const col = column(leaf.column);
  switch (leaf.op) {
    case 'eq':
      return ok(sql`${col} = ${leaf.value as string}`);
    case 'ne':
      return not(safe(sql`${col} = ${leaf.value as string}`));
    case 'contains':
      return ok(sql`contains(${col}, ${leaf.value as string})`);
    case 'one_of':
      return ok(memberOf(col, asList(leaf.value), true));
    case 'not_in':
      return not(safe(memberOf(col, asList(leaf.value), true)));
  }
}

function dateLeaf(leaf: Extract<Leaf, { kind: 'date' }>, ok: (q: Sql) => Sql): Sql {
  const v = sql`make_timestamp(${leaf.value}::BIGINT)`;
  const col = column(leaf.column);
  if (leaf.op === 'ne') return not(safe(sql`${col} = ${v}`));
  return ok(sql`${col} ${COMPARE[leaf.op]} ${v}`);
}

function numberLeaf(leaf: Extract<Leaf, { kind: 'number' }>, ctx: CompileContext, ok: (q: Sql) => Sql): Sql {
  const col = leaf.column.metric !== undefined ? ctx.metric(leaf.column.metric) : column(leaf.column);
  if (leaf.op === 'between') {
    const [lo, hi] = leaf.value as [number, number];
    return ok(sql`${col} BETWEEN ${lo} AND ${hi}`);
  }
  const v = leaf.value as number;
  // Equal to 0 as a range: DuckDB's Parquet bloom filter holds the bits of the one of -0 and 0 the
  // column's dictionary kept, so `= 0` skipped row groups whose zeros came as -0 first (segments
  // written before numbers were stored with -0 as 0 keep them). Ranges prune by min/max, which
  // compare -0 and 0 as equal. No other double has a twin that compares equal to it.
  const equal = v === 0 ? sql`${col} BETWEEN ${v} AND ${v}` : sql`${col} = ${v}`;
  if (leaf.op === 'ne') return not(safe(equal));
  return ok(leaf.op === 'eq' ? equal : sql`${col} ${COMPARE[leaf.op]} ${v}`);
}

function booleanLeaf(leaf: Extract<Leaf, { kind: 'boolean' }>, ok: (q: Sql) => Sql): Sql {
  const col = column(leaf.column);
  return leaf.op === 'eq' ? ok(sql`${col} = ${leaf.value}`) : not(safe(sql`${col} = ${leaf.value}`));
}
