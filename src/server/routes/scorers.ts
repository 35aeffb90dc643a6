// The scorer catalog: POST /scorers/list (paging and actions in the query
// string), and registering, reading, changing, versioning and deleting scorers. Presets are built in:
// changing or deleting one answers 403 with the reason.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '../../vendor/typebox.js';
import type { TraceStore } from '../../engine/trace-store.js';
import {
  CreateScorerBody,
  ListScorersBody,
  ListScorersQuery,
  ListScorersResponse,
  Scorer,
  ScorerActionsQuery,
  ScorerIdParams,
  ScorerVersion,
  ScorerVersionInput,
  ScorerVersionWithCode,
  UpdateScorerBody,
} from '../../schemas/scorers.js';
import { emptyBodyIsEmptyObject } from '../present.js';

export const scorerRoutes =
  (store: TraceStore): FastifyPluginAsyncTypebox =>
  async (app) => {
    // Serialized with JSON.stringify: fast-json-stringify picks anyOf branches (every nullable field
    // of a Scorer) by validating each value, which made pages of scorers several times slower. The items
    // are built field by field from schema-shaped rows (scorer-row.ts); a test checks their keys.
    app.post(
      '/scorers/list',
      {
        schema: { querystring: ListScorersQuery, body: ListScorersBody, response: { 200: ListScorersResponse } },
        preValidation: emptyBodyIsEmptyObject,
        serializerCompiler: () => (data) => JSON.stringify(data),
      },
      async (req) => store.catalog.listScorers(req.body, req.query, req.user),
    );
    app.post('/scorers', { schema: { body: CreateScorerBody, response: { 200: Scorer } } }, async (req) =>
      store.catalog.createScorer(req.body, req.user),
    );
    app.get(
      '/scorers/:scorer_id',
      { schema: { params: ScorerIdParams, querystring: ScorerActionsQuery, response: { 200: Scorer } } },
      async (req) => store.catalog.getScorer(req.params.scorer_id, req.user, req.query.actions ?? []),
    );
    app.patch(
      '/scorers/:scorer_id',
      { schema: { params: ScorerIdParams, body: UpdateScorerBody, response: { 200: Scorer } } },
      async (req) => store.catalog.updateScorer(req.params.scorer_id, req.body, req.user),
    );
    app.delete(
      '/scorers/:scorer_id',
      { schema: { params: ScorerIdParams, response: { 200: Type.Object({ message: Type.String() }) } } },
      async (req) => {
        store.catalog.deleteScorer(req.params.scorer_id, req.user);
        return { message: `Scorer ${req.params.scorer_id} deleted` };
      },
    );
    app.post(
      '/scorers/:scorer_id/versions',
      { schema: { params: ScorerIdParams, body: ScorerVersionInput, response: { 200: ScorerVersion } } },
      async (req) => store.catalog.createScorerVersion(req.params.scorer_id, req.body, req.user),
    );
    app.get(
      '/scorers/:scorer_id/versions',
      { schema: { params: ScorerIdParams, response: { 200: Type.Array(ScorerVersionWithCode) } } },
      async (req) => store.catalog.listScorerVersions(req.params.scorer_id, req.user),
    );
  };
