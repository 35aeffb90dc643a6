// What runs for a scorer, or why nothing can: a plan (plans.ts) becomes a runner (a batch of records
// in, one outcome each out) or a reason it is not computed in this process. Deterministic presets and
// declarative rules always run; library scorers run where the library defined them; Python code
// scorers only when the operator turned the python3 runner on; LLM judges only with a judge endpoint.
import type { ScorerRow, VersionRow } from '../catalog/scorer-row.js';
import type { ScorerRule } from '../schemas/scoring.js';
import { ruleRunner, type RuleDeps } from './compute/rules.js';
import type { Runner } from './outcome.js';
import type { ScorerPlan } from './plans.js';

/** Built-in presets computed without a model, as the rules they are. */
export const PRESET_RULES: Readonly<Record<string, ScorerRule>> = {
  bleu: { kind: 'bleu', field: 'output', reference: 'dataset_output' },
  rouge: { kind: 'rouge', field: 'output', reference: 'dataset_output' },
};

/** Presets that need what no log carries. */
const NEVER: Readonly<Record<string, string>> = {
  uncertainty: 'uncertainty needs the token log probabilities of the answer, which logs do not carry',
  prompt_perplexity: 'prompt_perplexity needs the token log probabilities of the prompt, which logs do not carry',
  context_precision: 'context_precision is computed from chunk_relevance verdicts, which tracelake does not produce',
  precision_at_k: 'precision_at_k is computed from chunk_relevance verdicts, which tracelake does not produce',
};

export type Runnable = { readonly run: Runner } | { readonly notComputed: string };

/** Where each kind of scorer gets what it runs on (given by the store's scoring part). */
export interface RuntimeDeps extends RuleDeps {
  /** The function a library scorer's version was defined with, in this process. */
  library(scorerId: string, fingerprint: string): Runner | null;
  /** A Python scorer's runner, or why there is none (the runner is off). */
  python(version: VersionRow): Runnable;
  /** An LLM judge for the plan, or why there is none (no endpoint, no prompt for this scorer...). */
  judge(plan: ScorerPlan): Runnable;
}

function luna(scorer: ScorerRow): string {
  const base = scorer.name.replace(/_luna$/, '');
  const instead = base !== scorer.name ? `; enable ${base} (an LLM judge) instead` : '';
  return `${scorer.name} runs on a proprietary small model that tracelake does not have${instead}`;
}

export function runnableOf(plan: ScorerPlan, deps: RuntimeDeps): Runnable {
  const { scorer, version } = plan;
  if (scorer.scorer_type === 'preset') {
    const rule = PRESET_RULES[scorer.name];
    if (rule) return { run: ruleRunner(rule, deps) };
    if (NEVER[scorer.name]) return { notComputed: NEVER[scorer.name]! };
    if (scorer.model_type === 'slm') return { notComputed: luna(scorer) };
    return deps.judge(plan);
  }
  if (scorer.scorer_type === 'code') {
    if (!version) return { notComputed: `scorer ${scorer.name} has no version to run` };
    if (version.rule) return { run: ruleRunner(version.rule, deps) };
    if (version.library_fingerprint) {
      const run = deps.library(scorer.id, version.library_fingerprint);
      return run
        ? { run }
        : { notComputed: `${scorer.name} is defined by the library (store.scorers.define) in a process that is not this one` };
    }
    if (version.code) return deps.python(version);
    return { notComputed: `scorer ${scorer.name} has neither a rule nor code` };
  }
  if (scorer.scorer_type === 'llm') return deps.judge(plan);
  return { notComputed: `${scorer.scorer_type} scorers do not run in tracelake` };
}
