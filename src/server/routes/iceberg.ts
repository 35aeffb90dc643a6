// The Iceberg REST catalog (read side): GET /iceberg/v1/config, namespaces, tables and table loads,
// plus POST /iceberg/v1/oauth/tokens (OAuth2 client credentials: the client secret is an API key),
// so engines that take a catalog URI and a credential (Trino, Spark, ClickHouse's DataLakeCatalog)
// find the published tables. Registered once, without the /v2 prefixes. Same credentials as every
// route, and only admins: the tables hold every project's records. Errors answer Iceberg's error model.
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '../../vendor/typebox.js';
import { ForbiddenError, InvalidRequestError, TraceLakeError, UnauthorizedError } from '../../errors.js';
import { NoSuchIcebergError, type RestCatalog } from '../../iceberg/rest-catalog.js';
import type { Credentials } from '../auth/credentials.js';

export const ICEBERG_PREFIX = '/iceberg';

// Iceberg's error model, plus `detail` as every other route of the server answers it (readers of the
// Iceberg model ignore it).
const Detail = Type.Union([
  Type.String(),
  Type.Array(
    Type.Object(
      { loc: Type.Array(Type.Union([Type.String(), Type.Integer()])), msg: Type.String(), type: Type.String() },
      { additionalProperties: true },
    ),
  ),
]);
const ErrorModel = Type.Object(
  { error: Type.Object({ message: Type.String(), type: Type.String(), code: Type.Integer() }), detail: Detail },
  { description: 'The Iceberg REST error model, with detail as every route gives it' },
);
const OAuthError = Type.Object(
  { error: Type.String(), error_description: Type.Optional(Type.String()), detail: Detail },
  { description: 'An OAuth2 error' },
);
const errors = Object.fromEntries([400, 401, 403, 404, 406, 415, 422, 429, 500].map((s) => [s, ErrorModel]));
const Namespace = Type.Array(Type.String());
const Identifier = Type.Object({ namespace: Namespace, name: Type.String() });
const tags = ['iceberg'];

const TYPES: Record<number, string> = {
  400: 'BadRequestException',
  401: 'NotAuthorizedException',
  403: 'ForbiddenException',
  404: 'NoSuchTableException',
  429: 'TooManyRequestsException',
};

function errorAnswer(error: Error): { status: number; message: string; detail: unknown; body: object } {
  const status = error instanceof TraceLakeError ? error.statusCode : ((error as FastifyError).statusCode ?? 500);
  const type =
    error instanceof NoSuchIcebergError
      ? error.icebergType
      : (TYPES[status] ?? (status >= 500 ? 'ServiceFailureException' : 'BadRequestException'));
  const message = status >= 500 ? 'Internal Server Error' : error.message;
  const detail = error instanceof InvalidRequestError && status === 422 ? error.issues : message;
  return { status, message, detail, body: { error: { message, type, code: status }, detail } };
}

