// GET /healthcheck: no credentials; the official client only needs a truthy JSON body.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '../../vendor/typebox.js';
import { VERSION } from '../../version.js';

export const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/healthcheck',
    {
      config: { public: true },
      schema: { response: { 200: Type.Object({ api_version: Type.String(), message: Type.String(), version: Type.String() }) } },
    },
    async () => ({ api_version: 'v2', message: 'ok', version: VERSION }),
  );
};
