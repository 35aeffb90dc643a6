// OTLP/HTTP trace ingestion: POST /v1/traces (so OTEL_EXPORTER_OTLP_ENDPOINT pointing at
// the server just works) and POST /otel/traces (the hosted service's path). Bodies are protobuf or
// JSON, optionally gzip or deflate; the answer uses the request's encoding: an
// ExportTraceServiceResponse, or a google.rpc.Status with 400 (undecodable), 401, 403, 404, 413
// (over the body limit, measured after decompression), 415 (another content type or encoding) or
// 503 + Retry-After (too much already queued). Same credentials as every route.
import { promisify } from 'node:util';
import { gunzip, inflate, type InputType, type ZlibOptions } from 'node:zlib';
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '../../vendor/typebox.js';
import { encodeExportResponse, encodeStatus, loadOtlpTypes } from '../../ingest/otlp/wire.js';
import type { TraceStore } from '../../engine/trace-store.js';
import { BadRequestError, OverloadedError, PayloadTooLargeError, TraceLakeError } from '../../errors.js';
import { toResponse } from '../errors.js';
import { validatorCompiler } from '../validation.js';
import { bodyText } from '../body-text.js';

export const OTLP_PATHS = ['/v1/traces', '/otel/traces'] as const;

export interface OtlpRouteOptions {
  /** Largest body, compressed or not (the server's body limit). */
  bodyLimit: number;
  /** Most decompressed bytes being ingested at once before new exports get 503 + Retry-After. */
  maxPendingBytes: number;
}

const unzip = { gzip: promisify<InputType, ZlibOptions, Buffer>(gunzip), deflate: promisify<InputType, ZlibOptions, Buffer>(inflate) };

type Encoding = 'protobuf' | 'json';

function encodingOf(request: FastifyRequest): Encoding {
  return String(request.headers['content-type'] ?? '')
    .toLowerCase()
    .includes('protobuf')
    ? 'protobuf'
    : 'json';
}

const TYPES: Record<Encoding, string> = { protobuf: 'application/x-protobuf', json: 'application/json' };

function header(request: FastifyRequest, ...names: string[]): string | undefined {
  for (const n of names) {
    const v = request.headers[n];
    if (typeof v === 'string' && v.trim() !== '') return v.trim();
  }
  return undefined;
}

async function decompress(body: Buffer, contentEncoding: string | undefined, limit: number): Promise<Buffer> {
  const enc = (contentEncoding ?? 'identity').trim().toLowerCase();
  if (enc === 'identity' || enc === '') return body;
  const fn = enc === 'gzip' || enc === 'x-gzip' ? unzip.gzip : enc === 'deflate' ? unzip.deflate : undefined;
  if (!fn) throw new UnsupportedEncodingError(enc);
  try {
    return await fn(body, { maxOutputLength: limit });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) {
      throw new PayloadTooLargeError(`the decompressed body is larger than the server accepts (${limit} bytes; see --body-limit)`);
    }
    throw new BadRequestError(`the body is not valid ${enc} data: ${(err as Error).message}`);
  }
}

class UnsupportedEncodingError extends TraceLakeError {
  constructor(enc: string) {
    super('UNSUPPORTED_MEDIA_TYPE', 415, `unsupported Content-Encoding "${enc}": send gzip, deflate or none`);
  }
}

const ExportResponseJson = Type.Object(
  { partialSuccess: Type.Optional(Type.Object({ rejectedSpans: Type.String(), errorMessage: Type.String() })) },
  { description: 'ExportTraceServiceResponse (proto3 JSON); partialSuccess only when spans were refused or there is a warning' },
);
const Binary = (description: string) => Type.Unknown({ description, format: 'binary' });

const STATUS_ANSWER = {
  content: {
    'application/x-protobuf': { schema: Binary('google.rpc.Status') },
    'application/json': { schema: Type.Object({ code: Type.Integer(), message: Type.String(), detail: Type.String() }) },
  },
};

