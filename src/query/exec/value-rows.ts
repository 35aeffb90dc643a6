// The rows of a segment that a filter's tests on type, name, model, tags and metrics match, from its
// value index (src/storage/indexes/value-index.ts), when every conjunct of the filter's top-level AND is
// a test the index serves: text eq / ne / one_of / not_in / contains on type, name or model, tags
// contains / one_of / not_in, a metric compared with a number (eq, ne, gt, gte, lt, lte, between; as
// SQL has it, ne matches rows without a value, the others do not), or the NOT of one of these. Other
// filters read the segment: a DuckDB scan tests columns about as fast as it would test candidate row
// numbers, and their other tests' columns are read whole either way. Case-insensitive tests are served
// for ASCII needles: DuckDB's lower() maps only A-Z, U+0130 and U+212A into ASCII
// (test/storage/indexes/text-index.test.ts asks it about every code point), so a value lowered here by
// that mapping, its other characters kept apart, compares exactly as lower() would have it.
import type { Expr, Leaf } from '../filter-ast.js';
import { ScratchBuffer } from '../../storage/fs-util.js';
import { popcount } from '../../storage/indexes/token-index.js';
import type { MetricRange } from '../../storage/indexes/metric-codes.js';
import { markMetricValueRows, markValueRows, VALUE_COLUMNS, type ValueIndex } from '../../storage/indexes/value-index.js';

export interface ValueRows {
  /** One bit per row of the segment: the rows every test matches. */
  readonly bits: Uint32Array;
  /** How many bits are set. */
  readonly count: number;
}

/** Where a test after the first marks its rows (used at once, never kept). */
const testBuffer = new ScratchBuffer(8 << 20);

/** The conjuncts of a filter's top-level AND (a lone test is one conjunct). */
function conjuncts(e: Expr): Expr[] {
  return 'and' in e ? e.and.flatMap(conjuncts) : [e];
}

const ASCII = /^[\x00-\x7f]*$/;

/** Lowered as lower() lowers it, for comparison with an ASCII needle: other non-ASCII characters become U+FFFF. */
function lowered(v: string): string {
  if (ASCII.test(v)) return v.toLowerCase();
  let out = '';
  for (const ch of v) out += ch === '\u0130' ? 'i' : ch === '\u212a' ? 'k' : ch < '\x80' ? ch.toLowerCase() : '\uffff';
  return out;
}

/** A metric's test as the values it admits (its complement for ne), or null for a number leaf of another column. */
function metricTest(leaf: Extract<Leaf, { kind: 'number' }>): ServedTest | null {
  const metric = leaf.column.metric;
  if (metric === undefined) return null;
  if (leaf.op === 'between') {
    const [lo, hi] = leaf.value as [number, number];
    return { metric, range: { lo, loOpen: false, hi, hiOpen: false }, negate: false };
  }
  const x = leaf.value as number;
  const I = Number.POSITIVE_INFINITY;
  const ranges = {
    eq: { lo: x, loOpen: false, hi: x, hiOpen: false },
    ne: { lo: x, loOpen: false, hi: x, hiOpen: false },
    gt: { lo: x, loOpen: true, hi: I, hiOpen: false },
    gte: { lo: x, loOpen: false, hi: I, hiOpen: false },
    lt: { lo: -I, loOpen: false, hi: x, hiOpen: true },
    lte: { lo: -I, loOpen: false, hi: x, hiOpen: false },
  };
  return { metric, range: ranges[leaf.op], negate: leaf.op === 'ne' };
}

