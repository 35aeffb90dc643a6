// Log spans (SPEC.md) and log traces (COMPAT.md 5.3).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { TraceStore } from '../../engine/trace-store.js';
import { ProjectIdParams } from '../../schemas/common.js';
import { LogSpansBody, LogSpansResponse, LogTracesBody, LogTracesResponse } from '../../schemas/ingest.js';

export const ingestRoutes = (store: TraceStore): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post('/projects/:project_id/spans', { schema: { params: ProjectIdParams, body: LogSpansBody, response: { 200: LogSpansResponse } } }, async (req) =>
      store.logSpans(req.params.project_id, req.body),
    );
    app.post('/projects/:project_id/traces', { schema: { params: ProjectIdParams, body: LogTracesBody, response: { 200: LogTracesResponse } } }, async (req) =>
      store.logTraces(req.params.project_id, req.body),
    );
  };
