// Who may call which route. Every route on one project (`:project_id`) is listed here with the
// project action it needs ('read' for any role); the preHandler below enforces it with the same
// can() that fills the `permissions` arrays, so what is reported and what is enforced agree. A caller
// with no role in the project gets 404, exactly as for a project that does not exist; a role too low
// for the action gets 403 with the reason. A project route missing from the table is refused to all
// but admins (fail closed), and a test checks the table covers every route.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { can, isSuperuser, type ProjectAction } from '../catalog/permissions.js';
import type { TraceStore } from '../engine/trace-store.js';
import { ForbiddenError, NotFoundError } from '../errors.js';
import { PREFIXES } from './prefixes.js';

export type Access = ProjectAction | 'read';

const RUNS = ['log_streams', 'experiments', 'metrics_testing'];
const LEVELS = ['spans', 'traces', 'sessions'];

function table(): Map<string, Access> {
  const t = new Map<string, Access>();
  const set = (methods: string, url: string, access: Access) => {
    for (const m of methods.split(',')) t.set(`${m} ${url}`, access);
  };
  const p = '/projects/:project_id';
  set('GET,HEAD', p, 'read');
  set('PATCH,PUT', p, 'update');
  set('DELETE', p, 'delete');
  set('PUT,DELETE', `${p}/bookmark`, 'read');
  for (const r of RUNS) {
    set('GET,HEAD', `${p}/${r}`, 'read');
    set('POST', `${p}/${r}`, 'create_run');
    set('GET,HEAD', `${p}/${r}/:run_id`, 'read');
    set('PATCH,PUT', `${p}/${r}/:run_id`, 'rename_run');
    set('DELETE', `${p}/${r}/:run_id`, 'delete_run');
  }
  set('POST', `${p}/log_streams/search`, 'read');
  set('GET,HEAD', `${p}/retention`, 'read');
  set('PUT', `${p}/retention`, 'update');
  set('GET,HEAD', `${p}/model_prices`, 'read');
  set('PUT', `${p}/model_prices`, 'update');
  set('GET,HEAD', `${p}/log_streams/:run_id/retention`, 'read');
  set('PUT', `${p}/log_streams/:run_id/retention`, 'update');
  set('GET,HEAD', `${p}/runs/:run_id/scorer-settings`, 'read');
  set('PATCH,PUT,POST', `${p}/runs/:run_id/scorer-settings`, 'toggle_metric');
  set('POST', `${p}/recompute_metrics`, 'toggle_metric');
  set('POST', `${p}/recompute-metrics`, 'toggle_metric');
  set('GET,HEAD', `${p}/jobs/:job_id`, 'read');
  set('POST', `${p}/spans`, 'log_data');
  set('POST', `${p}/traces`, 'log_data');
  set('POST', `${p}/sessions`, 'log_data');
  set('PATCH', `${p}/traces/:trace_id`, 'log_data');
  set('PATCH', `${p}/spans/:span_id`, 'log_data');
  for (const l of LEVELS) {
    for (const q of ['search', 'partial_search', 'count', 'aggregate', 'available_columns']) set('POST', `${p}/${l}/${q}`, 'read');
    set('POST', `${p}/${l}/delete`, 'delete_data');
    set('GET,HEAD', `${p}/${l}/:${l.slice(0, -1)}_id`, 'read');
  }
  set('GET,HEAD', `${p}/users`, 'read');
  set('POST', `${p}/users`, 'share');
  set('PATCH,DELETE', `${p}/users/:user_id`, 'share');
  return t;
}

export const ROUTE_ACCESS: ReadonlyMap<string, Access> = table();

/** The route pattern without its /v2 or /public/v2 prefix. */
export function bareUrl(url: string): string {
  for (const prefix of PREFIXES) if (prefix && url.startsWith(`${prefix}/`)) return url.slice(prefix.length);
  return url;
}

export function installAccess(app: FastifyInstance, store: TraceStore): void {
  app.addHook('preHandler', async (request: FastifyRequest) => {
    const url = request.routeOptions.url;
    if (!url?.includes(':project_id')) return;
    const projectId = (request.params as { project_id?: string }).project_id;
    if (!projectId) return;
    authorizeProject(store, request.user, projectId, ROUTE_ACCESS.get(`${request.method} ${bareUrl(url)}`));
  });
}

/** 404 for callers who cannot see the project, 403 for a role below the action, nothing otherwise. */
export function authorizeProject(store: TraceStore, user: FastifyRequest['user'], projectId: string, access: Access | undefined): void {
  const project = store.catalog.getProject(projectId); // 404 when it does not exist
  if (isSuperuser(user)) return;
  const role = user ? store.catalog.projectRole(project.id, user.id) : null;
  if (role === null) throw new NotFoundError(`Project ${projectId} not found`);
  if (access === undefined) throw new ForbiddenError('this route is open to admins only');
  if (access === 'read') return;
  const p = can(user, access, { kind: 'project', project, role });
  if (!p.allowed) throw new ForbiddenError(p.message ?? `${access} is not allowed`);
}
