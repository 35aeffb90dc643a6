// Projects as the official client finds and creates them (COMPAT.md 8.2).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { TraceStore } from '../../engine/trace-store.js';
import { CreateProjectBody, ProjectDb, ProjectQuery } from '../../schemas/catalog.js';
import { ProjectIdParams } from '../../schemas/common.js';
import { projectDb } from '../present.js';

export const projectRoutes = (store: TraceStore): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post('/projects', { schema: { body: CreateProjectBody, response: { 200: ProjectDb } } }, async (req) =>
      projectDb(store, store.createProject({ name: req.body.name, type: req.body.type ?? undefined, description: req.body.description, labels: req.body.labels ?? undefined }, req.user)),
    );
    // An empty list (not a 404) when no project has the name: the client then creates it.
    app.get('/projects', { schema: { querystring: ProjectQuery, response: { 200: Type.Array(ProjectDb) } } }, async (req) =>
      store.findProjects({ name: req.query.project_name }).map((p) => projectDb(store, p)),
    );
    app.get('/projects/all', { schema: { querystring: ProjectQuery, response: { 200: Type.Array(ProjectDb) } } }, async () =>
      store.findProjects().map((p) => projectDb(store, p)),
    );
    app.get('/projects/:project_id', { schema: { params: ProjectIdParams, response: { 200: ProjectDb } } }, async (req) =>
      projectDb(store, store.getProject(req.params.project_id)),
    );
  };
