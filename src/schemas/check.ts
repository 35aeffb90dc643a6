// TypeBox validation shared by the server (every route) and the library (every TraceStore method
// taking a request body): failures become the API's 422 issues, one per offending field, `loc`
// starting with body/query/path, a message naming what is allowed.
import { type TSchema, Compile } from '../vendor/typebox.js';
import { InvalidRequestError, type ValidationIssue } from '../errors.js';
import { narrowTaggedUnions, tbError, type TbError } from './tagged-unions.js';

const compiled = new WeakMap<TSchema, ReturnType<typeof Compile>>();

function validatorOf(schema: TSchema): ReturnType<typeof Compile> {
  let v = compiled.get(schema);
  if (!v) compiled.set(schema, (v = Compile(schema)));
  return v;
}

/**
 * Deepest nesting of arrays and objects accepted anywhere in a request. Free-form fields (input,
 * output, metadata, tools, filter values) are not walked by the schema check, and a value some
 * thousands of levels deep overflows the stack of JSON.stringify further down (a 500, found by the
 * fuzzer); a thousand levels leaves a wide margin for real data.
 */
export const MAX_NESTING = 1000;

/** Values already found shallow enough: the server checks a body, then the library method again. */
const shallowEnough = new WeakSet<object>();

/**
 * One walk of a value's arrays and objects. Every request body is walked, so it keeps only depths
 * (no paths, no closures): the path is worked out by `deepPath` for the rare body that fails.
 * Without `keys`: 'deep' as soon as it nests deeper than `max`, else 'ok'. With `keys`: 'poison' as
 * soon as it holds a key that poisons a prototype wherever the value is later copied key by key (an
 * own `__proto__`, or a `constructor` object with its own `prototype`), else 'deep' or 'ok'.
 */
function walk(value: object, max: number, keys: boolean): 'poison' | 'deep' | 'ok' {
  const stack: object[] = [value];
  const depths: number[] = [0];
  let deep = false;
  while (stack.length > 0) {
    const v = stack.pop()!;
    const d = depths.pop()! + 1;
    if (d > max) {
      if (!keys) return 'deep';
      deep = true;
    }
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const x: unknown = v[i];
        if (x !== null && typeof x === 'object') {
          stack.push(x);
          depths.push(d);
        }
      }
    } else {
      for (const k in v) {
        if (keys && k === '__proto__') return 'poison';
        const x: unknown = (v as Record<string, unknown>)[k];
        if (x !== null && typeof x === 'object') {
          if (keys && k === 'constructor' && Object.hasOwn(x, 'prototype')) return 'poison';
          stack.push(x);
          depths.push(d);
        }
      }
    }
  }
  return deep ? 'deep' : 'ok';
}

/**
 * The path to the field holding a value nested deeper than `max` (up to its last named key within
 * the first 16 steps, so `{"metadata": [[[...]]]}` answers ["metadata"]), or null when it is shallow
 * enough.
 */
function deepPath(value: object, max: number): (string | number)[] | null {
  const stack: object[] = [value];
  const depths: number[] = [0];
  // Only the first 16 steps of a path are kept: past them only the depth matters.
  const paths: (string | number)[][] = [[]];
  while (stack.length > 0) {
    const v = stack.pop()!;
    const d = depths.pop()!;
    const path = paths.pop()!;
    if (d >= max) {
      let named = 0;
      path.forEach((k, i) => {
        if (typeof k === 'string') named = i + 1;
      });
      return path.slice(0, Math.max(named, 1));
    }
    const push = (k: string | number, x: unknown) => {
      if (x === null || typeof x !== 'object') return;
      stack.push(x);
      depths.push(d + 1);
      paths.push(path.length < 16 ? [...path, k] : path);
    };
    if (Array.isArray(v)) for (let i = 0; i < v.length; i++) push(i, v[i]);
    else for (const k in v) push(k, (v as Record<string, unknown>)[k]);
  }
  return null;
}

/**
 * Whether a value just parsed from a request's JSON text holds a key that poisons a prototype
 * (Fastify's default parser refuses both kinds; see `walk`). A value nested at most MAX_NESTING levels
 * is noted shallow enough on the way, so the schema check does not walk it again.
 */
export function poisonsPrototypes(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  const found = walk(value, MAX_NESTING, true);
  if (found === 'ok') shallowEnough.add(value);
  return found === 'poison';
}

/** The issues of a value against a schema, or null when it conforms. `part` is body, query or path. */
export function issuesOf(schema: TSchema, value: unknown, part = 'body'): ValidationIssue[] | null {
  if (value !== null && typeof value === 'object' && !shallowEnough.has(value)) {
    const deep = walk(value, MAX_NESTING, false) === 'deep' ? deepPath(value, MAX_NESTING) : null;
    if (deep) return [{ loc: [part, ...deep], msg: `nested too deeply (more than ${MAX_NESTING} levels)`, type: 'too_deep' }];
    shallowEnough.add(value);
  }
  const check = validatorOf(schema);
  try {
    if (check.Check(value)) return null;
    const errors = narrowTaggedUnions(schema, check.Errors(value).map(tbError), value);
    return toIssues(errors, part, value);
  } catch (err) {
    // A value nested deeply enough to exhaust the stack is refused, not a crash.
    if (err instanceof RangeError) return [{ loc: [part], msg: 'the request is nested too deeply', type: 'too_deep' }];
    throw err;
  }
}

