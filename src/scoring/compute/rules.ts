// Declarative scorers run (schemas/scoring.ts ScorerRule; their checks in catalog/scorer-rule.ts).
// Every kind reads fields of the record and compares them: nothing in a rule runs as code. Regular
// expressions run in DuckDB (RE2: linear time, whatever the pattern).
import type { ValidateFunction } from 'ajv';
import { compileRuleSchema } from '../../catalog/scorer-rule.js';
import type { ScorerRule } from '../../schemas/scoring.js';
import { failed, notApplicable, type Outcome, type Runner, type ScorableRecord } from '../outcome.js';
import { sentenceBleu } from './bleu.js';
import { levenshteinRatio } from './levenshtein.js';
import { rouge1 } from './rouge.js';
import { asText, plainTokens, wordTokens } from './text.js';

/** What rules need from outside: RE2 matching of many texts against one pattern (null: no match test possible). */
export interface RuleDeps {
  regexMatches(texts: readonly string[], pattern: string, caseSensitive: boolean): Promise<boolean[]>;
}

/** A field's raw value (see RULE_FIELD). */
export function fieldValue(r: ScorableRecord, field: string): unknown {
  const dot = field.indexOf('.');
  if (dot > 0) {
    const map = (r as Record<string, unknown>)[field.slice(0, dot)];
    return map && typeof map === 'object' ? (map as Record<string, unknown>)[field.slice(dot + 1)] : undefined;
  }
  return (r as Record<string, unknown>)[field];
}

function fieldText(r: ScorableRecord, field: string): string | null {
  return asText(fieldValue(r, field), field === 'input');
}

const success = (value: number): Outcome => ({ status: 'success', value });
const yes = (b: boolean): Outcome => success(b ? 1 : 0);

/** The text compared with: the rule's fixed value, else its reference field (default dataset_output). */
function referenceText(rule: ScorerRule, r: ScorableRecord): string | null {
  if (typeof rule.value === 'string') return rule.value;
  return fieldText(r, rule.reference ?? 'dataset_output');
}

function missing(field: string): Outcome {
  return notApplicable(`the record has no ${field}`);
}

function pairwise(rule: ScorerRule, compare: (candidate: string, reference: string) => number): Runner {
  const field = rule.field ?? 'output';
  return async (records) =>
    records.map((r) => {
      const cand = fieldText(r, field);
      if (cand === null) return missing(field);
      const ref = referenceText(rule, r);
      if (ref === null) return missing(rule.reference ?? 'dataset_output');
      return success(compare(cand, ref));
    });
}

function numberAt(r: ScorableRecord, field: string): number | null {
  const v = fieldValue(r, field);
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

function within(v: number, min: number | undefined, max: number | undefined): boolean {
  return (min === undefined || v >= min) && (max === undefined || v <= max);
}

/** The runner of a rule (checked when it was registered: checkRule). */
export function ruleRunner(rule: ScorerRule, deps: RuleDeps): Runner {
  const field = rule.field ?? 'output';
  const fold = (s: string) => (rule.case_sensitive === false ? s.toLowerCase() : s);
  switch (rule.kind) {
    case 'bleu':
      return pairwise(rule, (c, ref) => sentenceBleu([wordTokens(ref)], wordTokens(c)));
    case 'rouge':
      return pairwise(rule, (c, ref) => rouge1(plainTokens(ref), plainTokens(c)));
    case 'levenshtein':
      return pairwise(rule, (c, ref) => levenshteinRatio(fold(c), fold(ref)));
    case 'exact_match':
      return pairwise(rule, (c, ref) => {
        const t = (s: string) => fold(rule.trim === false ? s : s.trim());
        return t(c) === t(ref) ? 1 : 0;
      });
    case 'contains': {
      const wanted = (Array.isArray(rule.value) ? rule.value : [rule.value ?? '']).map(fold);
      return async (records) =>
        records.map((r) => {
          const text = fieldText(r, field);
          if (text === null) return missing(field);
          const t = fold(text);
          return yes(rule.match === 'all' ? wanted.every((w) => t.includes(w)) : wanted.some((w) => t.includes(w)));
        });
    }
    case 'regex':
      return async (records) => {
        const texts = records.map((r) => fieldText(r, field));
        const present = texts.filter((t): t is string => t !== null);
        let matches: boolean[];
        try {
          matches = present.length === 0 ? [] : await deps.regexMatches(present, rule.pattern!, rule.case_sensitive !== false);
        } catch (err) {
          return records.map(() => failed(`the pattern cannot be used: ${(err as Error).message}`));
        }
        let i = 0;
        return texts.map((t) => (t === null ? missing(field) : yes(matches[i++] === true)));
      };
    case 'valid_json':
      return async (records) =>
        records.map((r) => {
          const v = fieldValue(r, field);
          if (v === null || v === undefined) return missing(field);
          if (typeof v !== 'string') return yes(true); // logged as JSON, kept as JSON
          try {
            JSON.parse(v);
            return yes(true);
          } catch {
            return yes(false);
          }
        });
    case 'json_schema': {
      let validate: ValidateFunction | null = null;
      return async (records) => {
        validate ??= compileRuleSchema(rule.schema as object | boolean);
        return records.map((r) => {
          let v = fieldValue(r, field);
          if (v === null || v === undefined) return missing(field);
          if (typeof v === 'string') {
            try {
              v = JSON.parse(v);
            } catch {
              return { status: 'success', value: 0, explanation: 'not JSON' } as Outcome;
            }
          }
          const ok = validate!(v);
          if (ok) return success(1);
          const e = validate!.errors?.[0];
          return { status: 'success', value: 0, explanation: `${e?.instancePath || '/'} ${e?.message ?? 'does not match'}` } as Outcome;
        });
      };
    }
    case 'tool_error':
      return async (records) =>
        records.map((r) => {
          const code = numberAt(r, 'status_code');
          if (code === null) return missing('status_code');
          return yes(code < 200 || code >= 400);
        });
    case 'threshold':
      return async (records) =>
        records.map((r) => {
          const v = numberAt(r, rule.field!);
          return v === null ? missing(rule.field!) : yes(within(v, rule.min, rule.max));
        });
    case 'latency':
      return async (records) =>
        records.map((r) => {
          const ns = numberAt(r, 'metrics.duration_ns');
          return ns === null ? missing('metrics.duration_ns') : yes(ns / 1e6 <= rule.max_ms!);
        });
    case 'cost': {
      const metric = `metrics.${rule.metric ?? 'cost'}`;
      return async (records) =>
        records.map((r) => {
          const v = numberAt(r, metric);
          return v === null ? missing(metric) : yes(within(v, rule.min, rule.max));
        });
    }
  }
}
