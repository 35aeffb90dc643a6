// "Score these": scores the records a table's filter selects with the scorers picked here (the run's
// enabled ones ticked to start with), through recompute_metrics with the table's own filter_tree, then
// follows the job until it is done and tells the table to reload.
import { useEffect, useState } from 'preact/hooks';
import type { RunKind, TableLevel } from '../lib/routes.js';
import { listScorers, readJob, readScorerSettings, startRecompute } from '../lib/scorer-api.js';
import { metricOf, nodeTypesOf } from '../lib/scorer-settings.js';
import type { ScoreJob, ScorerItem } from '../lib/types.js';
import { useAsync } from '../lib/use-async.js';
import { ErrorNote, Loading } from './common.js';

interface Props {
  projectId: string;
  runKind: RunKind;
  runId: string;
  filter: unknown;
  level: TableLevel;
  /** What the table counts with this filter, e.g. "12 spans". */
  counted: string;
  onClose: () => void;
  /** Called once the job has finished, with the metrics it wrote. */
  onDone: (metrics: string[]) => void;
}

const OUTCOMES: [string, string][] = [
  ['success', 'scored'],
  ['failed', 'failed'],
  ['error', 'error'],
  ['not_applicable', 'not applicable'],
  ['not_computed', 'not computed'],
  ['skipped', 'kept (logged)'],
];

export function ScorePanel({ projectId, runKind, runId, filter, level, counted, onClose, onDone }: Props) {
  const choices = useAsync(
    async (signal) => {
      const [scorers, settings] = await Promise.all([listScorers(signal), readScorerSettings(projectId, runId, signal)]);
      return { scorers, enabled: settings.scorers.map((c) => c.id) };
    },
    [projectId, runId],
  );
  const [picked, setPicked] = useState<string[] | null>(null);
  const [job, setJob] = useState<ScoreJob | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const chosen = picked ?? choices.data?.enabled ?? [];
  const byId = new Map((choices.data?.scorers ?? []).map((s) => [s.id, s]));
  const running = job !== null && (job.status === 'pending' || job.status === 'processing');

  useEffect(() => {
    if (!running || !job) return;
    const ctl = new AbortController();
    const timer = setTimeout(() => {
      readJob(projectId, job.id, ctl.signal).then(
        (j) => {
          setJob(j);
          if (j.status === 'completed' || j.status === 'failed')
            onDone(chosen.flatMap((id) => (byId.get(id) ? [metricOf(byId.get(id)!)] : [])));
        },
        (e: Error) => !ctl.signal.aborted && setError(e),
      );
    }, 300);
    return () => {
      clearTimeout(timer);
      ctl.abort();
    };
  }, [job, running]);

  const start = async () => {
    setError(null);
    try {
      setJob(await startRecompute(projectId, runKind, runId, chosen, filter));
    } catch (e) {
      setError(e as Error);
    }
  };
  const toggle = (id: string, on: boolean) => setPicked(on ? [...chosen.filter((x) => x !== id), id] : chosen.filter((x) => x !== id));
  const scorers = choices.data?.scorers ?? [];
  const listed = scorers.filter((s) => chosen.includes(s.id) || choices.data?.enabled.includes(s.id));
  const others = scorers.filter((s) => !listed.includes(s));
  const name = (s: ScorerItem) => s.label || s.name;

  return (
    <section class="score-panel" aria-label="Score these">
      <h3>Score these</h3>
      <p class="muted">
        Scores the {counted} {filter ? 'this filter selects' : 'of this run'}, each scorer the records it applies to (its node types, in
        brackets){level === 'spans' ? '' : ': a scorer of spans reads the filter as a filter of spans'}. Values a client logged are kept.
      </p>
      <ErrorNote error={choices.error ?? error} />
      {choices.loading && !choices.data && <Loading what="scorers" />}
      {choices.data && (
        <>
          <fieldset disabled={running}>
            <legend>Scorers</legend>
            {listed.length === 0 && <p class="muted">No scorer is enabled in this run: add one.</p>}
            {listed.map((s) => (
              <label key={s.id} class="pick">
                <input type="checkbox" checked={chosen.includes(s.id)} onChange={(e) => toggle(s.id, e.currentTarget.checked)} /> {name(s)}{' '}
                <span class="muted">({nodeTypesOf(s).join(', ')})</span>
              </label>
            ))}
            <select
              aria-label="Add a scorer"
              value=""
              onChange={(e) => {
                const id = e.currentTarget.value;
                if (id) toggle(id, true);
              }}
            >
              <option value="">Add a scorer…</option>
              {others.map((s) => (
                <option key={s.id} value={s.id}>
                  {name(s)}
                </option>
              ))}
            </select>
          </fieldset>
          <div class="actions">
            <button type="button" class="primary" disabled={running || chosen.length === 0} onClick={() => void start()}>
              {running ? 'Scoring…' : `Score with ${chosen.length} scorer${chosen.length === 1 ? '' : 's'}`}
            </button>
            <button type="button" disabled={running} onClick={onClose}>
              Close
            </button>
          </div>
        </>
      )}
      {job && (
        <div class="job" role="status" aria-live="polite" data-job-status={job.status}>
          <progress
            aria-label="Scoring progress"
            max={Math.max(job.steps_total, 1)}
            value={job.status === 'completed' ? Math.max(job.steps_total, 1) : job.steps_completed}
          />
          <span class="job-text">
            {job.status === 'completed'
              ? `Done: ${job.steps_total.toLocaleString('en-US')} record${job.steps_total === 1 ? '' : 's'}`
              : job.status === 'failed'
                ? `Failed: ${job.error_message ?? 'the job stopped'}`
                : job.status === 'pending'
                  ? 'Waiting to start (one job runs at a time)…'
                  : `${job.steps_completed.toLocaleString('en-US')} of ${job.steps_total.toLocaleString('en-US')} records`}
          </span>
          <span class="job-counts muted">
            {OUTCOMES.filter(([k]) => job.counts[k])
              .map(([k, w]) => `${job.counts[k]} ${w}`)
              .join(' · ')}
          </span>
        </div>
      )}
    </section>
  );
}
