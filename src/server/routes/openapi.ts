// GET /openapi.json: the OpenAPI document of this server (openapi/document.ts), no credentials needed.
import type { FastifyPluginAsync } from 'fastify';
import type { ApiSurface } from '../openapi/document.js';

const DocumentShape = {
  type: 'object',
  required: ['openapi', 'info', 'paths'],
  properties: { openapi: { type: 'string' }, info: { type: 'object' }, paths: { type: 'object' } },
  additionalProperties: true,
} as const;

export const openapiRoutes =
  (surface: ApiSurface): FastifyPluginAsync =>
  async (app) => {
    let text: string | null = null;
    app.get(
      '/openapi.json',
      {
        config: { public: true },
        schema: { response: { 200: DocumentShape } },
        serializerCompiler: () => (data) => (typeof data === 'string' ? data : JSON.stringify(data)),
      },
      async (_req, reply) => reply.type('application/json; charset=utf-8').send((text ??= JSON.stringify(surface.document()))),
    );
  };