/**
 * Bodies the server checked against a route's schema just now, each with that schema: the library
 * method the route calls takes the check as done instead of walking the body a second time. Only the
 * server marks (a body it parsed itself, never seen by a caller), and the mark is used once.
 */
const checked = new WeakMap<object, TSchema>();

/** Notes that `value` conforms to `schema` (the server, after its route's check of a parsed body). */
export function markChecked(schema: TSchema, value: unknown): void {
  if (value !== null && typeof value === 'object') checked.set(value, schema);
}

/** Throws a 422 InvalidRequestError unless the value conforms (library entry points call this). */
export function assertValid<T>(schema: TSchema, value: unknown, part = 'body'): asserts value is T {
  if (value !== null && typeof value === 'object' && checked.get(value) === schema) {
    checked.delete(value);
    return;
  }
  const issues = issuesOf(schema, value, part);
  if (issues) throw new InvalidRequestError(issues);
}

function pointerToLoc(pointer: string): (string | number)[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

function valueAt(root: unknown, loc: (string | number)[]): unknown {
  let cur = root;
  for (const k of loc) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[k];
  }
  return cur;
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a valid string',
  number: 'a valid number',
  integer: 'a valid integer',
  boolean: 'a valid boolean',
  object: 'a valid object',
  array: 'a valid list',
  null: 'null',
};

/** Folds TypeBox's errors (several per field for unions) into one readable issue per field. */
export function toIssues(errors: readonly TbError[], part: string, root: unknown): ValidationIssue[] {
  const byPath = new Map<string, TbError[]>();
  const issues: ValidationIssue[] = [];
  for (const e of errors) {
    if (e.keyword === 'required') {
      const props = (e.params['requiredProperties'] as string[] | undefined) ?? [];
      for (const p of props) issues.push({ loc: [part, ...pointerToLoc(e.instancePath), p], msg: 'Field required', type: 'missing' });
      continue;
    }
    const list = byPath.get(e.instancePath) ?? [];
    list.push(e);
    byPath.set(e.instancePath, list);
  }
  for (const [path, list] of byPath) {
    // A field whose children failed is reported through the children, not again as "no branch matched".
    if (list.every((e) => e.keyword === 'anyOf') && [...byPath.keys()].some((p) => p !== path && p.startsWith(`${path}/`))) continue;
    const loc = [part, ...pointerToLoc(path)];
    const input = valueAt(root, pointerToLoc(path));
    issues.push({ loc, ...describe(list), ...(input !== undefined && typeof input !== 'object' ? { input } : {}) });
  }
  if (issues.length === 0) issues.push({ loc: [part], msg: 'Invalid input', type: 'value_error' });
  return dedupe(issues);
}

function describe(list: TbError[]): { msg: string; type: string; ctx?: Record<string, unknown> } {
  const real = list.filter((e) => e.keyword !== 'anyOf');
  const enumErr = real.find((e) => e.keyword === 'enum');
  const consts = real.filter((e) => e.keyword === 'const').map((e) => e.params['allowedValue']);
  const allowed = [...((enumErr?.params['allowedValues'] as unknown[]) ?? []), ...consts];
  const nullable = real.some((e) => e.keyword === 'type' && e.params['type'] === 'null');
  if (allowed.length > 0) {
    const choices = allowed.map((a) => `'${String(a)}'`).join(', ');
    return { msg: `Input should be one of ${choices}${nullable ? ' (or null)' : ''}`, type: 'enum', ctx: { expected: choices } };
  }
  const fmt = real.find((e) => e.keyword === 'format');
  if (fmt) {
    const f = String(fmt.params['format']);
    return {
      msg: `Input should be a valid ${f === 'uuid' ? 'UUID' : f}${nullable ? ' or null' : ''}`,
      type: `${f.replace('-', '_')}_parsing`,
    };
  }
  const types = real.filter((e) => e.keyword === 'type').map((e) => e.params['type'] as string);
  if (types.length > 0 && types.length === real.length) {
    const names = [...new Set(types)].map((t) => TYPE_NAMES[t] ?? t);
    return { msg: `Input should be ${names.join(' or ')}`, type: `${types.find((t) => t !== 'null') ?? types[0]}_type` };
  }
  const first = real.find((e) => e.keyword !== 'type') ?? real[0] ?? list[0]!;
  switch (first.keyword) {
    case 'minItems':
      return {
        msg: `List should have at least ${String(first.params['limit'])} item(s)`,
        type: 'too_short',
        ctx: { min_length: first.params['limit'] },
      };
    case 'maxItems':
      return {
        msg: `List should have at most ${String(first.params['limit'])} item(s)`,
        type: 'too_long',
        ctx: { max_length: first.params['limit'] },
      };
    case 'minLength':
      return { msg: `String should have at least ${String(first.params['limit'])} character(s)`, type: 'string_too_short' };
    case 'maxLength':
      return { msg: `String should have at most ${String(first.params['limit'])} character(s)`, type: 'string_too_long' };
    case 'minimum':
      return { msg: `Input should be greater than or equal to ${String(first.params['limit'])}`, type: 'greater_than_equal' };
    case 'maximum':
      return { msg: `Input should be less than or equal to ${String(first.params['limit'])}`, type: 'less_than_equal' };
    default:
      return { msg: first.message, type: first.keyword };
  }
}

function dedupe(issues: ValidationIssue[]): ValidationIssue[] {
  const seen = new Set<string>();
  return issues.filter((i) => {
    const k = `${JSON.stringify(i.loc)}|${i.msg}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
