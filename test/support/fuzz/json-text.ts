// Request bodies as the fuzzer builds them: ordinary JSON values plus two markers JSON.stringify cannot
// express: `Raw` (a token written verbatim: 1e999, -0, 123456789012345678901234567890, or whole
// pre-built text such as 100,000 nested arrays) and `DupKeys` (an object whose keys repeat). Keys such
// as "__proto__" are own properties here and are written like any other key.

export class Raw {
  constructor(readonly text: string) {}
}

export class DupKeys {
  constructor(readonly entries: readonly (readonly [string, unknown])[]) {}
}

/** Defines an own enumerable property, even for "__proto__" (plain assignment would set the prototype). */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

export class TooBigError extends Error {}

/**
 * Serialises a fuzz value; lone surrogates are written as \\u escapes, exactly as JSON.stringify does.
 * Throws TooBigError past `limit` characters (mutations can multiply a body beyond any string size).
 */
export function toJsonText(value: unknown, limit = 64 * 1024 * 1024): string {
  let size = 0;
  const grow = (s: string): string => {
    size += s.length;
    if (size > limit) throw new TooBigError(`body over ${limit} characters`);
    return s;
  };
  const write = (v: unknown, depth: number): string => {
    if (depth > 5000) return 'null';
    if (v instanceof Raw) return grow(v.text);
    if (v instanceof DupKeys) return `{${v.entries.map(([k, x]) => `${grow(JSON.stringify(k))}:${write(x, depth + 1)}`).join(',')}}`;
    if (v === undefined) return 'null';
    if (v === null || typeof v !== 'object') {
      if (typeof v === 'bigint') return grow(v.toString());
      return grow(JSON.stringify(v) ?? 'null');
    }
    if (Array.isArray(v)) return `[${v.map((x) => write(x, depth + 1)).join(',')}]`;
    return `{${Object.keys(v)
      .map((k) => `${grow(JSON.stringify(k))}:${write((v as Record<string, unknown>)[k], depth + 1)}`)
      .join(',')}}`;
  };
  return write(value, 0);
}

/** A deep copy that keeps Raw and DupKeys markers (structuredClone would drop their classes). */
export function cloneFuzz<T>(value: T, depth = 0): T {
  if (depth > 5000 || value === null || typeof value !== 'object' || value instanceof Raw) return value;
  if (value instanceof DupKeys) return new DupKeys(value.entries.map(([k, v]) => [k, cloneFuzz(v, depth + 1)] as const)) as T;
  if (Array.isArray(value)) return value.map((v) => cloneFuzz(v, depth + 1)) as T;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value)) setOwn(out, k, cloneFuzz((value as Record<string, unknown>)[k], depth + 1));
  return out as T;
}
