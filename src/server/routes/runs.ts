// Log streams (and the other two run kinds) of a project: create, list, read, rename, delete (with
// their records), search log streams, and each run's scorer settings.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '../../vendor/typebox.js';
import type { RunKind } from '../../catalog/catalog.js';
import type { TraceStore } from '../../engine/trace-store.js';
import { NotFoundError } from '../../errors.js';
import { CreateRunBody, LogStream } from '../../schemas/catalog.js';
import { ProjectIdParams } from '../../schemas/common.js';
import { LogStreamPage, LogStreamSearchBody, RenameRunBody, RunPathParams } from '../../schemas/log-streams.js';
import { DeletedBody } from '../../schemas/projects.js';
import { RunScorerSettings, RunScorerSettingsBody, RunScorerSettingsParams } from '../../schemas/scorer-settings.js';
import { emptyBodyIsEmptyObject, runItem } from '../present.js';

const ROUTES: readonly [string, RunKind][] = [
  ['log_streams', 'log_stream'],
  ['experiments', 'experiment'],
  ['metrics_testing', 'metrics_testing'],
];

export const runRoutes =
  (store: TraceStore): FastifyPluginAsyncTypebox =>
  async (app) => {
    const runOf = (projectId: string, runId: string, kind: RunKind) => {
      const run = store.catalog.getRun(projectId, runId);
      if (run.kind !== kind) throw new NotFoundError(`${run.id} is not a ${kind.replace('_', ' ')} of project ${run.project_id}`);
      return run;
    };
    for (const [path, kind] of ROUTES) {
      app.post(
        `/projects/:project_id/${path}`,
        { schema: { params: ProjectIdParams, body: CreateRunBody, response: { 200: LogStream } } },
        async (req) => runItem(store, store.catalog.createRun(req.params.project_id, kind, req.body.name, req.user)),
      );
      app.get(
        `/projects/:project_id/${path}`,
        { schema: { params: ProjectIdParams, response: { 200: Type.Array(LogStream) } } },
        async (req) => store.catalog.listRuns(req.params.project_id, kind).map((r) => runItem(store, r)),
      );
      app.get(`/projects/:project_id/${path}/:run_id`, { schema: { params: RunPathParams, response: { 200: LogStream } } }, async (req) =>
        runItem(store, runOf(req.params.project_id, req.params.run_id, kind)),
      );
      // Rename: PUT as the hosted service has it, PATCH as well.
      for (const method of ['PATCH', 'PUT'] as const) {
        app.route({
          method,
          url: `/projects/:project_id/${path}/:run_id`,
          schema: { params: RunPathParams, body: RenameRunBody, response: { 200: LogStream } },
          handler: async (req) => {
            const run = runOf(req.params.project_id, req.params.run_id, kind);
            return runItem(store, store.catalog.renameRun(run.project_id, run.id, req.body.name));
          },
        });
      }
      app.delete(
        `/projects/:project_id/${path}/:run_id`,
        { schema: { params: RunPathParams, response: { 200: DeletedBody } } },
        async (req) => {
          const run = runOf(req.params.project_id, req.params.run_id, kind);
          const { records_deleted } = await store.catalog.deleteRun(run.project_id, run.id);
          return { message: `${kind.replace('_', ' ')} ${run.id} deleted`, records_deleted };
        },
      );
    }
    app.post(
      '/projects/:project_id/log_streams/search',
      {
        schema: { params: ProjectIdParams, body: LogStreamSearchBody, response: { 200: LogStreamPage } },
        preValidation: emptyBodyIsEmptyObject,
      },
      async (req) => store.catalog.searchLogStreams(req.params.project_id, req.body),
    );
    // Scorer settings of any run kind. The hosted service writes with PATCH (replacing the enabled
    // set); PUT and POST (its older create) do the same here.
    app.get(
      '/projects/:project_id/runs/:run_id/scorer-settings',
      { schema: { params: RunScorerSettingsParams, response: { 200: RunScorerSettings } } },
      async (req) => store.catalog.getRunScorerSettings(req.params.project_id, req.params.run_id),
    );
    for (const method of ['PATCH', 'PUT', 'POST'] as const) {
      app.route({
        method,
        url: '/projects/:project_id/runs/:run_id/scorer-settings',
        schema: { params: RunScorerSettingsParams, body: RunScorerSettingsBody, response: { 200: RunScorerSettings } },
        handler: async (req) => store.catalog.setRunScorerSettings(req.params.project_id, req.params.run_id, req.body),
      });
    }
  };
