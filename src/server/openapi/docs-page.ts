// The API reference page at /docs: Swagger UI, served from its npm package (no CDN, nothing fetched
// from elsewhere), reading the same document as GET /openapi.json.
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

export const DOCS_PREFIX = '/docs';

export function installDocsPage(app: FastifyInstance): void {
  void app.register(swaggerUi, {
    routePrefix: DOCS_PREFIX,
    // No call home: the spec validator badge would load an image from the validator's site.
    validatorUrl: false,
    uiConfig: { docExpansion: 'list', deepLinking: true, displayOperationId: false, defaultModelsExpandDepth: 0, tryItOutEnabled: false },
    staticCSP: "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; font-src 'self' data:; object-src 'none'; frame-ancestors 'self'",
  });
}
