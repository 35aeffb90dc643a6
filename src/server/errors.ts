// The one error handler: client mistakes get their 4xx with `{detail}` (422 with a list of issues,
// one per offending field, as the hosted service answers), anything else a bare 500 whose cause goes
// to the log and never to the client.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { InvalidRequestError, TraceLakeError } from '../errors.js';

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) => {
    const { status, body } = toResponse(error);
    if (status >= 500) request.log.error({ err: error }, 'request failed');
    void reply.code(status).type('application/json').send(body);
  });
  app.setNotFoundHandler((request, reply) => {
    void reply.code(404).send({ detail: `Not Found: ${request.method} ${request.url.split('?')[0]}` });
  });
}

export function toResponse(error: unknown): { status: number; body: unknown } {
  if (error instanceof InvalidRequestError) return { status: 422, body: { detail: error.issues } };
  if (error instanceof TraceLakeError) {
    return error.statusCode >= 500
      ? { status: error.statusCode, body: { detail: 'Internal Server Error' } }
      : { status: error.statusCode, body: { detail: error.message } };
  }
  const e = error as FastifyError & { body?: unknown };
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, body: { detail: 'Request body is larger than the server accepts (see --body-limit)' } };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, body: { detail: 'Unsupported content type: send application/json' } };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 422, body: { detail: [{ loc: ['body'], msg: 'Field required', type: 'missing' }] } };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { status: 400, body: { detail: 'Content-Length does not match the body' } };
    default:
      break;
  }
  if (e instanceof SyntaxError || e.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return { status: 422, body: { detail: [{ loc: ['body'], msg: `JSON decode error: ${e.message}`, type: 'json_invalid' }] } };
  }
  const status = typeof e.statusCode === 'number' ? e.statusCode : 500;
  if (status >= 400 && status < 500) return { status, body: { detail: e.message } };
  return { status: 500, body: { detail: 'Internal Server Error' } };
}

/**
 * Fastify's `clientErrorHandler`: requests Node's HTTP parser refuses before any route sees them
 * (malformed request line or headers, bad chunking, oversized headers, a request timeout) get the
 * same `{detail}` body as every other 4xx, not Fastify's default `{error, message, statusCode}`.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, detail] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'The request took too long to arrive']
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request headers are larger than the server accepts']
        : [400, 'Malformed HTTP request'];
  const body = JSON.stringify({ detail });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Content-Type: application/json\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}

/** Fastify's `frameworkErrors`: router failures (a malformed URL, a path parameter too long) as `{detail}`. */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const status = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : 400;
  const detail =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? 'A path parameter is longer than the server accepts'
      : error.code === 'FST_ERR_BAD_URL'
        ? 'Malformed URL'
        : 'Bad request';
  void reply.code(status).type('application/json').send({ detail });
}
