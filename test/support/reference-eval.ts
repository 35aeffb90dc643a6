/**
 * A reference evaluator for tracelake's record filters: plain TypeScript over in-memory records (the
 * full records `store.search` returns), written from the documented semantics only (the header of
 * src/query/compile-filter.ts and the hosted service's record filters), never from the compiler.
 *
 * Semantics implemented:
 * - A record without a value never matches a positive test; `ne`, `not_in` and `not` are exact
 *   complements, so a record without the value matches them. "Without a value": the field is null or
 *   absent (e.g. `model` on a tool span), a metric that is absent or not a number, or no tags ([]).
 *   An empty string is a value.
 * - `one_of []` matches nothing, `not_in []` everything. A single string for one_of/not_in is a
 *   one-item list.
 * - case_sensitive defaults to true; when false both sides are lowercased (JS toLowerCase).
 * - text: eq, ne, contains (substring), one_of, not_in. Text on a structured field (an llm message
 *   list, a message, a document list, an object, `tools`) is tested against its JSON text. The exact
 *   JSON rendering tracelake stores is an implementation detail, so this evaluator uses compact
 *   JSON.stringify and offers `fairTextValue`: a value is fair for a column when, for every record
 *   of the level, the outcome of eq and contains (both cases) is the same under several reasonable
 *   renderings (compact, spaced `", "`/`": "`, and non-ASCII escaped). Only fair values should be
 *   compared on structured fields.
 * - collection (tags): a record without tags has the empty list (never "no value"); eq compares as
 *   sets (order and duplicates ignored, so eq [] finds untagged records), contains is membership of
 *   one string, one_of "has any of", not_in "has none of".
 * - id: eq/contains/one_of/not_in/ne; ids are compared lowercase (UUIDs are case-insensitive);
 *   `contains` is a substring test on the id text (eq is the default operator).
 * - date: a value with a zone is converted to UTC, one without is read as UTC; compared to the
 *   microsecond (fractional digits past the sixth are cut).
 * - number: eq, ne, gt, gte, lt, lte, between [a, b] inclusive on both ends.
 * - boolean: eq; ne is its complement.
 * - fully_annotated matches nothing.
 * - metrics/<name>: a span's own numeric value; a record without its own value that has descendants
 *   (a trace, a session, or a span with children) takes the roll-up of its descendants' own values
 *   (trace: its spans; session: its traces and their spans; span: every span below it). Roll-up:
 *   sum for `num_*tokens` and `cost`, max for `*_ns`, average otherwise.
 * - Sorting: by the column's value, records without a value last in both directions, ties broken
 *   by id in the same direction; text compares by Unicode code point (the byte order of UTF-8).
 */

export type Rec = Record<string, unknown>;
export type Level = 'span' | 'trace' | 'session';
export type RollUp = 'average' | 'sum' | 'max' | 'min';

export interface Filter {
  type: string;
  column_id?: string | null;
  name?: string | null;
  operator?: string | null;
  value?: unknown;
  case_sensitive?: boolean | null;
  user_ids?: unknown;
}
export type Tree = { filter: Filter } | { and: Tree[] } | { or: Tree[] } | { not: Tree };
export interface FilterBody {
  filters?: Filter[] | null;
  filter_tree?: Tree | null;
}
export interface Sort {
  column_id: string;
  ascending?: boolean;
}

/** The default roll-up of a metric no scorer describes (reimplemented, not imported). */
export function defaultRollUp(name: string): RollUp {
  if (name === 'cost') return 'sum';
  if (name.startsWith('num_') && name.endsWith('tokens')) return 'sum';
  if (name.endsWith('_ns')) return 'max';
  return 'average';
}

/** ISO 8601 date-time (or date) -> UTC microseconds since the epoch. */
export function parseMicros(s: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/.exec(s);
  if (!m) throw new Error(`reference evaluator: unparseable date ${JSON.stringify(s)}`);
  const [, y, mo, d, h = '0', mi = '0', sec = '0', frac = '', zone] = m;
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(sec));
  let us = ms * 1000 + Number(`${frac}000000`.slice(0, 6));
  if (zone && zone !== 'Z' && zone !== 'z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const offMin = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || '0');
    us -= sign * offMin * 60_000_000;
  }
  return us;
}

