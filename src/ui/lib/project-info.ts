// A project's name and runs, loaded once per page view for breadcrumbs and run names.
import { api } from './api.js';
import type { ProjectInfo, RunInfo } from './types.js';

const cache = new Map<string, Promise<ProjectInfo>>();

export function projectInfo(projectId: string): Promise<ProjectInfo> {
  let p = cache.get(projectId);
  if (!p) {
    p = api<ProjectInfo>('GET', `/projects/${encodeURIComponent(projectId)}`);
    p.catch(() => cache.delete(projectId));
    cache.set(projectId, p);
  }
  return p;
}

export function forgetProjects(): void {
  cache.clear();
}

export const runKindOf = (run: RunInfo): 'ls' | 'exp' => (run.kind === 'log_stream' ? 'ls' : 'exp');
