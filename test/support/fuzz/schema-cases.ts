// Requests derived from the OpenAPI document, field position by field position: for every operation,
// a valid request (a hand-written seed, the document's example, or one built from the schema), then
// for each field of its body (nested objects and first list items included), query and path: wrong
// types, deep nesting, a huge string, the field dropped when required, and an unknown field beside it.
// Whether each mutated request is valid is decided by the document's own schema (Ajv), so the judge
// knows whether a 422 naming the field is owed.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { operations, pointer, type Json } from '../openapi.js';
import type { Rng } from './rng.js';

export type Loc = (string | number)[];

export interface Built {
  path: string;
  query: Record<string, string | string[]>;
  body?: unknown;
}

export interface Case {
  /** `METHOD /documented/path`. */
  op: string;
  kind: string;
  /** The field mutated, as a 422 would name it: ['body', ...], ['query', name] or ['path', name]. */
  at: Loc;
  req: Built & { method: string };
  /** The document says the request is invalid: a 422 naming `at` is owed. */
  invalid: boolean;
}

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => void;
const DEEP = 3000;
export const HUGE = 'x'.repeat(300_000);
export const UNKNOWN = 'zz_unknown_field';

function deep(): unknown {
  let v: unknown = 1;
  for (let i = 0; i < DEEP; i++) v = [v];
  return v;
}

const WRONG: [string, () => unknown][] = [
  ['array', () => [1, 'a', null]],
  ['object', () => ({ a: { b: 1 } })],
  ['number', () => 123456789.5],
  ['integer', () => -1],
  ['string', () => 'not-what-you-want'],
  ['boolean', () => true],
  ['null', () => null],
  ['deep', deep],
  ['huge', () => HUGE],
];

export class SchemaCases {
  readonly #doc: Json;
  readonly #ajv: Ajv2020;
  readonly #checks = new Map<string, (v: unknown) => boolean>();

  constructor(doc: Json) {
    this.#doc = doc;
    this.#ajv = new Ajv2020({ strict: false, validateSchema: false, coerceTypes: false });
    addFormats(this.#ajv);
    this.#ajv.addSchema(doc, 'doc');
  }

  #check(ptr: string, value: unknown, coerce = false): boolean {
    const key = `${coerce}${ptr}`;
    let c = this.#checks.get(key);
    if (!c) {
      if (coerce) {
        const ajv = new Ajv2020({ strict: false, validateSchema: false, coerceTypes: 'array' });
        addFormats(ajv);
        ajv.addSchema(this.#doc, 'doc');
        c = ajv.compile({ $ref: `doc#${ptr}` });
      } else c = this.#ajv.compile({ $ref: `doc#${ptr}` });
      this.#checks.set(key, c);
    }
    return c(structuredClone(value));
  }

  /** Resolves a `$ref` and picks the object (or list) branch of a nullable union. */
  #resolve(s: Json | undefined, want: 'object' | 'array'): Json | undefined {
    let cur = s;
    for (let i = 0; cur && i < 8; i++) {
      if (cur['$ref'])
        cur = String(cur['$ref'])
          .slice(2)
          .split('/')
          .reduce<Json | undefined>((o, k) => o?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], this.#doc);
      else if (Array.isArray(cur['anyOf'] ?? cur['oneOf']))
        cur = (cur['anyOf'] ?? cur['oneOf']).find((b: Json) => b['type'] === want || (want === 'object' && b['properties']) || b['$ref']);
      else break;
    }
    return cur;
  }