export const icebergRoutes =
  (credentials: Credentials, catalog: RestCatalog): FastifyPluginAsync =>
  async (app) => {
    app.setErrorHandler((error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) => {
      const { status, message, detail, body } = errorAnswer(error);
      if (status >= 500) request.log.error({ err: error }, 'Iceberg catalog request failed');
      // OAuth2's error form; a body that fails validation is 422 with its issues, as everywhere here.
      if (request.routeOptions.url?.endsWith('/oauth/tokens') && status < 500) {
        return reply
          .code(status)
          .send({ error: status === 401 ? 'invalid_client' : 'invalid_request', error_description: message, detail });
      }
      return reply.code(status).send(body);
    });
    // Admins only: the tables are every project's records.
    app.addHook('preHandler', async (request) => {
      if (request.routeOptions.config?.public) return;
      if (request.user?.role !== 'admin')
        throw new ForbiddenError('the Iceberg catalog is for admins: its tables hold the records of every project');
    });

    app.get(
      '/v1/config',
      {
        schema: {
          tags,
          summary: 'Iceberg REST catalog settings',
          querystring: Type.Object({ warehouse: Type.Optional(Type.String()) }),
          response: {
            200: Type.Object({ defaults: Type.Record(Type.String(), Type.String()), overrides: Type.Record(Type.String(), Type.String()) }),
            ...errors,
          },
        },
      },
      async () => ({ defaults: {}, overrides: {} }),
    );
    app.get(
      '/v1/namespaces',
      {
        schema: {
          tags,
          summary: 'Iceberg namespaces (one: tracelake)',
          querystring: Type.Object({
            parent: Type.Optional(Type.String()),
            pageToken: Type.Optional(Type.String()),
            pageSize: Type.Optional(Type.String()),
          }),
          response: { 200: Type.Object({ namespaces: Type.Array(Namespace) }), ...errors },
        },
      },
      async (req) => ({ namespaces: catalog.namespaces((req.query as { parent?: string }).parent) }),
    );
    app.get(
      '/v1/namespaces/:namespace',
      {
        schema: {
          tags,
          summary: 'An Iceberg namespace',
          params: Type.Object({ namespace: Type.String() }),
          response: { 200: Type.Object({ namespace: Namespace, properties: Type.Record(Type.String(), Type.String()) }), ...errors },
        },
      },
      async (req) => catalog.namespace((req.params as { namespace: string }).namespace),
    );
    app.get(
      '/v1/namespaces/:namespace/tables',
      {
        schema: {
          tags,
          summary: 'The published Iceberg tables (spans, traces, sessions)',
          params: Type.Object({ namespace: Type.String() }),
          querystring: Type.Object({ pageToken: Type.Optional(Type.String()), pageSize: Type.Optional(Type.String()) }),
          response: { 200: Type.Object({ identifiers: Type.Array(Identifier) }), ...errors },
        },
      },
      async (req) => ({ identifiers: await catalog.tables((req.params as { namespace: string }).namespace) }),
    );
    app.get(
      '/v1/namespaces/:namespace/tables/:table',
      {
        schema: {
          tags,
          summary: 'Load an Iceberg table: its newest metadata',
          params: Type.Object({ namespace: Type.String(), table: Type.String() }),
          querystring: Type.Object({ snapshots: Type.Optional(Type.String()) }),
          response: {
            200: Type.Object({
              'metadata-location': Type.String(),
              metadata: Type.Object({}, { additionalProperties: true, description: 'Iceberg table metadata (format v2)' }),
              config: Type.Record(Type.String(), Type.String()),
            }),
            ...errors,
          },
        },
      },
      async (req) => {
        const p = req.params as { namespace: string; table: string };
        return catalog.load(p.namespace, p.table);
      },
    );
    app.post(
      '/v1/oauth/tokens',
      {
        config: { public: true },
        schema: {
          tags,
          summary: 'OAuth2 client credentials for the catalog: the client secret is an API key',
          body: Type.Object(
            {
              grant_type: Type.String(),
              client_id: Type.Optional(Type.String()),
              client_secret: Type.Optional(Type.String()),
              scope: Type.Optional(Type.String()),
            },
            { additionalProperties: true },
          ),
          response: {
            200: Type.Object({
              access_token: Type.String(),
              token_type: Type.String(),
              expires_in: Type.Optional(Type.Integer()),
              issued_token_type: Type.String(),
            }),
            ...Object.fromEntries([400, 401, 413, 415, 422, 429].map((s) => [s, OAuthError])),
            500: ErrorModel,
          },
        },
      },
      async (req) => {
        const body = req.body as { grant_type: string; client_secret?: string };
        if (body.grant_type !== 'client_credentials' || !body.client_secret)
          throw new UnauthorizedError('send grant_type=client_credentials with an API key as client_secret');
        const token = await credentials.loginWithApiKeyOffThread(body.client_secret);
        return { ...token, issued_token_type: 'urn:ietf:params:oauth:token-type:access_token' };
      },
    );
  };
