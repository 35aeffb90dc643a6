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

/** Serialises a fuzz value; lone surrogates are written as \\u escapes, exactly as JSON.stringify does. */
export function toJsonText(value: unknown, depth = 0): string {
  if (depth > 5000) return 'null';
  if (value instanceof Raw) return value.text;
  if (value instanceof DupKeys) return `{${value.entries.map(([k, v]) => `${JSON.stringify(k)}:${toJsonText(v, depth + 1)}`).join(',')}}`;
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'bigint') return value.toString();
    return JSON.stringify(value) ?? 'null';
  }
  if (Array.isArray(value)) return `[${value.map((v) => toJsonText(v, depth + 1)).join(',')}]`;
  return `{${Object.keys(value)
    .map((k) => `${JSON.stringify(k)}:${toJsonText((value as Record<string, unknown>)[k], depth + 1)}`)
    .join(',')}}`;
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
