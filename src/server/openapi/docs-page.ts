// The API reference page at /docs: Swagger UI, served from its npm package (no CDN, nothing fetched
// from elsewhere), reading the same document as GET /openapi.json.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { assetPath } from '../../assets.js';

export const DOCS_PREFIX = '/docs';

export function installDocsPage(app: FastifyInstance): void {
  // Its static files come from a declared runtime folder (dist/docs-ui, copied at build time), never from
  // beside the package's own source, which the single binary does not have.
  const baseDir = assetPath('dist/docs-ui/');
  void app.register(swaggerUi, {
    routePrefix: DOCS_PREFIX,
    baseDir,
    logo: { type: 'image/svg+xml', content: readFileSync(join(baseDir, 'logo.svg')) },
    // No call home: the spec validator badge would load an image from the validator's site.
    validatorUrl: false,
    uiConfig: { docExpansion: 'list', deepLinking: true, displayOperationId: false, defaultModelsExpandDepth: 0, tryItOutEnabled: false },
    staticCSP:
      "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; " +
      "connect-src 'self'; font-src 'self' data:; object-src 'none'; frame-ancestors 'self'",
  });
}