  /** Every case of one operation, given its valid request. */
  casesFor(method: string, path: string, base: Built, rng: Rng, all: boolean): Case[] {
    const op = this.#doc['paths'][path][method] as Json;
    const opName = `${method.toUpperCase()} ${path}`;
    const out: Case[] = [];
    const bodyPtr = pointer('paths', path, method, 'requestBody', 'content', 'application/json', 'schema');
    const add = (kind: string, at: Loc, req: Built, invalid: boolean) =>
      out.push({ op: opName, kind, at, req: { ...req, method: method.toUpperCase() }, invalid });
    const pick = <T>(list: T[], n: number) => (all ? list : rng.shuffle(list).slice(0, n));

    // The body, field by field.
    if (op['requestBody'] && base.body !== undefined) {
      const fields: { loc: Loc; schema: Json | undefined; required: boolean }[] = [];
      const walk = (schema: Json | undefined, value: unknown, loc: Loc) => {
        if (loc.length > 4) return;
        if (Array.isArray(value)) {
          const s = this.#resolve(schema, 'array');
          if (value.length > 0) {
            fields.push({ loc: [...loc, 0], schema: s?.['items'], required: false });
            walk(s?.['items'], value[0], [...loc, 0]);
          }
          return;
        }
        const s = this.#resolve(schema, 'object');
        if (!s?.['properties'] || value === null || typeof value !== 'object') return;
        const required = new Set<string>(s['required'] ?? []);
        for (const key of Object.keys(s['properties'])) {
          fields.push({ loc: [...loc, key], schema: s['properties'][key], required: required.has(key) });
          if ((value as Json)[key] !== undefined) walk(s['properties'][key], (value as Json)[key], [...loc, key]);
        }
        // An unknown field beside the known ones must be ignored.
        const body = fresh(base.body);
        setAt(body, [...loc, UNKNOWN], { a: [1, { b: 'c' }] });
        add('unknown field', ['body', ...loc, UNKNOWN], { ...base, body }, !this.#check(bodyPtr, body));
      };
      walk(op['requestBody'].content['application/json'].schema, base.body, []);
      add('body: wrong type', ['body'], { ...base, body: 'a string' }, !this.#check(bodyPtr, 'a string'));
      for (const f of fields) {
        for (const [kind, make] of pick(WRONG, 2)) {
          const body = fresh(base.body);
          if (!setAt(body, f.loc, make())) continue;
          add(kind, ['body', ...f.loc], { ...base, body }, !this.#check(bodyPtr, body));
        }
        if (f.required) {
          const body = fresh(base.body);
          if (deleteAt(body, f.loc)) add('missing', ['body', ...f.loc], { ...base, body }, !this.#check(bodyPtr, body));
        }
      }
    }

    // Query and path parameters.
    for (const [i, p] of ((op['parameters'] ?? []) as Json[]).entries()) {
      const ptr = pointer('paths', path, method, 'parameters', String(i), 'schema');
      const where = p['in'] === 'query' ? 'query' : p['in'] === 'path' ? 'path' : null;
      if (!where) continue;
      for (const junk of pick(['abc', '-1', '1e999', '99999999999999999999', '', '%00', 'true', HUGE.slice(0, 5000)], 2)) {
        const valid = this.#check(ptr, junk, true);
        if (where === 'path') {
          if (junk === '') continue;
          const pathText = base.path.replace(`{${p['name']}}`, encodeURIComponent(junk));
          add('path: junk', ['path', p['name']], { ...base, path: pathText }, !valid);
        } else add('query: junk', ['query', p['name']], { ...base, query: { ...base.query, [p['name']]: junk } }, !valid);
      }
      if (where === 'query' && p['required']) {
        const query = { ...base.query };
        delete query[p['name']];
        add('missing', ['query', p['name']], { ...base, query }, true);
      }
    }
    return out;
  }

  operations(): { method: string; path: string; op: Json }[] {
    return operations(this.#doc);
  }

  /** A minimal valid value of a schema (required fields only), for operations without a seed. */
  minimal(schema: Json | undefined): unknown {
    const s = this.#resolve(schema, 'object');
    if (!s) return {};
    if (s['enum']) return s['enum'][0];
    if (s['const'] !== undefined) return s['const'];
    if (s['type'] === 'object' || s['properties']) {
      const out: Json = {};
      for (const k of s['required'] ?? []) out[k] = this.minimal(s['properties']?.[k]);
      return out;
    }
    if (s['type'] === 'array') return Array.from({ length: s['minItems'] ?? 0 }, () => this.minimal(s['items']));
    if (s['type'] === 'integer' || s['type'] === 'number') return s['minimum'] ?? 1;
    if (s['type'] === 'boolean') return false;
    if (s['type'] === 'string')
      return s['format'] === 'email'
        ? `fuzz${Math.random().toString(36).slice(2, 8)}@example.com`
        : s['format'] === 'uuid'
          ? '00000000-0000-4000-8000-000000000000'
          : 'x'.repeat(Math.max(8, s['minLength'] ?? 0));
    return null;
  }
}

function setAt(root: unknown, loc: Loc, value: unknown): boolean {
  let cur = root as Json;
  for (const k of loc.slice(0, -1)) {
    if (cur === null || typeof cur !== 'object') return false;
    if (cur[k] === undefined || cur[k] === null || typeof cur[k] !== 'object') cur[k] = {};
    cur = cur[k];
  }
  if (cur === null || typeof cur !== 'object') return false;
  cur[loc[loc.length - 1]!] = value;
  return true;
}

function deleteAt(root: unknown, loc: Loc): boolean {
  let cur = root as Json;
  for (const k of loc.slice(0, -1)) {
    cur = cur?.[k];
    if (cur === null || typeof cur !== 'object') return false;
  }
  delete cur[loc[loc.length - 1]!];
  return true;
}

/** Does a 422 issue's loc name the field: the field itself, something inside it, or (below the body itself) its parent object. */
export function names(loc: Loc, at: Loc): boolean {
  const s = (l: Loc) => l.map(String);
  const [a, b] = [s(loc), s(at)];
  if (a.length >= b.length) return b.every((x, i) => a[i] === x);
  return a.length >= 2 && a.every((x, i) => b[i] === x);
}

/** A deep copy sharing nothing (seeds may reuse one object in two places; a mutation must touch one field). */
function fresh<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}
