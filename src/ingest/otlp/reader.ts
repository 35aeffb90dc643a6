// Reading a span's attributes while remembering which ones a field took, so that every attribute no
// field took can go to user_metadata (nothing is dropped silently). Also the small value coercions
// the conventions need: JSON strings that hold structures, numbers sent as strings, string lists.
import type { Attrs, AttrValue } from './model.js';

export class AttrReader {
  readonly #attrs: Attrs;
  readonly taken = new Set<string>();
  constructor(attrs: Attrs) {
    this.#attrs = attrs;
  }

  has(key: string): boolean {
    return this.#attrs.has(key);
  }

  /** The value without taking it (for decisions such as the span kind). */
  peek(key: string): AttrValue | undefined {
    return this.#attrs.get(key);
  }

  /** The value of the first key present, taking it; undefined when none is. */
  take(...keys: string[]): AttrValue | undefined {
    for (const k of keys) {
      const v = this.#attrs.get(k);
      if (v !== undefined && v !== null && v !== '') {
        this.taken.add(k);
        return v;
      }
    }
    return undefined;
  }

  /** Takes every key under `prefix` (e.g. "llm.input_messages."): suffix -> value. */
  takePrefix(prefix: string): Map<string, AttrValue> | undefined {
    let out: Map<string, AttrValue> | undefined;
    for (const [k, v] of this.#attrs) {
      if (!k.startsWith(prefix)) continue;
      (out ??= new Map()).set(k.slice(prefix.length), v);
      this.taken.add(k);
    }
    return out;
  }

  /** Whether any key starts with `prefix`. */
  hasPrefix(prefix: string): boolean {
    for (const k of this.#attrs.keys()) if (k.startsWith(prefix)) return true;
    return false;
  }

  /** Attributes no field took, in their order. */
  *rest(): IterableIterator<[string, AttrValue]> {
    for (const e of this.#attrs) if (!this.taken.has(e[0])) yield e;
  }
}

/** A value that may be a JSON string holding a structure: the structure; other strings as they are. */
export function structured(v: AttrValue | undefined): unknown {
  if (typeof v !== 'string') return v;
  let i = 0;
  while (i < v.length && v.charCodeAt(i) <= 32) i++;
  const c = v.charCodeAt(i);
  if (c !== 91 && c !== 123) return v; // [ {
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return v;
  }
}

export function num(v: AttrValue | undefined): number | undefined {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
}

export function text(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** A list of strings from an array, a JSON array string, or a comma-separated string. */
export function stringList(v: AttrValue | undefined): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  const s = structured(v);
  if (Array.isArray(s)) return s.filter((x) => x !== null && x !== undefined).map((x) => (typeof x === 'string' ? x : JSON.stringify(x)));
  if (typeof s === 'string')
    return s
      .split(',')
      .map((x) => x.trim())
      .filter((x) => x !== '');
  return [String(s)];
}

/** A list, or an object without prototype, that unflatten builds. */
type Branch = unknown[] | Record<string, unknown>;

const isBranch = (v: unknown): v is Branch => typeof v === 'object' && v !== null;

/** Sets a branch's entry (a list takes numeric keys only; unflatten stops at a name under a list). */
function put(node: Branch, key: string | number, v: unknown): void {
  if (!Array.isArray(node)) node[key] = v;
  else if (typeof key === 'number') node[key] = v;
}

/**
 * Flattened OpenInference lists (`0.message.role`, `0.message.tool_calls.1.tool_call.id`, ...) ->
 * nested objects: numeric segments become array indexes. (Hand-rolled: it runs for every retriever
 * document and message, and splitting with regular expressions showed in profiles.)
 */
export function unflatten(entries: Map<string, AttrValue>): unknown[] {
  const root: unknown[] = [];
  for (const [path, value] of entries) {
    let node: Branch = root;
    let start = 0;
    for (;;) {
      const dot = path.indexOf('.', start);
      const part = dot < 0 ? path.slice(start) : path.slice(start, dot);
      const key: string | number = isIndex(part) ? Number(part) : part;
      if (Array.isArray(node) && typeof key !== 'number') break; // a name under a list: not this shape
      if (dot < 0) {
        put(node, key, value);
        break;
      }
      const found: unknown = Array.isArray(node) ? (typeof key === 'number' ? node[key] : undefined) : node[key];
      let next: Branch;
      if (isBranch(found)) next = found;
      else {
        const nextDot = path.indexOf('.', dot + 1);
        next = isIndex(nextDot < 0 ? path.slice(dot + 1) : path.slice(dot + 1, nextDot)) ? [] : Object.create(null);
        put(node, key, next);
      }
      node = next;
      start = dot + 1;
    }
  }
  return root.filter((x) => x !== undefined);
}

/** A list index: 1 to 6 digits (longer numbers stay keys, so a hostile path cannot make a huge array). */
function isIndex(s: string): boolean {
  if (s.length === 0 || s.length > 6) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}
