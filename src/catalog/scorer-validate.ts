// Rules of a scorer definition (the service's Scorer shape and its limits) that a JSON schema cannot state:
// a roll-up config has at least one method, all of one family, and includes the roll-up method;
// a color picker has at least one constraint, numeric ranges are [low, high], and in categorical
// and multi-label pickers each category appears in at most one constraint. Checked for every
// registered scorer and for the shipped presets, so library callers get the same 422 as HTTP ones.
import { InvalidRequestError, invalid, type ValidationIssue } from '../errors.js';
import { CATEGORICAL_ROLL_UPS, NUMERIC_ROLL_UPS } from '../schemas/scorers.js';
import type { Loc } from './list-match.js';

interface RollUpInput {
  roll_up_method?: string | null;
  roll_up_config?: { roll_up_methods: readonly string[] } | null;
}

export function checkRollUp(input: RollUpInput, loc: Loc): void {
  const cfg = input.roll_up_config;
  if (cfg == null) return;
  const methods = cfg.roll_up_methods;
  const at = [...loc, 'roll_up_config', 'roll_up_methods'];
  if (!Array.isArray(methods) || methods.length === 0)
    throw invalid(at, 'List should have at least 1 item(s): give one or more roll-up methods', undefined, 'too_short');
  const numeric = methods.filter((m) => (NUMERIC_ROLL_UPS as readonly string[]).includes(m));
  const categorical = methods.filter((m) => (CATEGORICAL_ROLL_UPS as readonly string[]).includes(m));
  const unknown = methods.findIndex((m) => !numeric.includes(m) && !categorical.includes(m));
  if (unknown >= 0) {
    throw invalid(
      [...at, unknown],
      `Input should be one of ${[...NUMERIC_ROLL_UPS, ...CATEGORICAL_ROLL_UPS].map((m) => `'${m}'`).join(', ')}`,
      methods[unknown],
      'enum',
    );
  }
  if (numeric.length > 0 && categorical.length > 0) {
    throw invalid(
      at,
      `roll-up methods must all be numeric (${NUMERIC_ROLL_UPS.join(', ')}) or all categorical (${CATEGORICAL_ROLL_UPS.join(', ')}); got ${methods.join(', ')}`,
    );
  }
  if (input.roll_up_method != null && !methods.includes(input.roll_up_method)) {
    throw invalid(
      [...loc, 'roll_up_method'],
      `roll_up_method '${input.roll_up_method}' is not among roll_up_config.roll_up_methods (${methods.join(', ')})`,
      input.roll_up_method,
    );
  }
}

interface Constraint {
  color?: unknown;
  operator?: unknown;
  value?: unknown;
}

export function checkColorPicker(picker: { type: string; constraints: readonly Constraint[] } | null | undefined, loc: Loc): void {
  if (picker == null) return;
  const issues: ValidationIssue[] = [];
  const list = picker.constraints;
  if (!Array.isArray(list) || list.length === 0) {
    throw invalid(
      [...loc, 'constraints'],
      'List should have at least 1 item(s): a color picker needs one or more constraints',
      undefined,
      'too_short',
    );
  }
  const seen = new Map<string, number>();
  list.forEach((c, j) => {
    const at = [...loc, 'constraints', j, 'value'];
    if (picker.type === 'numeric') {
      if (c.operator === 'between') {
        const range = Array.isArray(c.value) ? (c.value as unknown[]) : [];
        const ok = range.length === 2 && typeof range[0] === 'number' && typeof range[1] === 'number' && range[0] <= range[1];
        if (!ok) issues.push({ loc: at, msg: 'between takes a list of two numbers [low, high] with low <= high', type: 'value_error' });
      } else if (typeof c.value !== 'number') {
        issues.push({ loc: at, msg: `operator ${String(c.operator)} takes one number`, type: 'float_type' });
      }
    } else if (picker.type === 'categorical' || picker.type === 'multi_label') {
      if (c.operator === 'eq' && typeof c.value !== 'string')
        issues.push({ loc: at, msg: 'operator eq takes one category; use one_of for a list', type: 'string_type' });
      const values = typeof c.value === 'string' ? [c.value] : Array.isArray(c.value) ? (c.value as unknown[]) : [];
      values.forEach((v, k) => {
        if (typeof v !== 'string') return;
        const first = seen.get(v);
        if (first !== undefined && first !== j) {
          issues.push({
            loc: Array.isArray(c.value) ? [...at, k] : at,
            msg: `category '${v}' already has a color in constraint ${first}; a category may appear in at most one constraint`,
            type: 'value_error',
            input: v,
          });
        } else {
          seen.set(v, j);
        }
      });
    }
  });
  if (issues.length > 0) throw new InvalidRequestError(issues);
}
