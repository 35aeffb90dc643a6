// The cost tracelake writes into an llm record that logged none, computed here from the documented
// rule (docs/cost.md) over the shipped price table: tests expect it without asking tracelake.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../scripts/build-ui.js';

interface Price {
  input: number;
  output: number;
  cached_input?: number;
}

const TABLE = JSON.parse(readFileSync(join(packageRoot(), 'data', 'model-prices.json'), 'utf8')) as {
  models: Record<string, Price>;
};

/** The shipped price of a model: its exact entry, else the longest entry it starts with followed by '-'. */
export function shippedPrice(model: string): Price | undefined {
  const name = model.slice(model.lastIndexOf('/') + 1).toLowerCase();
  if (TABLE.models[name]) return TABLE.models[name];
  const keys = Object.keys(TABLE.models).filter((k) => name.startsWith(`${k}-`));
  keys.sort((a, b) => b.length - a.length);
  return keys[0] ? TABLE.models[keys[0]] : undefined;
}

/** metrics as tracelake stores them for a record of this type and model: a cost added where it computes one. */
export function withComputedCost(type: unknown, model: unknown, metrics: Record<string, unknown>): Record<string, unknown> {
  if (type !== 'llm' || typeof model !== 'string' || metrics['cost'] !== undefined) return metrics;
  const input = metrics['num_input_tokens'];
  const output = metrics['num_output_tokens'];
  if (typeof input !== 'number' && typeof output !== 'number') return metrics;
  const p = shippedPrice(model);
  if (!p) return metrics;
  const inTokens = typeof input === 'number' ? input : 0;
  const cached = Math.min(typeof metrics['num_cached_input_tokens'] === 'number' ? metrics['num_cached_input_tokens'] : 0, inTokens);
  const usd =
    ((inTokens - cached) * p.input + cached * (p.cached_input ?? p.input) + (typeof output === 'number' ? output : 0) * p.output) / 1e6;
  return { ...metrics, cost: Number(usd.toPrecision(12)) };
}
