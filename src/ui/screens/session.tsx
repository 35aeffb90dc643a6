// One session: its traces oldest first, read as a conversation (each trace's input, then its
// output), each linking to its trace. Loads 100 traces at a time.
import { useEffect, useState } from 'preact/hooks';
import { api, idFilter } from '../lib/api.js';
import { formatDuration, formatNumber, formatTime, isError, metricValue } from '../lib/format.js';
import { projectInfo, runKindOf } from '../lib/project-info.js';
import { Link, useTitle } from '../lib/router.js';
import { runTable, type Route } from '../lib/routes.js';
import { fetchRecord } from '../lib/trace-data.js';
import type { RecordRow, SearchPage } from '../lib/types.js';
import { useAsync } from '../lib/use-async.js';
import { Breadcrumbs, ErrorNote, Loading, StatusBadge, type Crumb } from '../components/common.js';
import { ValueView } from '../components/record-content.js';

type SessionRoute = Extract<Route, { name: 'session' }>;
const PAGE = 100;

export function SessionPage({ route }: { route: SessionRoute }) {
  const { projectId, sessionId } = route;
  const session = useAsync((signal) => fetchRecord('sessions', projectId, sessionId, signal), [projectId, sessionId]);
  const project = useAsync(() => projectInfo(projectId), [projectId]);
  const [traces, setTraces] = useState<RecordRow[]>([]);
  const [next, setNext] = useState<number | null>(0);
  const [error, setError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  const more = async (from: number, reset = false) => {
    setBusy(true);
    try {
      const page = await api<SearchPage>('POST', `/projects/${encodeURIComponent(projectId)}/traces/partial_search`, {
        filters: [idFilter('session_id', sessionId)],
        sort: { column_id: 'created_at', ascending: true, sort_type: 'column' },
        pagination: { starting_token: from, limit: PAGE },
        select_columns: {
          column_ids: [
            'name',
            'input',
            'output',
            'created_at',
            'status_code',
            'error_message',
            'metrics/duration_ns',
            'metrics/num_total_tokens',
          ],
        },
      });
      setTraces((t) => (reset ? page.records : [...t, ...page.records]));
      setNext(page.next_starting_token);
    } catch (e) {
      setError(e as Error);
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => {
    setTraces([]);
    void more(0, true);
  }, [projectId, sessionId]);

  const s = session.data;
  useTitle(s ? s.name || 'Session' : null);
  const run = s && project.data?.runs?.find((r) => r.id === s.run_id);
  const crumbs: Crumb[] = [
    { label: 'Projects', to: { name: 'projects', page: 1 } },
    { label: project.data?.name ?? '…', to: { name: 'project', projectId } },
  ];
  if (run) crumbs.push({ label: run.name, to: runTable(projectId, runKindOf(run), run.id, 'sessions') });
  crumbs.push({ label: s?.name || 'Session' });

  return (
    <main class="page session-page">
      <Breadcrumbs items={crumbs} />
      <h1>{s?.name || 'Session'}</h1>
      {s && (
        <p class="muted">
          Started {formatTime(s.created_at)} · <code class="id">{s.id}</code>
        </p>
      )}
      <ErrorNote error={session.error ?? error} />
      {busy && traces.length === 0 && <Loading what="the session's traces" />}
      <ol class="turns" aria-label="Traces in this session">
        {traces.map((t, i) => {
          const d = metricValue(t, 'duration_ns').value;
          const tok = metricValue(t, 'num_total_tokens').value;
          return (
            <li class="turn" key={t.id}>
              <div class="turn-head">
                <span class="turn-no">{i + 1}</span>
                <Link class="strong" to={{ name: 'trace', projectId, traceId: t.id, spanId: null, tab: 'overview' }}>
                  {t.name || '(unnamed trace)'}
                </Link>
                <StatusBadge code={t.status_code} error={isError(t)} />
                <span class="grow" />
                <span class="muted">
                  {formatTime(t.created_at)}
                  {d !== null ? ` · ${formatDuration(d)}` : ''}
                  {tok !== null ? ` · ${formatNumber(tok)} tokens` : ''}
                </span>
              </div>
              <div class="bubble user">
                <ValueView value={t.input} label="input" />
              </div>
              <div class="bubble assistant">
                <ValueView value={t.output} label="output" />
              </div>
            </li>
          );
        })}
      </ol>
      {next !== null && traces.length > 0 && (
        <button type="button" disabled={busy} onClick={() => void more(next)}>
          Load more traces
        </button>
      )}
      {!busy && traces.length === 0 && !error && <p class="muted">This session has no traces.</p>}
    </main>
  );
}
