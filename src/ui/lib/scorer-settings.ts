// A run's scorer settings as the viewer edits them: the body that re-saves what is enabled (the API
// replaces the whole enabled set on every write, so each change re-sends the others unchanged), and
// how a scorer is described in a list. DOM-free: unit-tested under Node.
import type { ScorerConfig, ScorerItem } from './types.js';

/** One entry of the body written to scorer-settings. */
export interface ScorerInput {
  id: string;
  [knob: string]: unknown;
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * An enabled scorer as it is written back. The API answers each knob resolved against the scorer's
 * defaults; only knobs that differ from those are re-sent, so a run keeps following its scorers'
 * defaults, and a version is pinned again only when it is not the scorer's default.
 */
export function inputOf(c: ScorerConfig, s: ScorerItem | undefined): ScorerInput {
  const out: ScorerInput = { id: c.id };
  const version = s?.default_version ?? null;
  const defaults: Record<string, unknown> = {
    model_name: version?.model_name ?? s?.defaults?.model_name ?? null,
    num_judges: version?.num_judges ?? s?.defaults?.num_judges ?? null,
    cot_enabled: version?.cot_enabled ?? s?.defaults?.cot_enabled ?? null,
    filters: s?.defaults?.filters ?? null,
    scoreable_node_types: s?.scoreable_node_types ?? null,
    output_type: s?.output_type ?? null,
    input_type: s?.input_type ?? null,
  };
  for (const [k, d] of Object.entries(defaults)) {
    const v = (c as unknown as Record<string, unknown>)[k];
    if (v !== null && v !== undefined && (s === undefined || !same(v, d))) out[k] = v;
  }
  if (typeof c.sample_rate === 'number') out['sample_rate'] = c.sample_rate;
  const pinned = c.scorer_version?.id;
  if (pinned && s?.default_version_id && pinned !== s.default_version_id) out['scorer_version'] = { id: pinned };
  return out;
}

export function currentInputs(current: readonly ScorerConfig[], byId: ReadonlyMap<string, ScorerItem>): ScorerInput[] {
  return current.map((c) => inputOf(c, byId.get(c.id)));
}

/** The enabled set with a scorer turned on (appended, default knobs) or off. */
export function toggled(inputs: readonly ScorerInput[], id: string, on: boolean): ScorerInput[] {
  const rest = inputs.filter((i) => i.id !== id);
  return on ? [...rest, { id }] : rest;
}

/** The enabled set with one scorer's sample rate changed (null: every record, the default). */
export function withSampleRate(inputs: readonly ScorerInput[], id: string, rate: number | null): ScorerInput[] {
  return inputs.map((i) => {
    if (i.id !== id) return i;
    const { sample_rate: _old, ...rest } = i;
    return rate === null || rate >= 1 ? (rest as ScorerInput) : { ...rest, sample_rate: rate };
  });
}

/** The node types a scorer scores (llm spans when it names none, as the store does). */
export function nodeTypesOf(s: Pick<ScorerItem, 'scoreable_node_types'>): string[] {
  return s.scoreable_node_types && s.scoreable_node_types.length > 0 ? s.scoreable_node_types : ['llm'];
}

/** What kind of scorer it is, in a few words. */
export function kindLabel(s: Pick<ScorerItem, 'scorer_type' | 'model_type'>): string {
  const what =
    s.model_type === 'slm' || s.scorer_type === 'luna'
      ? 'Luna model'
      : s.model_type === 'llm' || s.scorer_type === 'llm'
        ? 'LLM judge'
        : 'code';
  return s.scorer_type === 'preset' ? `${what} (preset)` : what === 'code' ? 'code (registered)' : `${what} (registered)`;
}

/** The metric a scorer writes. */
export const metricOf = (s: Pick<ScorerItem, 'name' | 'metric_name'>): string => s.metric_name || s.name;

/** A sample rate as a whole percentage for an input (100 when unset). */
export function percentOf(rate: number | null | undefined): number {
  return typeof rate === 'number' ? Math.round(rate * 1000) / 10 : 100;
}
