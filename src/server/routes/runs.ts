// Log streams (and the other two run kinds) of a project.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { RunKind } from '../../catalog/catalog.js';
import type { TraceStore } from '../../engine/trace-store.js';
import { CreateRunBody, LogStream } from '../../schemas/catalog.js';
import { ProjectIdParams } from '../../schemas/common.js';
import { runItem } from '../present.js';

const ROUTES: readonly [string, RunKind][] = [
  ['log_streams', 'log_stream'],
  ['experiments', 'experiment'],
  ['metrics_testing', 'metrics_testing'],
];

export const runRoutes = (store: TraceStore): FastifyPluginAsyncTypebox =>
  async (app) => {
    for (const [path, kind] of ROUTES) {
      app.post(`/projects/:project_id/${path}`, { schema: { params: ProjectIdParams, body: CreateRunBody, response: { 200: LogStream } } }, async (req) =>
        runItem(store, store.createRun(req.params.project_id, kind, req.body.name, req.user)),
      );
      app.get(`/projects/:project_id/${path}`, { schema: { params: ProjectIdParams, response: { 200: Type.Array(LogStream) } } }, async (req) =>
        store.listRuns(req.params.project_id, kind).map((r) => runItem(store, r)),
      );
    }
  };
