// Who holds which role in a project (/projects/{project_id}/users, the hosted service's
// collaborator routes). Changing roles needs the `share` action (owners and admins): this one
// check is enforced already, because roles are what the rest of the enforcement will rest on.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '../../vendor/typebox.js';
import type { TraceStore } from '../../engine/trace-store.js';
import { ProjectIdParams } from '../../schemas/common.js';
import { Member, MemberInput, MemberParams, PROJECT_ROLE_VALUES } from '../../schemas/projects.js';

export const memberRoutes =
  (store: TraceStore): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get('/projects/:project_id/users', { schema: { params: ProjectIdParams, response: { 200: Type.Array(Member) } } }, async (req) =>
      store.catalog.listProjectMembers(req.params.project_id),
    );
    app.post(
      '/projects/:project_id/users',
      {
        schema: {
          params: ProjectIdParams,
          body: Type.Array(MemberInput, { minItems: 1, maxItems: 1000 }),
          response: { 200: Type.Array(Member) },
        },
      },
      async (req) => {
        store.catalog.authorize(req.params.project_id, 'share', req.user);
        return req.body.map((m) => store.catalog.addProjectMember(req.params.project_id, m.user_id, m.role));
      },
    );
    app.patch(
      '/projects/:project_id/users/:user_id',
      { schema: { params: MemberParams, body: Type.Object({ role: Type.Enum([...PROJECT_ROLE_VALUES]) }), response: { 200: Member } } },
      async (req) => {
        store.catalog.authorize(req.params.project_id, 'share', req.user);
        return store.catalog.addProjectMember(req.params.project_id, req.params.user_id, req.body.role);
      },
    );
    app.delete(
      '/projects/:project_id/users/:user_id',
      { schema: { params: MemberParams, response: { 200: Type.Object({ message: Type.String() }) } } },
      async (req) => {
        store.catalog.authorize(req.params.project_id, 'share', req.user);
        store.catalog.removeProjectMember(req.params.project_id, req.params.user_id);
        return { message: `user ${req.params.user_id} removed from project ${req.params.project_id}` };
      },
    );
  };
