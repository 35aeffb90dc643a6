// Token endpoints: POST /login/api_key {api_key} and POST /login (OAuth2 password form).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '../../vendor/typebox.js';
import type { Credentials } from '../auth/credentials.js';

const Token = Type.Object({ access_token: Type.String(), token_type: Type.String(), expires_in: Type.Optional(Type.Integer()) });

export const authRoutes =
  (credentials: Credentials): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/login/api_key',
      { config: { public: true }, schema: { body: Type.Object({ api_key: Type.String({ minLength: 1 }) }), response: { 200: Token } } },
      async (req) => credentials.loginWithApiKeyOffThread(req.body.api_key),
    );
    app.post(
      '/login',
      {
        config: { public: true },
        schema: {
          body: Type.Object({
            username: Type.String({ minLength: 1 }),
            password: Type.String({ minLength: 1 }),
            grant_type: Type.Optional(Type.String()),
            scope: Type.Optional(Type.String()),
            client_id: Type.Optional(Type.String()),
            client_secret: Type.Optional(Type.String()),
          }),
          response: { 200: Token },
        },
      },
      async (req) => credentials.loginWithPasswordOffThread(req.body.username, req.body.password),
    );
  };