/** The column and a test of one value for a served leaf (its complement for ne and not_in), or null. */
function servedTest(leaf: Leaf): ServedTest | null {
  if (leaf.kind === 'number') return metricTest(leaf);
  if (leaf.kind !== 'text' && leaf.kind !== 'collection') return null;
  const column = VALUE_COLUMNS.findIndex((c) => leaf.column.sql === `r.${c}`);
  if (column < 0 || (leaf.kind === 'collection') !== (VALUE_COLUMNS[column] === 'tags')) return null;
  const needles = Array.isArray(leaf.value) ? leaf.value : [leaf.value];
  const cs = leaf.caseSensitive;
  if (!cs && !needles.every((n) => ASCII.test(n))) return null;
  const norm = cs ? (v: string) => v : lowered;
  const wanted = needles.map((n) => (cs ? n : n.toLowerCase()));
  switch (leaf.op) {
    case 'eq':
    case 'ne':
      // Collection eq compares whole tag sets: not served.
      if (leaf.kind === 'collection' || typeof leaf.value !== 'string') return null;
      return { column, test: (v: string) => norm(v) === wanted[0], negate: leaf.op === 'ne' };
    case 'one_of':
    case 'not_in': {
      const set = new Set(wanted);
      return { column, test: (v: string) => set.has(norm(v)), negate: leaf.op === 'not_in' };
    }
    case 'contains':
      if (typeof leaf.value !== 'string') return null;
      // On text a substring; on tags a whole tag.
      return {
        column,
        test: leaf.kind === 'text' ? (v: string) => norm(v).includes(wanted[0]!) : (v: string) => norm(v) === wanted[0],
        negate: false,
      };
    default:
      return null;
  }
}

/**
 * A test the value index serves: its column (by VALUE_COLUMNS' order) or metric name, which of the
 * values it admits, and whether it matches the other rows instead (ne, not_in, not: exact complements,
 * so rows without a value match).
 */
export type ServedTest =
  | { readonly column: number; readonly test: (v: string) => boolean; readonly negate: boolean }
  | { readonly metric: string; readonly range: MetricRange; readonly negate: boolean };

/** The filter's tests when the value index serves every one (the conjuncts of its top-level AND), else null. */
export function servedTests(filter: Expr | null): ServedTest[] | null {
  if (filter === null) return null;
  const out: ServedTest[] = [];
  for (const e of conjuncts(filter)) {
    const leaf = 'leaf' in e ? servedTest(e.leaf) : 'not' in e && 'leaf' in e.not ? servedTest(e.not.leaf) : null;
    if (leaf === null) return null;
    const served = 'not' in e ? { ...leaf, negate: !leaf.negate } : leaf;
    out.push(served);
  }
  return out;
}

/**
 * The rows of a segment with this index that every test matches, as one bit a row, and their number;
 * null when a tested column or metric is left out of its file or its postings cannot be read (read the
 * segment). `storedMetric` gives a metric's id where the segment stores its column (elsewhere no row
 * has a value).
 */
export function valueRows(
  ix: ValueIndex,
  tests: readonly ServedTest[],
  storedMetric: (name: string) => number | undefined,
): ValueRows | null {
  const words = Math.ceil(ix.rows / 32);
  let acc: Uint32Array | null = null;
  for (const t of tests) {
    // The first test marks the answer itself; each other one a kept buffer, then ANDed in.
    const bits: Uint32Array = acc === null ? new Uint32Array(words) : testBuffer.words(words);
    if ('column' in t) {
      const col = ix.columns[t.column];
      if (!col || !markValueRows(ix, col, t.test, bits)) return null;
    } else {
      const id = storedMetric(t.metric);
      const section = id === undefined ? undefined : ix.metrics.get(id);
      if (id !== undefined && (section === undefined || !markMetricValueRows(ix, section, t.range, bits))) return null;
    }
    if (t.negate) {
      for (let i = 0; i < words; i++) bits[i] = ~bits[i]!;
      // Rows past the segment's last are none.
      if (ix.rows % 32 !== 0) bits[words - 1]! &= (1 << (ix.rows % 32)) - 1;
    }
    if (acc === null) acc = bits;
    else for (let i = 0; i < words; i++) acc[i]! &= bits[i]!;
  }
  return acc === null ? null : { bits: acc, count: popcount(acc) };
}

/** How many of these rows (bit positions) are set in `bits`: a segment's dead rows among its matches. */
export function countSet(bits: Uint32Array, rows: readonly number[]): number {
  let n = 0;
  for (const r of rows) n += (bits[r >>> 5]! >>> (r & 31)) & 1;
  return n;
}

/** The set bits' positions, ascending. */
export function rowsOf(bits: Uint32Array): number[] {
  const out: number[] = [];
  for (let w = 0; w < bits.length; w++) {
    let x = bits[w]!;
    while (x !== 0) {
      out.push(w * 32 + (31 - Math.clz32(x & -x)));
      x &= x - 1;
    }
  }
  return out;
}
