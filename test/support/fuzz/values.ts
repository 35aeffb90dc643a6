// Hostile values for the fuzzer and the injection tests: strings that break SQL, paths, JSON, UTF-8 and
// naive parsers; numbers at and beyond every boundary; keys that pollute prototypes; deep nesting.
import { DupKeys, Raw, setOwn } from './json-text.js';
import type { Rng } from './rng.js';

/** SQL injection payloads: quotes, comments, stacked statements, DuckDB-specific functions and files. */
export const SQL_PAYLOADS: readonly string[] = [
  "'",
  "''",
  "'; DROP TABLE mem; --",
  "'; DELETE FROM dead; --",
  "x'); DROP TABLE mem; --",
  '" OR 1=1 --',
  "' OR '1'='1",
  "') OR ('1'='1",
  '1; SELECT * FROM mem --',
  "' UNION SELECT id, input, output FROM mem --",
  "'||(SELECT string_agg(input, ',') FROM mem)||'",
  "metrics['x'] OR 1=1",
  '$1',
  '$2; --',
  '?',
  '%',
  '_',
  '%_%',
  '\\',
  "\\'; --",
  '/* comment */',
  '--',
  ';',
  'NULL',
  'null',
  'TRUE',
  "read_csv_auto('/etc/passwd')",
  "'; COPY (SELECT 1) TO '/tmp/tracelake-pwned.csv'; --",
  "'; ATTACH '/tmp/tracelake-pwned.db' AS x; --",
  "'; INSTALL httpfs; LOAD httpfs; --",
  "'; PRAGMA database_list; --",
  "'; SET threads = 1; --",
  "getenv('HOME')",
  '"; DROP TABLE mem; --',
  '`mem`',
  "E'\\x27'",
];

/** Path traversal payloads (for ids and names that might reach the file system). */
export const PATH_PAYLOADS: readonly string[] = [
  '..',
  '../',
  '../../../../etc/passwd',
  '..\\..\\..\\windows\\win.ini',
  '%2e%2e%2f%2e%2e%2f',
  '..%2f..%2f',
  '....//....//',
  '/etc/passwd',
  '/dev/zero',
  'C:\\Windows',
  'records/../../manifest.json',
  'project_id=x/run_id=y',
  '\u0000',
  'a\u0000b',
  '~',
  '.',
];

const LONG = (n: number, c = 'x') => c.repeat(n);

export const HOSTILE_STRINGS: readonly string[] = [
  '',
  ' ',
  '\t\n\r',
  ...SQL_PAYLOADS,
  ...PATH_PAYLOADS,
  '\uD800',
  '\uDC00',
  'a\uD83Db',
  '\uDFFF\uD800',
  '\uFFFF',
  '\uFEFF',
  '\u202Eevil',
  'e\u0301\u0301\u0301',
  'ünïcødé ✓ 日本語 🚀 👨‍👩‍👧',
  '𝕏'.repeat(100),
  '<script>alert(1)</script>',
  '{{7*7}}',
  '${process.exit(1)}',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'metrics/x',
  'metrics/',
  "metrics/'; DROP TABLE mem; --",
  'metrics/__proto__',
  'metrics/a/b',
  'METRICS/x',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  'FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF',
  '{00000000-0000-0000-0000-000000000000}',
  '000000000000000000000000000000000000',
  '2026-13-45T99:99:99Z',
  '0000-01-01T00:00:00Z',
  '+275760-09-13T00:00:00.000Z',
  '-271821-04-20T00:00:00.000Z',
  '9999-12-31T23:59:59.999999999Z',
  '1970-01-01',
  '2026-03-01T10:00:00+25:00',
  'now',
  '1e999',
  'NaN',
  'Infinity',
  '-0',
  '0x10',
  '9'.repeat(400),
  '{"a":1}',
  '[1,2]',
  'true',
  LONG(1_000),
  LONG(70_000, 'é'),
];

/** Number tokens, written verbatim (some are not representable as a JS number). */
export const HOSTILE_NUMBERS: readonly Raw[] = [
  '0',
  '-0',
  '-1',
  '1',
  '0.5',
  '-0.0',
  '2147483647',
  '2147483648',
  '-2147483649',
  '4294967296',
  '9007199254740991',
  '9007199254740993',
  '18446744073709551616',
  '123456789012345678901234567890',
  '1e308',
  '-1e308',
  '1.7976931348623157e308',
  '1e999',
  '-1e999',
  '1e-400',
  '4.9e-324',
  '5e-324',
  '1E3',
  '8.64e15',
  '8.64e15000',
].map((t) => new Raw(t));

export const HOSTILE_KEYS: readonly string[] = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  '__defineGetter__',
  '',
  ' ',
  'a'.repeat(5_000),
  '日本',
  '\uD800',
  '\u0000',
  'metrics/x',
  "'; DROP TABLE mem;--",
  '$1',
  'x.y',
  'x[0]',
  'seq',
  'project_id',
  'run_id',
];

/** Text of `depth` nested arrays (or objects), built as a string so no recursion is needed here. */
export function deepText(depth: number, kind: 'array' | 'object' = 'array'): Raw {
  if (kind === 'array') return new Raw(`${'['.repeat(depth)}${']'.repeat(depth)}`);
  return new Raw(`${'{"a":'.repeat(depth)}null${'}'.repeat(depth)}`);
}

export function hostileString(rng: Rng): string {
  return rng.pick(HOSTILE_STRINGS);
}

export function hostileNumber(rng: Rng): Raw {
  return rng.pick(HOSTILE_NUMBERS);
}

/** A random JSON-ish value of a random shape (small by default; sometimes big or deep). */
export function randomValue(rng: Rng, depth = 0): unknown {
  const kind = depth > 3 ? rng.int(0, 4) : rng.int(0, 9);
  switch (kind) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
      return hostileNumber(rng);
    case 3:
      return hostileString(rng);
    case 4:
      return rng.int(-5, 100);
    case 5:
      return Array.from({ length: rng.int(0, 4) }, () => randomValue(rng, depth + 1));
    case 6: {
      const o: Record<string, unknown> = {};
      for (let i = rng.int(0, 4); i > 0; i--)
        setOwn(o, rng.chance(0.3) ? rng.pick(HOSTILE_KEYS) : `k${rng.int(0, 9)}`, randomValue(rng, depth + 1));
      return o;
    }
    case 7:
      return deepText(rng.pick([50, 500, 5_000, 100_000]), rng.chance(0.5) ? 'array' : 'object');
    case 8:
      return new DupKeys([
        ['a', randomValue(rng, depth + 1)],
        ['a', randomValue(rng, depth + 1)],
      ]);
    default:
      return rng.chance(0.5) ? rng.uuid() : `${rng.pick(['x', 'name', 'llm', 'trace'])}-${rng.int(0, 99)}`;
  }
}
