// Which run a request addresses. Logging needs exactly one of the three run ids (resolveRun); a query
// may give none and then spans every run of the project (resolveScope).
import type { Catalog, Project, Run, RunKind } from '../catalog/catalog.js';
import { invalidFields, NotFoundError } from '../errors.js';
import type { RunScope } from '../query/exec/record-queries.js';

/** Which run a request addresses: exactly one of the three run ids. */
export interface RunIds {
  log_stream_id?: string | null;
  experiment_id?: string | null;
  metrics_testing_id?: string | null;
}

export const RUN_ID_FIELDS: readonly [keyof RunIds, RunKind][] = [
  ['log_stream_id', 'log_stream'],
  ['experiment_id', 'experiment'],
  ['metrics_testing_id', 'metrics_testing'],
];

/** The run a request addresses; 422 when none or several run ids are given, 404 when unknown. */
export function resolveRun(
  catalog: Catalog,
  projectId: string,
  ids: RunIds,
  loc: (string | number)[] = ['body'],
): { project: Project; run: Run; field: keyof RunIds } {
  const project = catalog.project(projectId);
  const given = RUN_ID_FIELDS.filter(([f]) => ids[f] != null);
  if (given.length === 0) {
    throw invalidFields(
      loc,
      RUN_ID_FIELDS.map(([f]) => f),
      'one of log_stream_id, experiment_id or metrics_testing_id is required',
      'missing',
    );
  }
  if (given.length > 1) {
    throw invalidFields(
      loc,
      given.map(([f]) => f),
      `give only one of log_stream_id, experiment_id, metrics_testing_id (got ${given.map(([f]) => f).join(', ')})`,
    );
  }
  const [field, kind] = given[0]!;
  const run = catalog.run(project.id, String(ids[field]));
  if (run.kind !== kind) throw new NotFoundError(`${field} ${run.id} is not a ${kind.replace('_', ' ')}`);
  return { project, run, field };
}

/** Project and (optional) run a query addresses: with no run id it spans every run of the project. */
export function resolveScope(catalog: Catalog, projectId: string, ids: RunIds): RunScope {
  const project = catalog.project(projectId);
  if (RUN_ID_FIELDS.every(([f]) => ids[f] == null)) return { projectId: project.id };
  return { projectId: project.id, runId: resolveRun(catalog, projectId, ids).run.id };
}
