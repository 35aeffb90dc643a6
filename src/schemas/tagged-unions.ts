// Readable errors for unions tagged by a field (filters and sorts by `name`, color pickers by
// `type`, ...). TypeBox reports every branch of a failed union; for a tagged union only the branch
// the value's tag selects is relevant: a wrong operator should be reported once, against the
// operators of that filter kind, not drowned in "name must be 'tags'" from the other branches. An
// unknown or missing tag is reported at the tag alone, with the list of allowed tags. Errors from
// a `null` branch are dropped when the value is an object or a list (Nullable(...) of either).
import { type TSchema, Settings } from '../vendor/typebox.js';

// TypeBox stops collecting errors after 8 by default; a tagged union of 15 filter kinds produces one
// error per rejected branch before it reaches the selected one, so the cap must be well above that.
if (Settings.Get().maxErrors < 1000) Settings.Set({ maxErrors: 1000 });

/** A TypeBox validation error, its params readable by name. */
export interface TbError {
  keyword: string;
  schemaPath: string;
  instancePath: string;
  params: Record<string, unknown>;
  message: string;
}

/** TypeBox's error as a TbError (its params are typed per keyword; a copy reads them by name). */
export function tbError(e: Omit<TbError, 'params'> & { params: object }): TbError {
  return { keyword: e.keyword, schemaPath: e.schemaPath, instancePath: e.instancePath, params: { ...e.params }, message: e.message };
}

type Node = Record<string, unknown>;
const tagCache = new WeakMap<object, string | null>();

/** The property every branch pins to a distinct constant, if there is one ('name' and 'type' first). */
function tagOf(union: Node): string | null {
  if (tagCache.has(union)) return tagCache.get(union)!;
  const branches = union['anyOf'];
  let tag: string | null = null;
  if (Array.isArray(branches) && branches.length > 1 && branches.every((b) => isObj(b) && isObj(b['properties']))) {
    const keys = Object.keys((branches[0] as Node)['properties'] as Node);
    const ordered = [...keys.filter((k) => k === 'name' || k === 'type'), ...keys.filter((k) => k !== 'name' && k !== 'type')];
    tag =
      ordered.find((k) => {
        const consts = branches.map((b) => constOf(b as Node, k));
        return consts.every((c) => c !== undefined) && new Set(consts).size === consts.length;
      }) ?? null;
  }
  tagCache.set(union, tag);
  return tag;
}

function constOf(branch: Node, key: string): unknown {
  const p = (branch['properties'] as Node)[key];
  return isObj(p) ? p['const'] : undefined;
}

function isObj(v: unknown): v is Node {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function unescapePointer(s: string): string {
  return s.replace(/~1/g, '/').replace(/~0/g, '~');
}

function at(root: unknown, path: string[]): unknown {
  let cur = root;
  for (const k of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return cur;
}

/** Keeps the errors of the selected branch of every tagged union on the error's schema path. */
export function narrowTaggedUnions(schema: TSchema, errors: readonly TbError[], root: unknown): TbError[] {
  const out: TbError[] = [];
  for (const e of errors) {
    const kept = narrow(schema, e, root);
    if (kept) out.push(kept);
  }
  // "Matched no branch" adds nothing when a specific error at or below the same place remains.
  const specific = out.filter((e) => e.keyword !== 'anyOf').map((e) => e.instancePath);
  return out.filter((e) => e.keyword !== 'anyOf' || !specific.some((p) => p === e.instancePath || p.startsWith(`${e.instancePath}/`)));
}

/** `schema` is walked as plain JSON Schema (any object), along the error's schema path. */
function narrow(schema: unknown, e: TbError, root: unknown): TbError | null {
  const segs = e.schemaPath
    .replace(/^#\/?/, '')
    .split('/')
    .filter((s) => s !== '')
    .map(unescapePointer);
  const inst = e.instancePath === '' ? [] : e.instancePath.slice(1).split('/').map(unescapePointer);
  let node: unknown = schema;
  const here: string[] = [];
  for (let i = 0; i < segs.length && isObj(node); i++) {
    const seg = segs[i]!;
    if (seg === 'properties' || seg === 'patternProperties') {
      const key = segs[++i];
      if (key === undefined) break;
      node = (node[seg] as Node | undefined)?.[key];
      here.push(seg === 'properties' ? key : (inst[here.length] ?? ''));
    } else if (seg === 'items' || seg === 'additionalProperties') {
      node = node[seg];
      here.push(inst[here.length] ?? '');
    } else if (seg === 'anyOf') {
      const branch = Number(segs[++i]);
      const union = node;
      node = (union['anyOf'] as unknown[] | undefined)?.[branch];
      const value = at(root, here);
      if (value !== null && typeof value === 'object' && isObj(node) && node['type'] === 'null') return null;
      if (!isObj(value)) continue;
      const tag = tagOf(union);
      if (tag === null) continue;
      const branches = union['anyOf'] as Node[];
      const given = value[tag];
      const selected = branches.findIndex((b) => constOf(b, tag) === given);
      if (selected >= 0) {
        if (selected !== branch) return null;
        continue;
      }
      // Unknown or missing tag: only the tag itself is worth reporting.
      const tagPath = `/${[...here, tag].join('/')}`;
      if (e.instancePath === tagPath) return e;
      if (e.keyword === 'required' && e.instancePath === `/${here.join('/')}`.replace(/^\/$/, '')) {
        const props = (e.params['requiredProperties'] as string[] | undefined) ?? [];
        return props.includes(tag) ? { ...e, params: { ...e.params, requiredProperties: [tag] } } : null;
      }
      return null;
    } else {
      break; // a keyword of the node itself: the walk is over
    }
  }
  // The "matched no branch" error of a tagged union whose branch was picked by the tag says nothing new.
  if (e.keyword === 'anyOf' && isObj(node) && tagOf(node) !== null && isObj(at(root, inst))) return null;
  return e;
}
