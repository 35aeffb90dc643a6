// The model prices costs are computed with (src/ingest/cost.ts), in the order they are tried: a
// project's own (catalog table `model_prices`, set through the API), the operator's file (the
// store's `modelPrices` option, `tracelake serve --model-prices FILE`), then the table shipped in
// data/model-prices.json. Files are read and checked once, when the store opens: a bad file fails
// the open, not a later request.
import { existsSync, readFileSync } from 'node:fs';
import { assetPath } from '../../assets.js';
import type { Catalog } from '../../catalog/catalog.js';
import { InvalidRequestError, StorageError } from '../../errors.js';
import { checkPrices, PriceLookup, type ModelPrice } from '../../ingest/cost.js';

const TABLE = 'model_prices';

interface PriceFile {
  date: string | null;
  models: Record<string, ModelPrice>;
}

interface ProjectPrices {
  id: string;
  models: Record<string, ModelPrice>;
}

export interface ModelPriceSetting {
  /** The project's own prices (USD per 1M tokens), tried first. */
  models: Record<string, ModelPrice>;
  /** The prices tried after them: the operator's file over the shipped table. */
  defaults: Record<string, ModelPrice>;
  /** The date of the shipped table's prices (and of the operator's file, when it names one). */
  date: string | null;
}

function readPriceFile(path: string, what: string): PriceFile {
  if (!existsSync(path)) throw new StorageError(`${what} ${path} was not found`);
  let body: unknown;
  try {
    body = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new StorageError(`${what} ${path} is not valid JSON`, { cause: err });
  }
  const b = (typeof body === 'object' && body !== null ? body : {}) as { models?: unknown; date?: unknown };
  try {
    return { date: typeof b.date === 'string' ? b.date : null, models: checkPrices(b.models, ['models']) };
  } catch (err) {
    if (err instanceof InvalidRequestError) throw new StorageError(`${what} ${path}: ${err.message}`);
    throw err;
  }
}

let shipped: PriceFile | undefined;

/** The table shipped with tracelake. */
export function shippedPrices(): PriceFile {
  shipped ??= readPriceFile(assetPath('data/model-prices.json'), 'the model price table');
  return shipped;
}

export class ModelPriceBook {
  readonly #catalog: Catalog;
  readonly #defaults: PriceFile;
  readonly #lookups = new Map<string, { version: number; lookup: PriceLookup }>();
  readonly #off: boolean;

  /**
   * `operatorFile`: a file in data/model-prices.json's format whose prices win over the shipped ones;
   * `false` computes no cost at all (stores that must hold exactly what was logged, e.g. comparisons).
   */
  constructor(catalog: Catalog, operatorFile?: string | false) {
    this.#catalog = catalog;
    this.#off = operatorFile === false;
    const base = shippedPrices();
    const own = operatorFile ? readPriceFile(operatorFile, 'the model price file') : null;
    this.#defaults = own ? { date: own.date ?? base.date, models: { ...base.models, ...own.models } } : base;
  }

  /** What a project's records are priced with. */
  lookup(projectId: string): PriceLookup {
    const version = this.#catalog.version;
    const hit = this.#lookups.get(projectId);
    if (hit && hit.version === version) return hit.lookup;
    const own = this.#catalog.get<ProjectPrices>(TABLE, projectId)?.models;
    const lookup = new PriceLookup(this.#off ? [] : own ? [own, this.#defaults.models] : [this.#defaults.models]);
    this.#lookups.set(projectId, { version, lookup });
    return lookup;
  }

  get(projectId: string): ModelPriceSetting {
    return {
      models: this.#catalog.get<ProjectPrices>(TABLE, projectId)?.models ?? {},
      defaults: this.#defaults.models,
      date: this.#defaults.date,
    };
  }

  /** Replaces a project's own prices (an empty object removes them). */
  set(projectId: string, models: unknown): ModelPriceSetting {
    const checked = checkPrices(models, ['body', 'models']);
    if (Object.keys(checked).length === 0) {
      if (this.#catalog.get(TABLE, projectId)) this.#catalog.commit([{ op: 'del', table: TABLE, id: projectId }]);
    } else this.#catalog.put(TABLE, { id: projectId, models: checked } satisfies ProjectPrices);
    return this.get(projectId);
  }
}
