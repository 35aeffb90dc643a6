// Rules of a declarative scorer (schemas/scoring.ts ScorerRule) that its schema cannot state: what
// each kind needs, and JSON Schemas that can be checked safely. A rule comes over HTTP, so nothing in
// it may run as code: patterns are RE2 (run by DuckDB, linear time) and a JSON Schema may not carry
// regular expressions of its own (JavaScript's can take exponential time) or refer outside itself.
import { Ajv, type ValidateFunction } from 'ajv';
import { invalid } from '../errors.js';
import type { ScorerRule } from '../schemas/scoring.js';
import type { Loc } from './list-match.js';

/** JSON Schema keywords a rule's schema may not use, and why. */
const REFUSED_KEYWORDS: Record<string, string> = {
  pattern: 'regular expressions in a schema are not run (use a regex rule: RE2, linear time)',
  patternProperties: 'regular expressions in a schema are not run (use a regex rule: RE2, linear time)',
  $dynamicRef: 'a schema may refer only within itself',
  $id: 'a schema may refer only within itself',
};

function refusedKeyword(v: unknown, path: (string | number)[]): { path: (string | number)[]; key: string } | null {
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const found = refusedKeyword(v[i], [...path, i]);
      if (found) return found;
    }
    return null;
  }
  if (typeof v !== 'object' || v === null) return null;
  for (const [k, x] of Object.entries(v)) {
    if (k in REFUSED_KEYWORDS) return { path: [...path, k], key: k };
    if (k === '$ref' && typeof x === 'string' && !x.startsWith('#')) return { path: [...path, k], key: '$dynamicRef' };
    const found = refusedKeyword(x, [...path, k]);
    if (found) return found;
  }
  return null;
}

/** A rule's JSON Schema compiled (throws with the compiler's message when it is not a valid schema). */
export function compileRuleSchema(schema: object | boolean): ValidateFunction {
  const ajv = new Ajv({ strict: false, allErrors: false, validateFormats: false });
  return ajv.compile(schema);
}

/** Throws InvalidRequestError (422, at `loc`) when the rule lacks what its kind needs. */
export function checkRule(rule: ScorerRule, loc: Loc): void {
  const need = (field: keyof ScorerRule, why: string) => {
    if (rule[field] === undefined) throw invalid([...loc, field], `Field required: ${why}`, undefined, 'missing');
  };
  switch (rule.kind) {
    case 'contains':
      need('value', 'the text (or texts) to look for');
      break;
    case 'regex':
      need('pattern', 'the RE2 pattern the field must match');
      break;
    case 'json_schema': {
      need('schema', 'the JSON Schema the field must satisfy');
      const bad = refusedKeyword(rule.schema, []);
      if (bad) throw invalid([...loc, 'schema', ...bad.path], `${bad.key}: ${REFUSED_KEYWORDS[bad.key]}`, undefined);
      try {
        compileRuleSchema(rule.schema as object | boolean);
      } catch (err) {
        throw invalid([...loc, 'schema'], `not a valid JSON Schema: ${(err as Error).message}`, undefined);
      }
      break;
    }
    case 'threshold':
      need('field', 'the metric (metrics.NAME) or status_code to bound');
      if (!/^(metrics\..+|status_code)$/.test(rule.field!))
        throw invalid([...loc, 'field'], 'a threshold bounds a number: metrics.NAME or status_code', rule.field);
      if (rule.min === undefined && rule.max === undefined)
        throw invalid([...loc, 'max'], 'Field required: a bound (min, max or both)', undefined, 'missing');
      break;
    case 'latency':
      need('max_ms', 'the most milliseconds a record may take to score 1');
      break;
    case 'cost':
      need('max', 'the highest cost that scores 1');
      break;
    default:
      break;
  }
}
