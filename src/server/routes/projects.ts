// Projects: found and created as the official client does (look up by name, create when missing),
// read, changed, bookmarked and deleted, and listed by POST /projects/paginated: the v2 shape under
// /v2 and /public/v2, the older v1 shape at the bare path, where older clients call it.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '../../vendor/typebox.js';
import type { TraceStore } from '../../engine/trace-store.js';
import { CreateProjectBody, ProjectDb, ProjectQuery } from '../../schemas/catalog.js';
import { ProjectIdParams } from '../../schemas/common.js';
import {
  DeletedBody,
  ProjectActionsQuery,
  ProjectsBody,
  ProjectsBodyV1,
  ProjectsPage,
  ProjectsPageV1,
  ProjectsQuery,
  ProjectsQueryV1,
  UpdateProjectBody,
} from '../../schemas/projects.js';
import { emptyBodyIsEmptyObject, projectDb } from '../present.js';

const Bookmarked = Type.Object({ project_id: Type.String(), bookmark: Type.Boolean() });

export const projectRoutes =
  (store: TraceStore): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post('/projects', { schema: { body: CreateProjectBody, response: { 200: ProjectDb } } }, async (req) =>
      projectDb(
        store,
        store.catalog.createProject(
          {
            name: req.body.name,
            type: req.body.type ?? undefined,
            description: req.body.description,
            labels: req.body.labels ?? undefined,
          },
          req.user,
        ),
        req.user,
      ),
    );
    // An empty list (not a 404) when no project has the name: the client then creates it.
    app.get('/projects', { schema: { querystring: ProjectQuery, response: { 200: Type.Array(ProjectDb) } } }, async (req) =>
      store.catalog.findProjects({ name: req.query.project_name }, req.user).map((p) => projectDb(store, p, req.user)),
    );
    app.get('/projects/all', { schema: { querystring: ProjectQuery, response: { 200: Type.Array(ProjectDb) } } }, async (req) =>
      store.catalog.findProjects({}, req.user).map((p) => projectDb(store, p, req.user)),
    );
    app.get(
      '/projects/:project_id',
      { schema: { params: ProjectIdParams, querystring: ProjectActionsQuery, response: { 200: ProjectDb } } },
      async (req) => projectDb(store, store.catalog.getProject(req.params.project_id), req.user, req.query.actions ?? []),
    );
    // PUT is the hosted service's verb for a project update; PATCH is accepted as well.
    for (const method of ['PATCH', 'PUT'] as const) {
      app.route({
        method,
        url: '/projects/:project_id',
        schema: { params: ProjectIdParams, body: UpdateProjectBody, response: { 200: ProjectDb } },
        handler: async (req) => projectDb(store, store.catalog.updateProject(req.params.project_id, req.body, req.user), req.user),
      });
    }
    app.delete('/projects/:project_id', { schema: { params: ProjectIdParams, response: { 200: DeletedBody } } }, async (req) => {
      const { records_deleted } = await store.catalog.deleteProject(req.params.project_id);
      return { message: `Project ${req.params.project_id} deleted`, records_deleted };
    });
    app.put('/projects/:project_id/bookmark', { schema: { params: ProjectIdParams, response: { 200: Bookmarked } } }, async (req) => {
      store.catalog.bookmarkProject(req.params.project_id, true, req.user);
      return { project_id: req.params.project_id.toLowerCase(), bookmark: true };
    });
    app.delete('/projects/:project_id/bookmark', { schema: { params: ProjectIdParams, response: { 200: Bookmarked } } }, async (req) => {
      store.catalog.bookmarkProject(req.params.project_id, false, req.user);
      return { project_id: req.params.project_id.toLowerCase(), bookmark: false };
    });
    if (app.prefix === '') {
      const schema = { querystring: ProjectsQueryV1, body: ProjectsBodyV1, response: { 200: ProjectsPageV1 } };
      app.post('/projects/paginated', { schema, preValidation: emptyBodyIsEmptyObject }, async (req) =>
        store.catalog.listProjectsV1(req.body, req.query, req.user),
      );
    } else {
      const schema = { querystring: ProjectsQuery, body: ProjectsBody, response: { 200: ProjectsPage } };
      app.post('/projects/paginated', { schema, preValidation: emptyBodyIsEmptyObject }, async (req) =>
        store.catalog.listProjects(req.body, req.query, req.user),
      );
    }
  };
