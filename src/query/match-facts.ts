// Facts about what can match: from the whole filter tree and from facts about the stored rows, which
// span types a matching span can have and whether it can have children. The planner uses them to
// leave out roll-ups that cannot change the answer. Nothing here is assumed about the data: the
// facts about rows (which types carry a column, which types have children) are measured from the
// rows themselves (src/query/exec/data-facts.ts), since OpenTelemetry, unreliable logging and imports can
// give an llm span children or a workflow span a model. Without data facts nothing is skipped.
import { SPAN_KINDS, STANDARD_COLUMNS, type ColumnDef } from './columns.js';
import type { Expr, Leaf } from './filter-ast.js';

/** What the stored spans of a scope are known to hold (a superset of the truth is always safe). */
export interface DataFacts {
  /** Span types with at least one row where the column (a kind-specific one, by id) is set. */
  readonly typesWith: ReadonlyMap<string, ReadonlySet<string>>;
  /** Span types with at least one row that has children. */
  readonly typesWithChildren: ReadonlySet<string>;
}

/** Columns that only some span kinds carry (model, temperature, tool_call_id, ...), from the registry. */
export const KIND_COLUMNS: readonly ColumnDef[] = STANDARD_COLUMNS.filter(
  (c) =>
    c.category === 'standard' &&
    !SPAN_KINDS.every((k) => c.applicable_types.includes(k)) &&
    c.applicable_types.some((k) => (SPAN_KINDS as readonly string[]).includes(k)),
);
const KIND_COLUMN_IDS = new Set(KIND_COLUMNS.map((c) => c.id));

const ALL: ReadonlySet<string> = new Set(SPAN_KINDS);

/**
 * The span types a matching row can have: `types` is a superset of them; `exact` when it is exactly
 * the types for which the expression is true (tests on `type` alone), so a NOT can complement it.
 */
interface TypeFact {
  types: ReadonlySet<string>;
  exact: boolean;
}

const inter = (a: ReadonlySet<string>, b: ReadonlySet<string>) => new Set([...a].filter((x) => b.has(x)));
const union = (a: ReadonlySet<string>, b: ReadonlySet<string>) => new Set([...a, ...b]);
const minus = (a: ReadonlySet<string>, b: ReadonlySet<string>) => new Set([...a].filter((x) => !b.has(x)));

/** A test every row without a value fails (all leaves but the complements ne / not_in; tags read [] when absent). */
function positive(leaf: Leaf): boolean {
  return leaf.kind !== 'fully_annotated' && leaf.kind !== 'collection' && leaf.op !== 'ne' && leaf.op !== 'not_in';
}

/** The exact set of types for which a text leaf on `type` is true, or null when it cannot be told here. */
function typeLeaf(leaf: Extract<Leaf, { kind: 'text' }>): ReadonlySet<string> | null {
  const values = Array.isArray(leaf.value) ? leaf.value : [leaf.value];
  // DuckDB's lower() and JavaScript's may differ beyond ASCII: then nothing is concluded.
  if (!leaf.caseSensitive && values.some((v) => /[^\x20-\x7e]/.test(v))) return null;
  const norm = (v: string) => (leaf.caseSensitive ? v : v.toLowerCase());
  const vs = values.map(norm);
  const hit = (k: string): boolean => {
    switch (leaf.op) {
      case 'eq':
      case 'ne':
        return vs[0] === k;
      case 'contains':
        return k.includes(vs[0]!);
      case 'one_of':
      case 'not_in':
        return vs.includes(k);
    }
  };
  const yes = new Set(SPAN_KINDS.filter(hit));
  return leaf.op === 'ne' || leaf.op === 'not_in' ? minus(ALL, yes) : yes;
}

function leafTypes(leaf: Leaf, facts: DataFacts): TypeFact {
  if (leaf.kind === 'fully_annotated') return { types: new Set(), exact: true }; // matches nothing
  if (leaf.kind === 'text' && leaf.column.id === 'type') {
    const t = typeLeaf(leaf);
    return t ? { types: t, exact: true } : { types: ALL, exact: false };
  }
  if (positive(leaf) && KIND_COLUMN_IDS.has(leaf.column.id)) return { types: facts.typesWith.get(leaf.column.id) ?? ALL, exact: false };
  return { types: ALL, exact: false };
}

