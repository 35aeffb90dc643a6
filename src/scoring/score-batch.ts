// Scoring a batch of records of one run and writing the results: the records come from a scan of the
// store (recompute jobs, catch-up) or are read by id (records online scoring noticed); each scorer runs
// over the records it should score (outside any lock: a judge may take seconds), then, holding the
// records' trace locks, one new version of each record is written with all of its results (metric
// values in `metrics`, statuses in extra.scores). A record still at the version that was read is
// written from that version; one rewritten meanwhile is read again, and keeps its new content and gets
// no result from this batch when its content changed (it is scored again later).
import type { LogRow } from '../record/record.js';
import { storedToWire } from '../record/row-codec.js';
import { withScores, type StoredScore } from '../record/scores.js';
import { nowUs } from '../record/time.js';
import type { ScoringHost } from './host.js';
import type { Outcome } from './outcome.js';
import type { ScorerPlan } from './plans.js';
import type { Runnable } from './runtime.js';

export interface Work {
  readonly plan: ScorerPlan;
  readonly runnable: Runnable;
}

export type Counts = Record<string, number>;

/** What a scorer read of a record: a result for other content is dropped. */
function contentKey(r: LogRow): string {
  return JSON.stringify([r.input ?? null, r.output ?? null, r.dataset_input ?? null, r.dataset_output ?? null, r.status_code ?? null]);
}

function add(counts: Counts, key: string, n = 1): void {
  counts[key] = (counts[key] ?? 0) + n;
}

function stored(plan: ScorerPlan, o: Outcome, by: string, at: string): StoredScore {
  const s: StoredScore = {
    status_type: o.status,
    scorer_id: plan.scorer.id,
    scorer_name: plan.scorer.name,
    scorer_version: plan.version?.version ?? null,
    scored_at: at,
    by,
  };
  if (o.status === 'success') {
    if (o.explanation !== undefined) s.explanation = o.explanation;
    if (o.num_judges !== undefined) s.num_judges = o.num_judges;
    if (o.model_alias !== undefined) s.model_alias = o.model_alias;
  } else s.message = o.message;
  return s;
}

/**
 * Scores records `ids` of a run, read by id: see scoreRows.
 */
export async function scoreBatch(
  host: ScoringHost,
  projectId: string,
  runId: string,
  ids: readonly string[],
  choose: (r: LogRow) => readonly Work[],
  by: string,
  still: (r: LogRow, plan: ScorerPlan) => boolean = () => true,
): Promise<Counts> {
  const mark = host.liveMark();
  const rows = (await host.lookup(projectId, runId, ids)).map(storedToWire);
  return scoreRows(host, projectId, runId, rows, mark, choose, by, still);
}

/**
 * Scores records of a run as read (`rows`, each a whole stored version, read after `mark` was taken:
 * ScoringHost.liveMark): `choose` names the work each record gets. `by`: 'online' or a job id.
 * `still`: whether a result is still wanted on the record as it is under the lock (another batch may
 * have scored it meanwhile). Returns how many results of each status were written, and `changed`
 * for records whose content moved on while they were scored.
 */
export async function scoreRows(
  host: ScoringHost,
  projectId: string,
  runId: string,
  rows: readonly LogRow[],
  mark: number,
  choose: (r: LogRow) => readonly Work[],
  by: string,
  still: (r: LogRow, plan: ScorerPlan) => boolean = () => true,
): Promise<Counts> {
  const counts: Counts = {};
  const jobs = new Map<Work, LogRow[]>();
  for (const r of rows) {
    for (const w of choose(r)) {
      let list = jobs.get(w);
      if (!list) jobs.set(w, (list = []));
      list.push(r);
    }
  }
  if (jobs.size === 0) return counts;
  // Results by record id, then metric.
  const results = new Map<string, Map<string, { plan: ScorerPlan; outcome: Outcome }>>();
  await Promise.all(
    [...jobs].map(async ([w, list]) => {
      let outcomes: Outcome[];
      if ('notComputed' in w.runnable)
        outcomes = list.map(() => ({ status: 'not_computed', message: (w.runnable as { notComputed: string }).notComputed }));
      else {
        try {
          outcomes = await w.runnable.run(list);
          if (outcomes.length !== list.length) throw new Error(`the scorer gave ${outcomes.length} results for ${list.length} records`);
        } catch (err) {
          outcomes = list.map(() => ({ status: 'failed', message: (err as Error).message || String(err) }));
        }
      }
      list.forEach((r, i) => {
        let m = results.get(r.id);
        if (!m) results.set(r.id, (m = new Map()));
        m.set(w.plan.metric, { plan: w.plan, outcome: outcomes[i]! });
      });
    }),
  );
  const before = new Map(rows.map((r) => [r.id, r]));
  const traces = [...new Set(rows.filter((r) => results.has(r.id)).map((r) => `${runId}/${r.trace_id ?? r.id}`))];
  await host.lockTraces(traces, async () => {
    // Writes of these traces wait for their locks: a version still live now stays live until the write.
    const current: LogRow[] = [];
    const moved: string[] = [];
    for (const id of results.keys()) {
      const r = before.get(id)!;
      if (host.isLive(r.seq, mark) === true) current.push(r);
      else moved.push(id);
    }
    const fresh = moved.length === 0 ? [] : (await host.lookup(projectId, runId, moved)).map(storedToWire);
    const at = new Date().toISOString();
    const now = nowUs();
    const out: LogRow[] = [];
    for (const r of [...current, ...fresh]) {
      const old = before.get(r.id)!;
      if (r !== old && contentKey(old) !== contentKey(r)) {
        add(counts, 'changed');
        continue;
      }
      const metrics = { ...(r.metrics ?? {}) };
      const scores: Record<string, StoredScore> = {};
      for (const [metric, { plan, outcome }] of results.get(r.id)!) {
        if (!still(r, plan)) {
          add(counts, 'already');
          continue;
        }
        if (outcome.status === 'success') metrics[metric] = outcome.value;
        else delete metrics[metric];
        scores[metric] = stored(plan, outcome, by, at);
        add(counts, outcome.status);
      }
      if (Object.keys(scores).length > 0) out.push({ ...r, metrics, extra: withScores(r.extra, scores), updated_at: now });
    }
    if (out.length > 0) await host.write(projectId, runId, out);
  });
  return counts;
}
