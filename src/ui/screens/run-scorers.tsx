// A run's scorers: every scorer of the catalog (name, kind, what it scores, the metric it writes when
// that is not its name) with the run's enabled
// ones ticked. Ticking or unticking saves the run's scorer settings at once, as the official client's
// enableMetrics does, and an enabled scorer's sample rate can be set. Enabled scorers score the
// records logged from then on; older ones are scored from a table ("Score these").
import { useMemo, useState } from 'preact/hooks';
import { projectInfo } from '../lib/project-info.js';
import { Link, useTitle } from '../lib/router.js';
import { runOverview, runTable, type Route } from '../lib/routes.js';
import { listScorers, readScorerSettings, writeScorerSettings } from '../lib/scorer-api.js';
import {
  currentInputs,
  kindLabel,
  metricOf,
  nodeTypesOf,
  percentOf,
  toggled,
  withSampleRate,
  type ScorerInput,
} from '../lib/scorer-settings.js';
import type { RunScorerSettings, ScorerItem } from '../lib/types.js';
import { useAsync } from '../lib/use-async.js';
import { Breadcrumbs, ErrorNote, Loading } from '../components/common.js';

type ScorersRoute = Extract<Route, { name: 'scorers' }>;
type Show = 'all' | 'enabled' | 'code' | 'judge';

const SHOW_LABELS: Record<Show, string> = { all: 'All scorers', enabled: 'Enabled', code: 'Code', judge: 'LLM judges' };

