// Structural mutations of a valid request body: pick a node, then change its type, drop it, add keys,
// repeat keys, wrap or unwrap it, blow it up, nest it deeply, or swap in a hostile value. A body built
// this way is mostly valid, so the fuzzer gets past the schema into the handlers and storage.
import { cloneFuzz, DupKeys, Raw, setOwn, toJsonText } from './json-text.js';
import type { Rng } from './rng.js';
import { deepText, HOSTILE_KEYS, hostileNumber, hostileString, PATH_PAYLOADS, randomValue, SQL_PAYLOADS } from './values.js';

type Path = (string | number)[];

function isContainer(v: unknown): v is Record<string, unknown> | unknown[] {
  return v !== null && typeof v === 'object' && !(v instanceof Raw) && !(v instanceof DupKeys);
}

/** Every node of a value (the root included) with its path, up to a depth. */
function nodes(value: unknown, limit = 12): { path: Path; value: unknown }[] {
  const out: { path: Path; value: unknown }[] = [];
  const walk = (v: unknown, path: Path) => {
    out.push({ path, value: v });
    if (path.length >= limit || !isContainer(v)) return;
    if (Array.isArray(v))
      v.slice(0, 50).forEach((x, i) => {
        walk(x, [...path, i]);
      });
    else for (const k of Object.keys(v).slice(0, 50)) walk(v[k], [...path, k]);
  };
  walk(value, []);
  return out;
}

function getAt(root: unknown, path: Path): unknown {
  let cur = root;
  for (const k of path) cur = (cur as Record<string | number, unknown>)[k];
  return cur;
}

/** Replaces the node at `path` (the root when empty); `undefined` removes it. Returns the new root. */
function setAt(root: unknown, path: Path, value: unknown): unknown {
  if (path.length === 0) return value;
  const parent = getAt(root, path.slice(0, -1)) as Record<string | number, unknown>;
  const key = path[path.length - 1]!;
  if (Array.isArray(parent)) {
    if (value === undefined) parent.splice(key as number, 1);
    else parent[key as number] = value;
  } else if (value === undefined) {
    delete parent[key];
  } else {
    setOwn(parent, String(key), value);
  }
  return root;
}

function sameKindHostile(rng: Rng, v: unknown, extraStrings: readonly string[]): unknown {
  if (typeof v === 'string') return rng.chance(0.3) && extraStrings.length ? rng.pick(extraStrings) : hostileString(rng);
  if (typeof v === 'number') return hostileNumber(rng);
  if (typeof v === 'boolean') return rng.pick([!v, 'true', 1, 0, null, 'yes']);
  if (Array.isArray(v)) return rng.pick([[], [null], v.concat(v), Array.from({ length: rng.pick([100, 1000, 20_000]) }, () => v[0] ?? 1)]);
  return randomValue(rng);
}

export interface MutateOptions {
  /** Strings worth planting (valid ids of other kinds, column names, ...). */
  strings?: readonly string[];
}

function isSmall(value: unknown): boolean {
  try {
    return toJsonText(value, 2_000).length <= 2_000;
  } catch {
    return false;
  }
}

/** One mutation applied to a copy of `body`. */
export function mutateOnce(body: unknown, rng: Rng, options: MutateOptions = {}): unknown {
  let root = cloneFuzz(body);
  const all = nodes(root);
  const { path, value } = rng.pick(all);
  const extra = options.strings ?? [];
  const op = rng.int(0, 15);
  switch (op) {
    case 0: // wrong type
      return setAt(root, path, rng.pick([null, true, 0, -1, 'x', [], {}, [value], { value }]));
    case 1: // same kind, hostile value
    case 2:
      return setAt(root, path, sameKindHostile(rng, value, extra));
    case 3: // drop it
      return path.length === 0 ? {} : setAt(root, path, undefined);
    case 4: {
      // extra key (possibly a polluting one)
      const target = isContainer(value) && !Array.isArray(value) ? value : isContainer(root) && !Array.isArray(root) ? root : null;
      if (!target) return setAt(root, path, randomValue(rng));
      setOwn(target, rng.chance(0.6) ? rng.pick(HOSTILE_KEYS) : `extra_${rng.int(0, 99)}`, randomValue(rng));
      return root;
    }
    case 5: // array where an object is expected, or the reverse
      return setAt(root, path, Array.isArray(value) ? Object.fromEntries(value.map((v, i) => [String(i), v])) : [value]);
    case 6: // repeated keys
      if (isContainer(value) && !Array.isArray(value)) {
        const entries = Object.keys(value).map((k) => [k, value[k]] as const);
        const k = entries.length ? rng.pick(entries)[0] : 'a';
        return setAt(root, path, new DupKeys([...entries, [k, randomValue(rng)]]));
      }
      return setAt(
        root,
        path,
        new DupKeys([
          ['x', value],
          ['x', randomValue(rng)],
        ]),
      );
    case 7: // deep nesting
      return setAt(root, path, deepText(rng.pick([64, 1_000, 20_000, 200_000]), rng.chance(0.5) ? 'array' : 'object'));
    case 8: // long or exotic string
      return setAt(
        root,
        path,
        rng.pick(['x'.repeat(rng.pick([10_000, 300_000])), '\uD800'.repeat(100), '\u0000'.repeat(10), '🚀'.repeat(5_000)]),
      );
    case 9: // an id of another kind, a column name, another valid string
      return setAt(root, path, extra.length ? rng.pick(extra) : rng.uuid());
    case 10: // SQL or path payload
      return setAt(root, path, rng.pick(rng.chance(0.5) ? SQL_PAYLOADS : PATH_PAYLOADS));
    case 11: // many copies (of something small: the body must stay a sendable size)
      if (!isSmall(value)) return setAt(root, path, randomValue(rng));
      if (Array.isArray(value))
        return setAt(
          root,
          path,
          Array.from({ length: rng.pick([50, 500, 5_000]) }, (_, i) => cloneFuzz(value[i % Math.max(1, value.length)] ?? null)),
        );
      return setAt(
        root,
        path,
        Array.from({ length: rng.pick([50, 500]) }, () => cloneFuzz(value)),
      );
    case 12: // a number at a boundary
      return setAt(root, path, hostileNumber(rng));
    case 13: // null everywhere
      return setAt(root, path, null);
    case 14: // the whole body replaced
      root = rng.pick([null, [], 'string', 42, true, [body], randomValue(rng)]);
      return root;
    default: // a random value of any kind
      return setAt(root, path, randomValue(rng));
  }
}

/** One to `max` mutations. */
export function mutate(body: unknown, rng: Rng, options: MutateOptions = {}, max = 3): unknown {
  let out = body;
  for (let i = rng.int(1, max); i > 0; i--) out = mutateOnce(out, rng, options);
  return out;
}
