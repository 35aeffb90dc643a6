// Users and API keys over HTTP: admins create users and anyone's keys; a user manages their own keys.
// Keys are shown once, at creation; lists show only their first characters.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '../../vendor/typebox.js';
import type { User } from '../../catalog/catalog.js';
import type { TraceStore } from '../../engine/trace-store.js';
import { publicUser } from '../../engine/users.js';
import { ForbiddenError, NotFoundError } from '../../errors.js';
import { Nullable, Uuid } from '../../schemas/common.js';

const UserView = Type.Object({
  id: Type.String(),
  email: Type.String(),
  first_name: Type.String(),
  last_name: Type.String(),
  role: Type.String(),
  created_at: Type.String(),
});
const KeyView = Type.Object({
  id: Type.String(),
  user_id: Type.String(),
  prefix: Type.String(),
  description: Type.String(),
  created_at: Type.String(),
  revoked_at: Nullable(Type.String()),
});

function requireAdmin(user: User | null): void {
  if (user?.role !== 'admin') throw new ForbiddenError('only admins may manage users');
}

function requireSelfOrAdmin(user: User | null, userId: string): void {
  if (user?.role !== 'admin' && user?.id !== userId.toLowerCase()) throw new ForbiddenError("only admins may manage other users' keys");
}

export const userRoutes =
  (store: TraceStore): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get('/current_user', { schema: { response: { 200: UserView } } }, async (req) => publicUser(req.user!));
    app.get('/users', { schema: { response: { 200: Type.Array(UserView) } } }, async (req) => {
      requireAdmin(req.user);
      return store.users.list();
    });
    app.post(
      '/users',
      {
        schema: {
          body: Type.Object({
            email: Type.String({ format: 'email', maxLength: 320 }),
            first_name: Type.Optional(Type.String({ maxLength: 200 })),
            last_name: Type.Optional(Type.String({ maxLength: 200 })),
            password: Type.Optional(Type.String({ minLength: 8, maxLength: 1024 })),
            role: Type.Optional(Type.Enum(['admin', 'user'])),
          }),
          response: { 200: UserView },
        },
      },
      async (req) => {
        requireAdmin(req.user);
        return publicUser(store.users.create(req.body));
      },
    );
    app.get(
      '/users/:user_id/api_keys',
      { schema: { params: Type.Object({ user_id: Uuid }), response: { 200: Type.Array(KeyView) } } },
      async (req) => {
        requireSelfOrAdmin(req.user, req.params.user_id);
        return store.users.listApiKeys(req.params.user_id.toLowerCase());
      },
    );
    app.post(
      '/users/:user_id/api_keys',
      {
        schema: {
          params: Type.Object({ user_id: Uuid }),
          body: Type.Object({ description: Type.Optional(Type.String({ maxLength: 500 })) }),
          response: { 200: Type.Object({ id: Type.String(), api_key: Type.String(), description: Type.String() }) },
        },
      },
      async (req) => {
        requireSelfOrAdmin(req.user, req.params.user_id);
        const { key, id } = store.users.createApiKey(req.params.user_id.toLowerCase(), req.body.description ?? '');
        return { id, api_key: key, description: req.body.description ?? '' };
      },
    );
    app.delete(
      '/api_keys/:key_id',
      { schema: { params: Type.Object({ key_id: Uuid }), response: { 200: Type.Object({ message: Type.String() }) } } },
      async (req) => {
        const key = store.users.listApiKeys().find((k) => k.id === req.params.key_id.toLowerCase());
        if (!key) throw new NotFoundError(`API key ${req.params.key_id} not found`);
        requireSelfOrAdmin(req.user, key.user_id);
        store.users.revokeApiKey(key.id);
        return { message: `API key ${key.id} revoked` };
      },
    );
  };