function typesOf(e: Expr, facts: DataFacts): TypeFact {
  if ('leaf' in e) return leafTypes(e.leaf, facts);
  if ('and' in e) {
    let out: TypeFact = { types: ALL, exact: true };
    for (const c of e.and) {
      const f = typesOf(c, facts);
      out = { types: inter(out.types, f.types), exact: out.exact && f.exact };
    }
    return out;
  }
  if ('or' in e) {
    let out: TypeFact = { types: new Set(), exact: true };
    for (const c of e.or) {
      const f = typesOf(c, facts);
      out = { types: union(out.types, f.types), exact: out.exact && f.exact };
    }
    return out;
  }
  const inner = typesOf(e.not, facts);
  return inner.exact ? { types: minus(ALL, inner.types), exact: true } : { types: ALL, exact: false };
}

/** Ids of the columns an expression tests (to ask the data only about those). */
export function columnsOf(e: Expr | null, out = new Set<string>()): Set<string> {
  if (e === null) return out;
  if ('leaf' in e) {
    if (e.leaf.kind !== 'fully_annotated') out.add(e.leaf.column.id);
  } else if ('and' in e)
    e.and.forEach((x) => {
      columnsOf(x, out);
    });
  else if ('or' in e)
    e.or.forEach((x) => {
      columnsOf(x, out);
    });
  else columnsOf(e.not, out);
  return out;
}

/** Whether a matching row can have has_children true (false only under a `has_children` test that excludes it). */
function mayHaveChildren(e: Expr): boolean {
  if ('leaf' in e) {
    const l = e.leaf;
    if (l.kind !== 'boolean' || l.column.id !== 'has_children') return true;
    return (l.op === 'eq') === l.value; // eq true / ne false admit rows with children
  }
  if ('and' in e) return e.and.every(mayHaveChildren);
  if ('or' in e) return e.or.some(mayHaveChildren);
  return true;
}

/** Whether no row the expression admits has children (so its metrics are only its own values). */
export function childlessMatch(e: Expr | null, facts: DataFacts | undefined): boolean {
  if (e === null || facts === undefined) return false;
  if (!mayHaveChildren(e)) return true;
  return [...typesOf(e, facts).types].every((t) => !facts.typesWithChildren.has(t));
}

/** The span types a row matching the expression can have (all of them without a filter or facts). */
export function possibleTypes(e: Expr | null, facts: DataFacts | undefined): ReadonlySet<string> {
  if (e === null || facts === undefined) return ALL;
  return typesOf(e, facts).types;
}

/**
 * Metrics whose roll-ups a span query can leave out: every place the filter reads them sits under
 * an AND whose other parts admit only childless rows, so the value there is the row's own. (A
 * restriction from an enclosing AND holds inside its OR and NOT children: where it fails, the AND is
 * false whatever the metric reads.)
 */
export function metricsWithoutRollUp(e: Expr | null, facts: DataFacts | undefined): Set<string> {
  const safe = new Set<string>();
  if (e === null || facts === undefined) return safe;
  const unsafe = new Set<string>();
  const childless = (ctx: Expr[]) => ctx.length > 0 && childlessMatch({ and: ctx }, facts);
  const walk = (x: Expr, ctx: Expr[]): void => {
    if ('leaf' in x) {
      if (x.leaf.kind !== 'fully_annotated' && x.leaf.column.metric !== undefined)
        (childless(ctx) ? safe : unsafe).add(x.leaf.column.metric);
    } else if ('and' in x) {
      // Each part is read where every other part (and the enclosing context) holds.
      x.and.forEach((c, i) => {
        walk(c, [...ctx, ...x.and.filter((_, j) => j !== i)]);
      });
    } else if ('or' in x) {
      for (const c of x.or) walk(c, ctx);
    } else {
      walk(x.not, ctx);
    }
  };
  walk(e, []);
  for (const m of unsafe) safe.delete(m);
  return safe;
}
