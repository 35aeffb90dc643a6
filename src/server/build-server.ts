// buildServer({ store }) -> a Fastify instance wrapping a TraceStore. It never listens (cli.ts does).
// Every route answers bare, under /v2 and under /public/v2, as the official clients call them.
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { internalsOf } from '../engine/internals.js';
import type { TraceStore } from '../engine/trace-store.js';
import { installAccess } from './access.js';
import { storeCredentials } from './auth/credentials.js';
import { installAuth } from './auth/request-auth.js';
import { installJsonParser } from './json-body.js';
import { clientErrorHandler, frameworkErrors, installErrorHandling } from './errors.js';
import { PREFIXES } from './prefixes.js';
import { authRoutes } from './routes/auth.js';
import { clientCompatRoutes } from './routes/client-compat.js';
import { healthRoutes } from './routes/health.js';
import { ingestRoutes } from './routes/ingest.js';
import { otlpRoutes } from './routes/otlp.js';
import { projectRoutes } from './routes/projects.js';
import { recordRoutes } from './routes/records.js';
import { runRoutes } from './routes/runs.js';
import { userRoutes } from './routes/users.js';
import { memberRoutes } from './routes/members.js';
import { retentionRoutes } from './routes/retention.js';
import { modelPriceRoutes } from './routes/model-prices.js';
import { scorerRoutes } from './routes/scorers.js';
import { scoringRoutes } from './routes/scoring.js';
import { ICEBERG_PREFIX, icebergRoutes } from './routes/iceberg.js';
import { openTarget } from '../iceberg/publish.js';
import { RestCatalog } from '../iceberg/rest-catalog.js';
import type { S3Options } from '../iceberg/s3-client.js';
import { CONTRACT_ENV, installContractCheck } from './openapi/contract.js';
import { installDocsPage } from './openapi/docs-page.js';
import { installOpenApi, type ApiSurface } from './openapi/document.js';
import { openapiRoutes } from './routes/openapi.js';
import { installRateLimit, type RateLimitOptions } from './rate-limit.js';
import { validatorCompiler } from './validation.js';
import { lazySerializerCompiler } from './serialization.js';
import { defaultViewerDir, installViewer } from './viewer.js';

export { PREFIXES };

declare module 'fastify' {
  interface FastifyInstance {
    /** The OpenAPI document and which routes it describes. */
    apiSurface: ApiSurface;
  }
}

export interface ServerOptions {
  store: TraceStore;
  /** Largest accepted request body in bytes (default 32 MiB); larger ones get 413. */
  bodyLimit?: number;
  /** Fastify logger setting (default off; the CLI turns it on). */
  logger?: FastifyServerOptions['logger'];
  /** Milliseconds a request may take before the connection is closed (default 120 s). */
  requestTimeout?: number;
  /** The browser viewer at /ui/: served from `dir` (default dist/ui of this package), or off with false. */
  viewer?: false | { dir?: string };
  /**
   * Decompressed bytes of OTLP exports being written at once before new ones get 503 + Retry-After
   * (default 4 × the body limit).
   */
  otlpMaxPendingBytes?: number;
  /**
   * Validate every answer against the OpenAPI document (openapi/contract.ts). Default: on when the
   * environment has TRACELAKE_CHECK_CONTRACT=1, as the test suite sets; off in production.
   */
  checkContract?: boolean;
  /** Requests allowed per API key and window (429 with Retry-After beyond); off when absent. */
  rateLimit?: RateLimitOptions;
  /** Lifetime of the bearer tokens /login and /login/api_key give, in seconds (default 30 days). */
  tokenTtlSeconds?: number;
  /**
   * Where the Iceberg tables are published (a folder or s3://bucket/prefix; default <data>/iceberg):
   * the REST catalog at /iceberg/v1 serves them.
   */
  iceberg?: { to?: string; s3?: S3Options };
}

export function buildServer(options: ServerOptions): FastifyInstance {
  const { store } = options;
  // Questions come once it is ready: the open's background work waits until then and a pause after,
  // so the first questions of a server just started do not meet it (a server never readied lets go at close).
  const starting = internalsOf(store).records.expectQuestions();
  const bodyLimit = options.bodyLimit ?? 32 * 1024 * 1024;
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit,
    requestTimeout: options.requestTimeout ?? 120_000,
    // The JS client repeats path params as query params, so unknown query params are ignored.
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true },
    ajv: undefined,
    // Requests refused before routing answer with {detail} like every other 4xx.
    clientErrorHandler,
    frameworkErrors,
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onReady', async () => starting());
  app.addHook('onClose', async () => starting());
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(lazySerializerCompiler);
  installJsonParser(app);
  // OAuth2's password flow posts a form.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  installErrorHandling(app);
  // Before any route: @fastify/swagger collects routes as they are added.
  const surface = installOpenApi(app);
  app.decorate('apiSurface', surface);
  if (options.checkContract ?? process.env[CONTRACT_ENV] === '1') installContractCheck(app, surface);
  installDocsPage(app);
  const credentials = storeCredentials(store, options.tokenTtlSeconds);
  installAuth(app, credentials);
  // After authentication (its onRequest hook is added first): only valid credentials get a bucket.
  if (options.rateLimit) installRateLimit(app, options.rateLimit);
  installAccess(app, store);
  for (const prefix of PREFIXES) {
    void app.register(
      async (scoped) => {
        await scoped.register(healthRoutes);
        await scoped.register(authRoutes(credentials));
        await scoped.register(projectRoutes(store));
        await scoped.register(runRoutes(store));
        await scoped.register(ingestRoutes(store));
        await scoped.register(recordRoutes(store));
        await scoped.register(userRoutes(store));
        await scoped.register(memberRoutes(store));
        await scoped.register(retentionRoutes(store));
        await scoped.register(modelPriceRoutes(store));
        await scoped.register(scorerRoutes(store));
        await scoped.register(scoringRoutes(store));
        await scoped.register(clientCompatRoutes(store));
        await scoped.register(openapiRoutes(surface));
      },
      { prefix },
    );
  }
  const viewer = options.viewer ?? {};
  if (viewer !== false) void app.register(async (scoped) => installViewer(scoped, viewer.dir ?? defaultViewerDir()));
  // The Iceberg catalog's and OpenTelemetry's paths are their own (/iceberg/v1/..., /v1/traces,
  // /otel/traces): registered once, without the prefixes.
  void app.register(icebergRoutes(credentials, icebergCatalog(store, options.iceberg)), { prefix: ICEBERG_PREFIX });
  void app.register(otlpRoutes(store, { bodyLimit, maxPendingBytes: options.otlpMaxPendingBytes ?? 4 * bodyLimit }));
  return app;
}

/**
 * The REST catalog over the publish target. Tables are loaded with no storage settings: readers bring
 * their own S3 endpoint and credentials (ClickHouse 26.7 built wrong object URLs from an `s3.endpoint`
 * given with the table).
 */
function icebergCatalog(store: TraceStore, iceberg: ServerOptions['iceberg']): RestCatalog {
  return new RestCatalog(() => openTarget(store.dir, iceberg?.to, iceberg?.s3));
}
