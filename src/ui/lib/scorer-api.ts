// The scorer calls the viewer makes: the catalog's scorers (every page), a run's scorer settings read
// and written, a recompute started over a filter, and its job read back.
import { api, runField } from './api.js';
import type { RunKind } from './routes.js';
import type { ScorerInput } from './scorer-settings.js';
import type { RunScorerSettings, ScoreJob, ScorerItem } from './types.js';

/** Every scorer the catalog lists, by label (registered ones can be added at any time: not cached). */
export async function listScorers(signal?: AbortSignal): Promise<ScorerItem[]> {
  const out: ScorerItem[] = [];
  for (let start: number | null = 0; start !== null && out.length < 10_000; ) {
    const page: { scorers: ScorerItem[]; next_starting_token: number | null } = await api(
      'POST',
      `/scorers/list?limit=1000&starting_token=${start}`,
      {},
      signal,
    );
    out.push(...page.scorers);
    start = page.next_starting_token;
  }
  return out.sort((a, b) => (a.label || a.name).localeCompare(b.label || b.name));
}

const settingsPath = (projectId: string, runId: string) =>
  `/projects/${encodeURIComponent(projectId)}/runs/${encodeURIComponent(runId)}/scorer-settings`;

export function readScorerSettings(projectId: string, runId: string, signal?: AbortSignal): Promise<RunScorerSettings> {
  return api('GET', settingsPath(projectId, runId), undefined, signal);
}

export function writeScorerSettings(projectId: string, runId: string, scorers: ScorerInput[]): Promise<RunScorerSettings> {
  return api('PATCH', settingsPath(projectId, runId), { scorers });
}

/** Starts scoring the run's records that `filterTree` selects (null: all of them) with these scorers. */
export function startRecompute(
  projectId: string,
  runKind: RunKind,
  runId: string,
  scorerIds: string[],
  filterTree: unknown,
): Promise<ScoreJob> {
  return api('POST', `/projects/${encodeURIComponent(projectId)}/recompute_metrics`, {
    scorer_ids: scorerIds,
    ...runField(runKind, runId),
    ...(filterTree ? { filter_tree: filterTree } : {}),
  });
}

export function readJob(projectId: string, jobId: string, signal?: AbortSignal): Promise<ScoreJob> {
  return api('GET', `/projects/${encodeURIComponent(projectId)}/jobs/${encodeURIComponent(jobId)}`, undefined, signal);
}
