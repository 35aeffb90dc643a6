// A project's model prices (USD per 1M tokens), which cost is computed with for llm spans logged
// without one: GET reads the project's own and the defaults tried after them, PUT replaces the
// project's own (`{}` removes them). See src/ingest/cost.ts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '../../vendor/typebox.js';
import type { TraceStore } from '../../engine/trace-store.js';
import { Nullable, ProjectIdParams } from '../../schemas/common.js';

const Price = Type.Object({
  input: Type.Number({ minimum: 0, description: 'USD per 1M prompt tokens' }),
  output: Type.Number({ minimum: 0, description: 'USD per 1M completion tokens' }),
  cached_input: Type.Optional(Type.Number({ minimum: 0, description: 'USD per 1M cached prompt tokens (default: input)' })),
});
const Prices = Type.Record(Type.String(), Price, { description: 'model name -> prices' });
const PricesBody = Type.Object({ models: Prices }, { additionalProperties: false });
const PricesSetting = Type.Object({
  models: Prices,
  defaults: Prices,
  date: Nullable(Type.String({ description: 'when the default prices were published' })),
});

export const modelPriceRoutes =
  (store: TraceStore): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get('/projects/:project_id/model_prices', { schema: { params: ProjectIdParams, response: { 200: PricesSetting } } }, async (req) =>
      store.data.getModelPrices(req.params.project_id),
    );
    app.put(
      '/projects/:project_id/model_prices',
      { schema: { params: ProjectIdParams, body: PricesBody, response: { 200: PricesSetting } } },
      async (req) => store.data.setModelPrices(req.params.project_id, req.body.models),
    );
  };