const schema = {
  tags: ['opentelemetry'],
  summary: 'Ingest OpenTelemetry traces (OTLP/HTTP)',
  description:
    'An ExportTraceServiceRequest as protobuf or JSON, optionally gzip or deflate (Content-Encoding). ' +
    'Headers `project` or `x-project-name` and `logstream` choose where spans go ' +
    '(else the resource attributes tracelake.project.name / tracelake.log_stream.name, else "default").',
  headers: Type.Object(
    {
      project: Type.Optional(Type.String({ description: 'project name (created on first use)' })),
      'x-project-name': Type.Optional(Type.String({ description: 'project name, as Phoenix exporters send it' })),
      logstream: Type.Optional(Type.String({ description: 'log stream name (created on first use; default "default")' })),
      'content-encoding': Type.Optional(Type.String({ description: 'gzip, deflate or identity' })),
    },
    { additionalProperties: true },
  ),
  body: {
    content: {
      'application/x-protobuf': { schema: Binary('ExportTraceServiceRequest (opentelemetry-proto v1.11.0)') },
      'application/json': { schema: Type.Unknown({ description: 'ExportTraceServiceRequest in OTLP/JSON (hex ids, integer enums)' }) },
    },
  },
  response: {
    200: {
      content: {
        'application/x-protobuf': { schema: Binary('ExportTraceServiceResponse') },
        'application/json': { schema: ExportResponseJson },
      },
    },
    // Refusals answer a google.rpc.Status in the request's encoding (415: always JSON).
    ...Object.fromEntries([400, 401, 403, 404, 413, 415, 429, 500, 503].map((status) => [status, STATUS_ANSWER])),
  },
};

export const otlpRoutes =
  (store: TraceStore, options: OtlpRouteOptions): FastifyPluginAsync =>
  async (app) => {
    loadOtlpTypes();
    let pending = 0;
    // The body is bytes (protobuf, or JSON that may be compressed): its schema documents it, decoding checks it.
    // Walking a Buffer with the generic validator would visit every byte.
    app.setValidatorCompiler((req) => (req.httpPart === 'body' ? (value: unknown) => ({ value }) : validatorCompiler(req)));
    // Only these two types; anything else is 415 (the body is read as bytes either way: it may be compressed).
    app.removeAllContentTypeParsers();
    app.addContentTypeParser(
      ['application/x-protobuf', 'application/json'],
      { parseAs: 'buffer', bodyLimit: options.bodyLimit },
      (_req, body, done) => done(null, body),
    );
    app.setErrorHandler((error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) => {
      const code = (error as FastifyError).code;
      const [status, message] =
        code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
          ? [415, 'unsupported Content-Type: send application/x-protobuf or application/json']
          : error instanceof OverloadedError
            ? [503, error.message]
            : statusAndMessage(error);
      if (status >= 500 && status !== 503) request.log.error({ err: error }, 'OTLP export failed');
      if (error instanceof OverloadedError) void reply.header('retry-after', String(error.retryAfterSeconds));
      const encoding = status === 415 ? 'json' : encodingOf(request);
      void reply
        .code(status)
        .type(TYPES[encoding])
        .send(encodeStatus(status, message, encoding));
    });
    for (const url of OTLP_PATHS) {
      app.post(url, { schema }, async (request, reply) => {
        const encoding = encodingOf(request);
        const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        if (pending > 0 && pending + raw.length > options.maxPendingBytes) {
          throw new OverloadedError(`tracelake is still writing earlier exports (${pending} bytes queued); retry shortly`);
        }
        pending += raw.length;
        try {
          const body = await decompress(raw, request.headers['content-encoding'], options.bodyLimit);
          const result = await store.otlp.log(encoding === 'json' ? parseJson(body) : body, {
            project: header(request, 'project', 'x-project-name') ?? null,
            logStream: header(request, 'logstream') ?? null,
            user: request.user,
          });
          return reply.code(200).type(TYPES[encoding]).send(encodeExportResponse(result, encoding));
        } finally {
          pending -= raw.length;
        }
      });
    }
  };

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(bodyText(body));
  } catch {
    // Parsed again as decoded, for an error message whose positions are the body's.
  }
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new BadRequestError(`the body is not valid JSON: ${(err as Error).message}`);
  }
}

/** Status and a message safe to show (5xx never carries internals). */
function statusAndMessage(error: unknown): [number, string] {
  const { status, body } = toResponse(error);
  const detail = (body as { detail?: unknown }).detail;
  if (typeof detail === 'string') return [status, detail];
  if (Array.isArray(detail))
    return [status, detail.map((d: { loc?: unknown[]; msg?: string }) => `${(d.loc ?? []).join('.')}: ${d.msg ?? ''}`).join('; ')];
  return [status, 'request failed'];
}
