// Reading records back: full-record search and count per level of the tree.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { TraceStore } from '../../engine/trace-store.js';
import type { RecordKind } from '../../storage/record-columns.js';
import { ProjectIdParams } from '../../schemas/common.js';
import { CountBody, ReadBody, RecordsPage } from '../../schemas/records.js';

const LEVELS: readonly [string, RecordKind][] = [
  ['spans', 'span'],
  ['traces', 'trace'],
  ['sessions', 'session'],
];

export const recordRoutes = (store: TraceStore): FastifyPluginAsyncTypebox =>
  async (app) => {
    for (const [path, kind] of LEVELS) {
      app.post(`/projects/:project_id/${path}/search`, { schema: { params: ProjectIdParams, body: ReadBody, response: { 200: RecordsPage } } }, async (req) =>
        store.searchRecords(req.params.project_id, [kind], {
          ...req.body,
          starting_token: req.body.starting_token ?? undefined,
          limit: req.body.limit ?? undefined,
        }),
      );
      app.post(
        `/projects/:project_id/${path}/count`,
        { schema: { params: ProjectIdParams, body: CountBody, response: { 200: Type.Object({ total_count: Type.Integer() }) } } },
        async (req) => store.countRecords(req.params.project_id, [kind], req.body),
      );
    }
  };