/** Code-point order (what comparing UTF-8 bytes gives), not JS's UTF-16 code-unit order. */
export function compareCodePoints(a: string, b: string): number {
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done) return y.done ? 0 : -1;
    if (y.done) return 1;
    const cx = x.value.codePointAt(0)!;
    const cy = y.value.codePointAt(0)!;
    if (cx !== cy) return cx < cy ? -1 : 1;
  }
}

const asciiEscape = (s: string) => s.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** Reasonable JSON renderings of a structured value (the first is the one this evaluator uses). */
export function jsonRenderings(v: unknown): string[] {
  const compact = JSON.stringify(v);
  const spaced = JSON.stringify(v, null, 1)
    .replace(/\n\s*/g, ' ')
    .replace(/([[{]) /g, '$1')
    .replace(/ ([\]}])/g, '$1');
  return [compact, spaced, asciiEscape(compact)];
}

function isStructured(v: unknown): boolean {
  return v !== null && typeof v === 'object';
}

const TEXT_OF_STRUCTURED = (v: unknown) => JSON.stringify(v);

function columnOf(f: Filter): string {
  const c = f.column_id ?? f.name;
  if (typeof c !== 'string') throw new Error(`reference evaluator: filter without column: ${JSON.stringify(f)}`);
  return c;
}

function asList(v: unknown): string[] {
  if (Array.isArray(v)) return v.map(String);
  return [String(v)];
}

export class ReferenceEvaluator {
  readonly byLevel: Record<Level, Rec[]>;
  readonly #byId = new Map<string, Rec>();
  /** id -> every descendant record (the rows a roll-up reads). */
  readonly #descendants = new Map<string, Rec[]>();
  readonly #rollUp: (name: string) => RollUp;
  readonly #metricCache = new Map<string, number | undefined>();
  /** record -> column -> its text (the string, or the JSON text of a structured value). */
  readonly #textCache = new WeakMap<Rec, Map<string, string | undefined>>();
  readonly #renderCache = new WeakMap<Rec, Map<string, string[]>>();

  constructor(records: Record<Level, Rec[]>, rollUp: (name: string) => RollUp = defaultRollUp) {
    this.byLevel = records;
    this.#rollUp = rollUp;
    for (const level of ['span', 'trace', 'session'] as const) for (const r of records[level]) this.#byId.set(r['id'] as string, r);
    const push = (owner: unknown, r: Rec) => {
      if (typeof owner !== 'string') return;
      const list = this.#descendants.get(owner);
      if (list) list.push(r);
      else this.#descendants.set(owner, [r]);
    };
    for (const s of records.span) {
      push(s['trace_id'], s);
      push(s['session_id'], s);
      // every span-ancestor of s
      let p = s['parent_id'];
      const seen = new Set<unknown>();
      while (typeof p === 'string' && p !== s['trace_id'] && !seen.has(p)) {
        seen.add(p);
        push(p, s);
        p = this.#byId.get(p)?.['parent_id'];
      }
    }
    for (const t of records.trace) push(t['session_id'], t);
  }

  // ----------------------------------------------------------------------------- values

