// Where an OTLP export goes: the project and log stream named by the caller (headers `project` or
// `x-project-name`, `logstream`) or else by each resource's attributes (`tracelake.project.name`,
// `tracelake.log_stream.name`; Galileo's and OpenInference's names as well), else `default`. Both
// are created on first use when the caller may: any user may create a project (and owns it), a log
// stream needs create_run in the project, logging needs log_data. A project the caller cannot see
// answers 404, as it does everywhere.
import type { Project, Run, User } from '../../catalog/catalog.js';
import type { ProjectAction } from '../../catalog/permissions.js';
import { NotFoundError } from '../../errors.js';
import type { Attrs } from '../../ingest/otlp/model.js';

/** What finding or creating a target needs of the catalog (the catalog part, and a lookup by name that ignores visibility). */
export interface TargetCatalog {
  findProjects(query: { name?: string }, user?: User | null): Project[];
  /** The project of that name whether or not the caller may see it. */
  projectNamed(name: string): Project | undefined;
  createProject(input: { name: string }, user?: User | null): Project;
  authorize(projectId: string, action: ProjectAction, user: User | null): void;
  listRuns(projectId: string, kind: 'log_stream'): Run[];
  createLogStream(projectId: string, name: string, user?: User | null): Run;
}

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
export function resolveTarget(
  catalog: TargetCatalog,
  names: { project: string; logStream: string },
  user: User | null,
): { project: Project; run: Run } {
  let project = catalog.findProjects({ name: names.project }, user)[0];
  if (!project) {
    if (catalog.projectNamed(names.project)) throw new NotFoundError(`Project ${names.project} not found`);
    project = catalog.createProject({ name: names.project }, user);
  }
  catalog.authorize(project.id, 'log_data', user);
  let run = catalog.listRuns(project.id, 'log_stream').find((r) => r.name === names.logStream);
  if (!run) {
    catalog.authorize(project.id, 'create_run', user);
    run = catalog.createLogStream(project.id, names.logStream, user);
  }
  return { project, run };
}