export function RunScorers({ route }: { route: ScorersRoute }) {
  const { projectId, runKind, runId } = route;
  const data = useAsync(
    async (signal) => {
      const [project, scorers, settings] = await Promise.all([
        projectInfo(projectId),
        listScorers(signal),
        readScorerSettings(projectId, runId, signal),
      ]);
      return { project, scorers, settings };
    },
    [projectId, runId],
  );
  const [settings, setSettings] = useState<RunScorerSettings | null>(null);
  const [saving, setSaving] = useState(false);
  // The box the user just clicked shows its new state while the save is on its way.
  const [optimistic, setOptimistic] = useState<{ id: string; on: boolean } | null>(null);
  const [saved, setSaved] = useState<string>('');
  const [error, setError] = useState<Error | null>(null);
  const [find, setFind] = useState('');
  const [show, setShow] = useState<Show>('all');
  const current = settings ?? data.data?.settings ?? null;
  const scorers = data.data?.scorers ?? [];
  const byId = useMemo(() => new Map(scorers.map((s) => [s.id, s])), [scorers]);
  const enabled = new Map((current?.scorers ?? []).map((c) => [c.id, c]));
  const runName = data.data?.project.runs?.find((r) => r.id === runId)?.name;
  useTitle(runName ? `${runName} scorers` : null);

  // Enabled first (as they were when the page opened, so rows do not jump on a tick), then by label.
  const firstEnabled = useMemo(() => new Set(data.data?.settings.scorers.map((c) => c.id) ?? []), [data.data]);
  const q = find.trim().toLowerCase();
  const rows = scorers
    .filter((s) => !q || `${s.name} ${s.label ?? ''} ${s.description ?? ''}`.toLowerCase().includes(q))
    .filter((s) =>
      show === 'enabled'
        ? enabled.has(s.id)
        : show === 'code'
          ? kindLabel(s).startsWith('code')
          : show === 'judge'
            ? kindLabel(s).startsWith('LLM judge')
            : true,
    )
    .sort((a, b) => Number(firstEnabled.has(b.id)) - Number(firstEnabled.has(a.id)));

  const save = async (next: ScorerInput[], what: string) => {
    setSaving(true);
    setError(null);
    setSaved('');
    try {
      setSettings(await writeScorerSettings(projectId, runId, next));
      setSaved(what);
    } catch (e) {
      setError(e as Error);
    } finally {
      setSaving(false);
      setOptimistic(null);
    }
  };
  const inputs = () => currentInputs(current?.scorers ?? [], byId);
  const label = (s: ScorerItem) => s.label || s.name;

  return (
    <main class="page wide">
      <Breadcrumbs
        items={[
          { label: 'Projects', to: { name: 'projects', page: 1 } },
          { label: data.data?.project.name ?? '…', to: { name: 'project', projectId } },
          { label: runName ?? '…', to: runTable(projectId, runKind, runId) },
          { label: 'Scorers' },
        ]}
      />
      <div class="toolbar">
        <nav class="tabs" aria-label="Run views">
          <Link class="tab" to={runOverview(projectId, runKind, runId)}>
            Overview
          </Link>
          {(['traces', 'spans', 'sessions'] as const).map((l) => (
            <Link key={l} class="tab" to={runTable(projectId, runKind, runId, l)}>
              {l[0]!.toUpperCase() + l.slice(1)}
            </Link>
          ))}
          <span class="tab active" aria-current="page">
            Scorers
          </span>
        </nav>
        <span class="count" role="status" aria-live="polite">
          {saving ? 'Saving…' : saved ? `Saved: ${saved}` : current ? `${current.scorers.length} enabled` : ''}
        </span>
      </div>
      <p class="muted intro">
        Enabled scorers score the records logged into this run from now on. To score records already here, open a table and use{' '}
        <em>Score these</em>.
      </p>
      <ErrorNote error={data.error ?? error} />
      {data.loading && !data.data && <Loading what="scorers" />}
      {current && current.scorers.length > 0 && (
        <p class="enabled-list">
          <span class="muted">Enabled:</span>{' '}
          {current.scorers.map((c) => (
            <span class="chip" key={c.id}>
              {byId.get(c.id)?.label || c.name}
              {typeof c.sample_rate === 'number' && c.sample_rate < 1 ? ` · ${percentOf(c.sample_rate)}%` : ''}
            </span>
          ))}
        </p>
      )}
      {data.data && (
        <>
          <div class="toolbar scorer-tools">
            <input
              type="search"
              placeholder="Find a scorer"
              aria-label="Find a scorer"
              value={find}
              onInput={(e) => setFind(e.currentTarget.value)}
            />
            <nav class="tabs" aria-label="Show">
              {(Object.keys(SHOW_LABELS) as Show[]).map((k) => (
                <button
                  type="button"
                  key={k}
                  class={show === k ? 'tab active' : 'tab'}
                  aria-pressed={show === k}
                  onClick={() => setShow(k)}
                >
                  {SHOW_LABELS[k]}
                </button>
              ))}
            </nav>
          </div>
          <table class="grid scorers" aria-label="Scorers">
            <thead>
              <tr>
                <th scope="col">Enabled</th>
                <th scope="col">Scorer</th>
                <th scope="col">Kind</th>
                <th scope="col">Scores</th>
                <th scope="col" class="num">
                  Sample rate
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((s) => {
                const on = enabled.get(s.id);
                return (
                  <tr key={s.id} data-scorer={s.name} class={on ? 'on' : undefined}>
                    <td>
                      <input
                        type="checkbox"
                        aria-label={`Enable ${label(s)}`}
                        checked={optimistic?.id === s.id ? optimistic.on : !!on}
                        disabled={saving}
                        onChange={(e) => {
                          const want = e.currentTarget.checked;
                          setOptimistic({ id: s.id, on: want });
                          void save(toggled(inputs(), s.id, want), `${label(s)} ${want ? 'enabled' : 'disabled'}`);
                        }}
                      />
                    </td>
                    <td>
                      <span class="strong">{label(s)}</span> {label(s) !== s.name && <code class="muted">{s.name}</code>}
                      {metricOf(s) !== s.name && (
                        <span class="muted">
                          {' '}
                          writes <code>{metricOf(s)}</code>
                        </span>
                      )}
                      {s.description && (
                        <div class="muted desc" title={s.description}>
                          {s.description}
                        </div>
                      )}
                    </td>
                    <td class="nowrap">{kindLabel(s)}</td>
                    <td>
                      <span class="chips">
                        {nodeTypesOf(s).map((t) => (
                          <span class="chip" key={t}>
                            {t}
                          </span>
                        ))}
                      </span>
                    </td>
                    <td class="num">
                      {on ? (
                        <label class="rate">
                          <input
                            type="number"
                            min={1}
                            max={100}
                            step={1}
                            aria-label={`Sample rate of ${label(s)} (%)`}
                            value={String(percentOf(on.sample_rate))}
                            disabled={saving}
                            onChange={(e) => {
                              const pct = Number(e.currentTarget.value);
                              if (!Number.isFinite(pct) || pct <= 0 || pct > 100) {
                                setError(new Error('A sample rate is a percentage above 0 and at most 100'));
                                return;
                              }
                              void save(withSampleRate(inputs(), s.id, pct / 100), `${label(s)} samples ${pct}%`);
                            }}
                          />
                          %
                        </label>
                      ) : (
                        ''
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          {rows.length === 0 && <p class="empty-rows">No scorer matches.</p>}
        </>
      )}
    </main>
  );
}
