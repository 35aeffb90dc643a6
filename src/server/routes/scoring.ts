// Scoring on demand: recompute_metrics starts a job that scores the records a filter selects (the
// official client posts to recompute_metrics; its types also name recompute-metrics, so both are
// served), and the job is read back by id to follow its progress.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '../../vendor/typebox.js';
import type { TraceStore } from '../../engine/trace-store.js';
import { NotFoundError } from '../../errors.js';
import { ProjectIdParams, Uuid } from '../../schemas/common.js';
import { RecomputeBody, ScoreJob } from '../../schemas/scoring.js';

const JobParams = Type.Object({ project_id: Uuid, job_id: Uuid });

export const scoringRoutes =
  (store: TraceStore): FastifyPluginAsyncTypebox =>
  async (app) => {
    // Two spellings, one operation each in the document (the generated operation ids would clash).
    for (const [path, operationId] of [
      ['recompute_metrics', 'postProjectsByProjectIdRecomputeMetrics'],
      ['recompute-metrics', 'postProjectsByProjectIdRecomputeMetricsDashed'],
    ] as const) {
      app.post(
        `/projects/:project_id/${path}`,
        { schema: { operationId, params: ProjectIdParams, body: RecomputeBody, response: { 200: ScoreJob } } },
        async (req) => store.scorers.recompute(req.params.project_id, req.body),
      );
    }
    app.get('/projects/:project_id/jobs/:job_id', { schema: { params: JobParams, response: { 200: ScoreJob } } }, async (req) => {
      const project = store.catalog.getProject(req.params.project_id);
      const job = store.scorers.job(req.params.job_id);
      if (job.project_id !== project.id) throw new NotFoundError(`Job ${req.params.job_id} not found`);
      return job;
    });
  };
