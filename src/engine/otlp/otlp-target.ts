// Where an OTLP export goes: the project and log stream named by the caller (headers `project` or
// `x-project-name`, `logstream`) or else by each resource's attributes (`tracelake.project.name`,
// `tracelake.log_stream.name`; Galileo's and OpenInference's names as well), else `default`. Both
// are created on first use when the caller may: any user may create a project (and owns it), a log
// stream needs create_run in the project, logging needs log_data. A project the caller cannot see
// answers 404, as it does everywhere.
import type { Project, Run, User } from '../../catalog/catalog.js';
import { NotFoundError } from '../../errors.js';
import type { Attrs } from '../../ingest/otlp/model.js';
import type { TraceStore } from '../trace-store.js';

export interface OtlpLogOptions {
  /** Project name for every span (the header `project` / `x-project-name`); else the resource attributes decide. */
  project?: string | null;
  /** Log stream name for every span (the header `logstream`); else the resource attributes decide. */
  logStream?: string | null;
  /** The caller; omitted or null: a library call with every right. */
  user?: User | null;
}

export const DEFAULT_NAME = 'default';

const PROJECT_ATTRS = ['tracelake.project.name', 'galileo.project.name', 'openinference.project.name'];
const STREAM_ATTRS = ['tracelake.log_stream.name', 'galileo.logstream.name'];

function firstString(attrs: Attrs, keys: readonly string[]): string | undefined {
  for (const k of keys) {
    const v = attrs.get(k);
    if (typeof v === 'string' && v.trim() !== '') return v.trim();
  }
  return undefined;
}

/** Project and log stream names for spans of one resource. */
export function targetNames(resource: Attrs, options: OtlpLogOptions): { project: string; logStream: string } {
  return {
    project: options.project?.trim() || firstString(resource, PROJECT_ATTRS) || DEFAULT_NAME,
    logStream: options.logStream?.trim() || firstString(resource, STREAM_ATTRS) || DEFAULT_NAME,
  };
}

/** The project and log stream, created when missing and allowed; throws 403/404 otherwise. Synchronous: no interleaving. */
export function resolveTarget(store: TraceStore, names: { project: string; logStream: string }, user: User | null): { project: Project; run: Run } {
  let project = store.findProjects({ name: names.project }, user)[0];
  if (!project) {
    if (store.catalog.projectByName(names.project)) throw new NotFoundError(`Project ${names.project} not found`);
    project = store.createProject({ name: names.project }, user);
  }
  store.authorize(project.id, 'log_data', user);
  let run = store.listRuns(project.id, 'log_stream').find((r) => r.name === names.logStream);
  if (!run) {
    store.authorize(project.id, 'create_run', user);
    run = store.createLogStream(project.id, names.logStream, user);
  }
  return { project, run };
}
