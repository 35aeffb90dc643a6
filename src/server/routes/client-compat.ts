// Routes only the official JS client (npm galileo) calls, in the shape it calls them
// (docs/official-client.md): GET /scorers/{scorer_id}/version?version=N, one version of a scorer
// (its getScorerVersion helper; tracelake's own list is GET /scorers/{scorer_id}/versions).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '../../vendor/typebox.js';
import type { TraceStore } from '../../engine/trace-store.js';
import { NotFoundError } from '../../errors.js';
import { ScorerIdParams, ScorerVersionWithCode } from '../../schemas/scorers.js';

export const clientCompatRoutes =
  (store: TraceStore): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/scorers/:scorer_id/version',
      {
        schema: {
          params: ScorerIdParams,
          querystring: Type.Object({ version: Type.Integer({ minimum: 1 }) }),
          response: { 200: ScorerVersionWithCode },
        },
      },
      async (req) => {
        const found = store.catalog.listScorerVersions(req.params.scorer_id).find((v) => v.version === req.query.version);
        if (!found) throw new NotFoundError(`Scorer ${req.params.scorer_id} has no version ${req.query.version}`);
        return found;
      },
    );
  };
