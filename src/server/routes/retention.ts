// Retention of a project and of one log stream: GET reads the setting and what applies, PUT sets
// `retention_days` (a whole number of days, or null to remove it). Expired records leave reads at once
// and the disk at the next compaction (see src/engine/data/retention.ts).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '../../vendor/typebox.js';
import type { TraceStore } from '../../engine/trace-store.js';
import { MAX_RETENTION_DAYS } from '../../engine/data/retention.js';
import { ProjectIdParams } from '../../schemas/common.js';
import { RunPathParams } from '../../schemas/log-streams.js';

const Days = Type.Union([Type.Integer({ minimum: 1, maximum: MAX_RETENTION_DAYS }), Type.Null()]);
const RetentionBody = Type.Object({ retention_days: Days }, { additionalProperties: false });
const RetentionSetting = Type.Object({ retention_days: Days, effective_retention_days: Days });

export const retentionRoutes =
  (store: TraceStore): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get('/projects/:project_id/retention', { schema: { params: ProjectIdParams, response: { 200: RetentionSetting } } }, async (req) =>
      store.data.getRetention(req.params.project_id),
    );
    app.put(
      '/projects/:project_id/retention',
      { schema: { params: ProjectIdParams, body: RetentionBody, response: { 200: RetentionSetting } } },
      async (req) => store.data.setRetention(req.params.project_id, { retention_days: req.body.retention_days }),
    );
    app.get(
      '/projects/:project_id/log_streams/:run_id/retention',
      { schema: { params: RunPathParams, response: { 200: RetentionSetting } } },
      async (req) => store.data.getRetention(req.params.project_id, { log_stream_id: req.params.run_id }),
    );
    app.put(
      '/projects/:project_id/log_streams/:run_id/retention',
      { schema: { params: RunPathParams, body: RetentionBody, response: { 200: RetentionSetting } } },
      async (req) =>
        store.data.setRetention(req.params.project_id, { log_stream_id: req.params.run_id, retention_days: req.body.retention_days }),
    );
  };
