// Cost where the client logged none: an llm span's token counts times its model's prices, written
// into metrics.cost when the record is stored. Stored, not computed at read time: a stored metric
// filters, sorts (top-k lists, shredded columns), rolls up to traces and sessions, and charts
// exactly as a logged one does, at no cost per question; the price of that is that a changed price
// table applies to records logged from then on.
//
// Prices are in USD per 1,000,000 tokens (data/model-prices.json). A model matches an entry of its
// exact name (case-insensitive, any provider prefix up to '/' dropped), else the longest entry it
// starts with followed by '-' (dated snapshots: gpt-4o-2024-08-06, claude-3-5-sonnet-20241022).
import { invalid } from '../errors.js';
import type { Draft } from '../record/record.js';

export interface ModelPrice {
  /** Prompt tokens. */
  input: number;
  /** Completion tokens (reasoning tokens included, as the providers count them). */
  output: number;
  /** Prompt tokens read from the provider's cache (default: the input price). */
  cached_input?: number;
}

export type ModelPrices = Readonly<Record<string, ModelPrice>>;

/** Most models one table may name. */
export const MAX_PRICED_MODELS = 5000;

const PRICE_FIELDS = ['input', 'output', 'cached_input'] as const;

/** Checks a table of model prices as the API and an operator's file give it; 422 naming the entry's path. */
export function checkPrices(value: unknown, loc: (string | number)[]): Record<string, ModelPrice> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalid(
      loc,
      'Input should be an object of model name -> {input, output, cached_input?} (USD per 1M tokens)',
      undefined,
      'dict_type',
    );
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_PRICED_MODELS) throw invalid(loc, `at most ${MAX_PRICED_MODELS} models`, undefined, 'too_long');
  const out: Record<string, ModelPrice> = {};
  for (const [model, p] of entries) {
    const at = [...loc, model];
    if (model.trim() === '' || model.length > 200) throw invalid(at, 'a model name of 1 to 200 characters', model);
    if (typeof p !== 'object' || p === null || Array.isArray(p))
      throw invalid(at, 'Input should be {input, output, cached_input?} in USD per 1M tokens', undefined, 'dict_type');
    const price = p as Record<string, unknown>;
    for (const k of Object.keys(price))
      if (!(PRICE_FIELDS as readonly string[]).includes(k)) throw invalid([...at, k], 'unknown field: input, output or cached_input', k);
    for (const k of PRICE_FIELDS) {
      const v = price[k];
      if (v === undefined && k === 'cached_input') continue;
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
        throw invalid([...at, k], 'Input should be a price of at least 0 (USD per 1M tokens)', v, 'float_type');
    }
    out[model.toLowerCase()] = {
      input: price['input'] as number,
      output: price['output'] as number,
      ...(price['cached_input'] !== undefined ? { cached_input: price['cached_input'] as number } : {}),
    };
  }
  return out;
}

/** Finds a model's price in tables tried in order (a project's, the operator's, the built-in one). */
export class PriceLookup {
  readonly #tables: readonly ModelPrices[];
  readonly #found = new Map<string, ModelPrice | null>();

  constructor(tables: readonly ModelPrices[]) {
    this.#tables = tables;
  }

  price(model: string): ModelPrice | null {
    let p = this.#found.get(model);
    if (p === undefined) {
      p = this.#find(model);
      // Bounded: model names are few in practice, but a client could send many.
      if (this.#found.size > 10_000) this.#found.clear();
      this.#found.set(model, p);
    }
    return p;
  }

  #find(model: string): ModelPrice | null {
    const name = model.slice(model.lastIndexOf('/') + 1).toLowerCase();
    for (const table of this.#tables) {
      const exact = table[name];
      if (exact) return exact;
      let best: string | null = null;
      for (const key in table) if (name.startsWith(`${key}-`) && (best === null || key.length > best.length)) best = key;
      if (best !== null) return table[best]!;
    }
    return null;
  }
}

/** USD for token counts at a price (12 significant digits: the same counts always give the same figure). */
export function costOf(p: ModelPrice, input: number, output: number, cached: number): number {
  const cachedIn = Math.min(Math.max(cached, 0), input);
  const usd = ((input - cachedIn) * p.input + cachedIn * (p.cached_input ?? p.input) + output * p.output) / 1_000_000;
  return Number(usd.toPrecision(12));
}

/**
 * Sets metrics.cost on llm records that have a model, token counts and no cost of their own, when
 * the model has a price. Returns how many records got one.
 */
export function addCosts(drafts: readonly Draft[], prices: PriceLookup): number {
  let n = 0;
  for (const d of drafts) {
    const m = d.metrics;
    if (d.type !== 'llm' || m === undefined || m['cost'] !== undefined || typeof d.model !== 'string') continue;
    const input = m['num_input_tokens'];
    const output = m['num_output_tokens'];
    if (input === undefined && output === undefined) continue;
    const p = prices.price(d.model);
    if (p === null) continue;
    m['cost'] = costOf(p, input ?? 0, output ?? 0, m['num_cached_input_tokens'] ?? 0);
    n++;
  }
  return n;
}