  /** A metric's value for a record: its own number, else the roll-up of its descendants' own numbers. */
  metric(rec: Rec, name: string): number | undefined {
    const key = `${rec['id'] as string}\u0000${name}`;
    if (this.#metricCache.has(key)) return this.#metricCache.get(key);
    let v = ownMetric(rec, name);
    if (v === undefined) {
      const vals: number[] = [];
      for (const d of this.#descendants.get(rec['id'] as string) ?? []) {
        const x = ownMetric(d, name);
        if (x !== undefined) vals.push(x);
      }
      if (vals.length > 0) {
        const how = this.#rollUp(name);
        if (how === 'sum') v = vals.reduce((a, b) => a + b, 0);
        else if (how === 'max') v = Math.max(...vals);
        else if (how === 'min') v = Math.min(...vals);
        else v = vals.reduce((a, b) => a + b, 0) / vals.length;
      }
    }
    this.#metricCache.set(key, v);
    return v;
  }

  /** The value a sort or a comparison reads: string (text, id), number (number, date in µs), boolean. */
  sortValue(rec: Rec, column: string): string | number | boolean | undefined {
    if (column.startsWith('metrics/')) return this.metric(rec, column.slice('metrics/'.length));
    const v = rec[column];
    if (v === null || v === undefined) return undefined;
    if (column === 'created_at' || column === 'updated_at') return parseMicros(v as string);
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
    return TEXT_OF_STRUCTURED(v);
  }

  /** A text column's value: the string as sent, or the JSON text of a structured value; undefined when missing. */
  text(rec: Rec, column: string): string | undefined {
    let m = this.#textCache.get(rec);
    if (!m) this.#textCache.set(rec, (m = new Map()));
    if (m.has(column)) return m.get(column);
    const raw = rec[column];
    const v = raw === null || raw === undefined ? undefined : isStructured(raw) ? TEXT_OF_STRUCTURED(raw) : String(raw);
    m.set(column, v);
    return v;
  }

  // ----------------------------------------------------------------------------- filters

  leaf(rec: Rec, f: Filter): boolean {
    const op = f.operator ?? (f.type === 'id' || f.type === 'boolean' ? 'eq' : undefined);
    switch (f.type) {
      case 'fully_annotated':
        return false;
      case 'text':
        return textTest(this.text(rec, columnOf(f)), op!, f.value, f.case_sensitive !== false);
      case 'collection': {
        const raw = rec[columnOf(f)];
        const tags = Array.isArray(raw) ? raw.map(String) : [];
        const cs = f.case_sensitive !== false;
        const norm = (s: string) => (cs ? s : s.toLowerCase());
        if (op === 'not_in') return !this.leaf(rec, { ...f, operator: 'one_of' });
        const have = new Set(tags.map(norm));
        if (op === 'eq') {
          const want = new Set(asList(f.value).map(norm));
          return want.size === have.size && [...want].every((x) => have.has(x));
        }
        if (op === 'contains') return have.has(norm(String(f.value)));
        if (op === 'one_of') return asList(f.value).some((x) => have.has(norm(x)));
        throw new Error(`collection operator ${op}`);
      }
      case 'id': {
        const raw = rec[columnOf(f)];
        const v = typeof raw === 'string' ? raw.toLowerCase() : undefined;
        if (op === 'ne') return !this.leaf(rec, { ...f, operator: 'eq' });
        if (op === 'not_in') return !this.leaf(rec, { ...f, operator: 'one_of' });
        if (v === undefined) return false;
        if (op === 'eq') return v === String(f.value).toLowerCase();
        if (op === 'contains') return v.includes(String(f.value).toLowerCase());
        if (op === 'one_of') return asList(f.value).some((x) => x.toLowerCase() === v);
        throw new Error(`id operator ${op}`);
      }
      case 'date': {
        const raw = rec[columnOf(f)];
        const v = typeof raw === 'string' ? parseMicros(raw) : undefined;
        return compare(v, op!, parseMicros(String(f.value)));
      }
      case 'number': {
        const col = columnOf(f);
        const v = col.startsWith('metrics/')
          ? this.metric(rec, col.slice('metrics/'.length))
          : typeof rec[col] === 'number'
            ? (rec[col] as number)
            : undefined;
        if (op === 'between') {
          const [a, b] = f.value as [number, number];
          return v !== undefined && v >= a && v <= b;
        }
        return compare(v, op!, f.value as number);
      }
      case 'boolean': {
        const raw = rec[columnOf(f)];
        const v = typeof raw === 'boolean' ? raw : undefined;
        const eq = v !== undefined && v === f.value;
        if (op === 'eq') return eq;
        if (op === 'ne') return !eq;
        throw new Error(`boolean operator ${op}`);
      }
      default:
        throw new Error(`reference evaluator: unknown filter type ${f.type}`);
    }
  }

  tree(rec: Rec, t: Tree): boolean {
    if ('filter' in t) return this.leaf(rec, t.filter);
    if ('and' in t) return t.and.every((x) => this.tree(rec, x));
    if ('or' in t) return t.or.some((x) => this.tree(rec, x));
    return !this.tree(rec, t.not);
  }

  matches(rec: Rec, body: FilterBody): boolean {
    for (const f of body.filters ?? []) if (!this.leaf(rec, f)) return false;
    return body.filter_tree == null || this.tree(rec, body.filter_tree);
  }

  /** Ids of the level's records that match, in no particular order. */
  ids(level: Level, body: FilterBody): string[] {
    return this.byLevel[level].filter((r) => this.matches(r, body)).map((r) => r['id'] as string);
  }

  /** Matching records in the order a search with `sort` (default created_at, id descending) returns. */
  search(level: Level, body: FilterBody & { sort?: Sort | null }): Rec[] {
    const sort = body.sort ?? { column_id: 'created_at', ascending: false };
    const asc = sort.ascending !== false;
    const keyed = this.byLevel[level]
      .filter((r) => this.matches(r, body))
      .map((r) => ({ r, k: this.sortValue(r, sort.column_id), id: r['id'] as string }));
    keyed.sort((a, b) => {
      if (a.k === undefined && b.k !== undefined) return 1;
      if (b.k === undefined && a.k !== undefined) return -1;
      let c = 0;
      if (a.k !== undefined && b.k !== undefined) {
        c = typeof a.k === 'string' ? compareCodePoints(a.k, b.k as string) : a.k < b.k ? -1 : a.k > b.k ? 1 : 0;
      }
      if (c === 0) c = a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
      return asc ? c : -c;
    });
    return keyed.map((x) => x.r);
  }

  // ----------------------------------------------------------------------------- fairness

  /**
   * Whether a text value gives the same outcome on every record of the level whatever reasonable
   * JSON rendering tracelake stores for structured fields (see the header). Always true for columns
   * whose values are plain strings at this level.
   */
  fairTextValue(level: Level, column: string, value: string): boolean {
    const vl = value.toLowerCase();
    for (const r of this.byLevel[level]) {
      const raw = r[column];
      if (!isStructured(raw)) continue;
      let m = this.#renderCache.get(r);
      if (!m) this.#renderCache.set(r, (m = new Map()));
      let texts = m.get(column);
      if (!texts) {
        texts = jsonRenderings(raw).flatMap((t) => [t, t.toLowerCase()]);
        m.set(column, texts);
      }
      const outcomes = new Set<string>();
      for (let i = 0; i < texts.length; i += 2) {
        const text = texts[i]!;
        const lo = texts[i + 1]!;
        outcomes.add([text === value, text.includes(value), lo === vl, lo.includes(vl)].join());
      }
      if (outcomes.size > 1) return false;
    }
    return true;
  }
}

function ownMetric(rec: Rec, name: string): number | undefined {
  const m = rec['metrics'];
  if (m === null || typeof m !== 'object') return undefined;
  const v = (m as Record<string, unknown>)[name];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function textTest(v: string | undefined, op: string, value: unknown, cs: boolean): boolean {
  const norm = (s: string) => (cs ? s : s.toLowerCase());
  switch (op) {
    case 'eq':
      return v !== undefined && norm(v) === norm(String(value));
    case 'ne':
      return !textTest(v, 'eq', value, cs);
    case 'contains':
      return v !== undefined && norm(v).includes(norm(String(value)));
    case 'one_of':
      return v !== undefined && asList(value).some((x) => norm(x) === norm(v));
    case 'not_in':
      return !textTest(v, 'one_of', value, cs);
    default:
      throw new Error(`text operator ${op}`);
  }
}

function compare(v: number | undefined, op: string, x: number): boolean {
  if (op === 'ne') return !compare(v, 'eq', x);
  if (v === undefined) return false;
  switch (op) {
    case 'eq':
      return v === x;
    case 'gt':
      return v > x;
    case 'gte':
      return v >= x;
    case 'lt':
      return v < x;
    case 'lte':
      return v <= x;
    default:
      throw new Error(`comparison operator ${op}`);
  }
}
