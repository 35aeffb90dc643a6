// Records at each level of the tree: search (full records), partial search, count, delete and
// available columns, for spans, traces and sessions alike, in the hosted service's request and
// answer shapes (the official client's helpers call the same routes).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { TraceStore } from '../../engine/trace-store.js';
import type { Level } from '../../query/columns.js';
import { Type, type Static } from '../../vendor/typebox.js';
import { AggregateBody, AggregateResponse } from '../../schemas/aggregate.js';
import { ProjectIdParams, Uuid } from '../../schemas/common.js';
import {
  AvailableColumnsBody,
  ColumnsResponse,
  RecordResponse,
  CountResponse,
  DeleteResponse,
  FilterBody,
  PartialSearchBody,
  SearchBody,
  SearchResponse,
} from '../../schemas/query.js';

const LEVELS: readonly [string, Level][] = [
  ['spans', 'span'],
  ['traces', 'trace'],
  ['sessions', 'session'],
];

export const recordRoutes =
  (store: TraceStore): FastifyPluginAsyncTypebox =>
  async (app) => {
    for (const [path, level] of LEVELS) {
      const base = `/projects/:project_id/${path}`;
      app.post(
        `${base}/search`,
        { schema: { params: ProjectIdParams, body: SearchBody, response: { 200: SearchResponse } } },
        async (req) => store.records.search(level, req.params.project_id, req.body),
      );
      app.post(
        `${base}/partial_search`,
        { schema: { params: ProjectIdParams, body: PartialSearchBody, response: { 200: SearchResponse } } },
        async (req) => store.records.partialSearch(level, req.params.project_id, req.body),
      );
      app.post(`${base}/count`, { schema: { params: ProjectIdParams, body: FilterBody, response: { 200: CountResponse } } }, async (req) =>
        store.records.count(level, req.params.project_id, req.body),
      );
      app.post(
        `${base}/aggregate`,
        { schema: { params: ProjectIdParams, body: AggregateBody, response: { 200: AggregateResponse } } },
        async (req) => store.records.aggregate(level, req.params.project_id, req.body),
      );
      app.post(
        `${base}/delete`,
        { schema: { params: ProjectIdParams, body: FilterBody, response: { 200: DeleteResponse } } },
        async (req) => {
          const { message } = await store.records.delete(level, req.params.project_id, req.body);
          return { message };
        },
      );
      // The id is named for the level (`span_id`, ...): the same path under another name (PATCH
      // .../spans/{span_id}) would be an identical template, which OpenAPI forbids.
      const id = `${level}_id`;
      app.get(
        `${base}/:${id}`,
        {
          schema: { params: Type.Object({ project_id: Uuid, [id]: Uuid }), response: { 200: RecordResponse } },
          serializerCompiler: () => JSON.stringify,
        },
        async (req) => {
          const params = req.params as Record<string, string>;
          return (await store.records.getRecord(level, String(params['project_id']), String(params[id]))) as Static<typeof RecordResponse>;
        },
      );
      app.post(
        `${base}/available_columns`,
        { schema: { params: ProjectIdParams, body: AvailableColumnsBody, response: { 200: ColumnsResponse } } },
        async (req) => store.records.availableColumns(level, req.params.project_id, req.body),
      );
    }
  };
