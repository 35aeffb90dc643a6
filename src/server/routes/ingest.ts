// Log spans (POST /projects/{id}/spans) and log traces (POST /projects/{id}/traces, what the
// official client's logger sends).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { TraceStore } from '../../engine/trace-store.js';
import { Type } from '../../vendor/typebox.js';
import { ProjectIdParams, Uuid } from '../../schemas/common.js';
import {
  CreateSessionBody,
  CreateSessionResponse,
  LogSpansBody,
  LogSpansResponse,
  LogTracesBody,
  LogTracesResponse,
  UpdateRecordBody,
  UpdateRecordResponse,
} from '../../schemas/ingest.js';

/** The Idempotency-Key header of the logging routes (docs/logging-semantics.md). */
const IdempotencyHeaders = Type.Object(
  {
    'idempotency-key': Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        pattern: '^[\\x21-\\x7e][\\x20-\\x7e]*$',
        description:
          'Makes a retry safe: the same key with the same body within 24 hours answers what the first request answered and logs nothing again; ' +
          'later, or after a restart, the retry finds the records the first one logged. Without it, every request logs new records.',
      }),
    ),
  },
  { additionalProperties: true },
);
const KEY_LOC = ['header', 'idempotency-key'];
const keyOf = (headers: { 'idempotency-key'?: string | undefined }) => {
  const key = headers['idempotency-key'];
  return key === undefined ? {} : { idempotencyKey: key };
};

export const ingestRoutes =
  (store: TraceStore): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/projects/:project_id/spans',
      { schema: { params: ProjectIdParams, headers: IdempotencyHeaders, body: LogSpansBody, response: { 200: LogSpansResponse } } },
      async (req) => store.records.logSpans(req.params.project_id, req.body, keyOf(req.headers), KEY_LOC),
    );
    app.post(
      '/projects/:project_id/traces',
      { schema: { params: ProjectIdParams, headers: IdempotencyHeaders, body: LogTracesBody, response: { 200: LogTracesResponse } } },
      async (req) => store.records.logTraces(req.params.project_id, req.body, keyOf(req.headers), KEY_LOC),
    );
    app.patch(
      '/projects/:project_id/traces/:trace_id',
      {
        schema: {
          params: Type.Object({ project_id: Uuid, trace_id: Uuid }),
          body: UpdateRecordBody,
          response: { 200: UpdateRecordResponse },
        },
      },
      async (req) => ({
        ...(await store.records.updateRecord('trace', req.params.project_id, req.params.trace_id, req.body)),
        trace_id: req.params.trace_id.toLowerCase(),
      }),
    );
    app.patch(
      '/projects/:project_id/spans/:span_id',
      {
        schema: {
          params: Type.Object({ project_id: Uuid, span_id: Uuid }),
          body: UpdateRecordBody,
          response: { 200: UpdateRecordResponse },
        },
      },
      async (req) => ({
        ...(await store.records.updateRecord('span', req.params.project_id, req.params.span_id, req.body)),
        span_id: req.params.span_id.toLowerCase(),
      }),
    );
    app.post(
      '/projects/:project_id/sessions',
      {
        schema: { params: ProjectIdParams, headers: IdempotencyHeaders, body: CreateSessionBody, response: { 200: CreateSessionResponse } },
      },
      async (req) => store.records.createSession(req.params.project_id, req.body, keyOf(req.headers), KEY_LOC),
    );
  };
