// SQL fragments: the one way SQL is written. `sql` is a tagged template whose text is our code's and
// whose every interpolated value becomes a bound parameter; a fragment interpolated into another is
// spliced in with its parameters. Placeholders ($1, $2, ...) are numbered once, by `compile`, in the
// order they appear in the final text, so no code numbers them or passes offsets around. Text that is
// not a value (a registry column, a table the store named, a number the store counts with) enters only
// through the explicit helpers below, each used with trusted input only.
//
//   const q = sql`SELECT id FROM ${ident(table)} WHERE trace_id = ${traceId} LIMIT ${limit}`;
//   compile(q) // { text: 'SELECT id FROM mem_3 WHERE trace_id = $1 LIMIT $2', params: [traceId, limit] }

/** A value DuckDB binds to a placeholder. */
export type Param = string | number | boolean | bigint | null | readonly string[] | readonly number[];

/**
 * One bound value. Interpolated more than once (`param`), it is one placeholder written twice: e.g. a
 * list tested both by IN and by list_contains binds each value once.
 */
export class Value {
  readonly value: Param;
  /** @internal The compile that last numbered this value, and the number it gave (see compile). */
  numberedBy: object | null = null;
  /** @internal */
  number = 0;
  constructor(value: Param) {
    this.value = value;
  }
}

/** What a template may interpolate: a fragment (spliced), a shared Value, or a plain value (a new parameter). */
export type SqlPart = Sql | Value | Param;

/** A piece of SQL with its parameters; immutable, built by `sql` and the helpers. */
export class Sql {
  /** Text around the parts: strings.length === parts.length + 1. */
  readonly strings: readonly string[];
  readonly parts: readonly (Sql | Value)[];

  /** @internal Use `sql`, `raw`, `ident`, `int` or `joinSql`. */
  constructor(strings: readonly string[], parts: readonly (Sql | Value)[]) {
    this.strings = strings;
    this.parts = parts;
  }
}

export function sql(strings: TemplateStringsArray, ...parts: SqlPart[]): Sql {
  const items: (Sql | Value)[] = new Array(parts.length);
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    items[i] = p instanceof Sql || p instanceof Value ? p : new Value(p);
  }
  return new Sql(strings, items);
}

/** A value to interpolate more than once as one placeholder. */
export function param(value: Param): Value {
  return new Value(value);
}

/**
 * SQL text written by our own code: registry expressions (ColumnDef.sql), keywords and clauses chosen
 * from a fixed set. Never text that came from a request or from stored data.
 */
export function raw(text: string): Sql {
  return new Sql([text], []);
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A plain identifier (a table, column or alias the store named: mem_3, m12, mx0); anything else throws. */
export function ident(name: string): Sql {
  if (!IDENT.test(name)) throw new Error(`not a plain SQL identifier: ${JSON.stringify(name)}`);
  return raw(name);
}

/**
 * An integer written into the text: where DuckDB takes no parameter (bitstring_agg's bounds, COPY
 * options) or where the store's own counters are constants of a subquery. Anything but a safe integer throws.
 */
export function int(n: number): Sql {
  if (!Number.isSafeInteger(n)) throw new Error(`not a safe integer: ${n}`);
  return raw(String(n));
}

/** Fragments one after another, `separator` (our own text) between them. */
export function joinSql(items: readonly Sql[], separator = ', '): Sql {
  if (items.length === 0) return EMPTY;
  const strings: string[] = new Array(items.length + 1).fill(separator);
  strings[0] = '';
  strings[items.length] = '';
  return new Sql(strings, items);
}

/** The empty fragment. */
export const EMPTY: Sql = raw('');

/** The final text with numbered placeholders, and the values in their order. */
export interface Compiled {
  readonly text: string;
  readonly params: Param[];
}

export function compile(q: Sql): Compiled {
  const params: Param[] = [];
  // A value met again in this compile keeps its number: each Value remembers the compile that numbered
  // it (compiles run start to end synchronously, so no other can intervene).
  const stamp = {};
  const walk = (s: Sql): string => {
    let text = s.strings[0]!;
    for (let i = 0; i < s.parts.length; i++) {
      const p = s.parts[i]!;
      if (p instanceof Sql) text += walk(p);
      else {
        if (p.numberedBy !== stamp) {
          params.push(p.value);
          p.numberedBy = stamp;
          p.number = params.length;
        }
        text += `$${p.number}`;
      }
      text += s.strings[i + 1]!;
    }
    return text;
  };
  return { text: walk(q), params };
}
