// One project: its log streams and experiments with their trace and span counts.
import { api, runField } from '../lib/api.js';
import { formatTime } from '../lib/format.js';
import { projectInfo } from '../lib/project-info.js';
import { useState } from 'preact/hooks';
import { Link, navigate, useTitle } from '../lib/router.js';
import { runOverview, runScorers, runTable, type RunKind, type RunRef } from '../lib/routes.js';
import { useAsync } from '../lib/use-async.js';
import { Breadcrumbs, ErrorNote, Loading } from '../components/common.js';

interface RunRow {
  id: string;
  name: string;
  kind: RunKind;
  created_at: string;
  traces: number | null;
  spans: number | null;
}

async function loadRuns(projectId: string, signal: AbortSignal): Promise<{ name: string; runs: RunRow[] }> {
  const project = await projectInfo(projectId);
  const pid = encodeURIComponent(projectId);
  const streams = await api<{ log_streams: { id: string; num_spans?: number | null; num_traces?: number | null }[] }>(
    'POST',
    `/projects/${pid}/log_streams/search`,
    { include_counts: true, limit: 1000 },
    signal,
  );
  const counts = new Map(streams.log_streams.map((s) => [s.id, s]));
  const runs: RunRow[] = [];
  for (const r of project.runs ?? []) {
    if (r.kind === 'log_stream') {
      const c = counts.get(r.id);
      runs.push({
        id: r.id,
        name: r.name,
        kind: 'ls',
        created_at: r.created_at,
        traces: c?.num_traces ?? null,
        spans: c?.num_spans ?? null,
      });
    } else if (r.kind === 'experiment') {
      runs.push({ id: r.id, name: r.name, kind: 'exp', created_at: r.created_at, traces: null, spans: null });
    }
  }
  await Promise.all(
    runs
      .filter((r) => r.kind === 'exp')
      .map(async (r) => {
        const body = runField('exp', r.id);
        const [t, s] = await Promise.all([
          api<{ total_count: number }>('POST', `/projects/${pid}/traces/count`, body, signal),
          api<{ total_count: number }>('POST', `/projects/${pid}/spans/count`, body, signal),
        ]);
        r.traces = t.total_count;
        r.spans = s.total_count;
      }),
  );
  return { name: project.name, runs };
}

export function Project({ projectId }: { projectId: string }) {
  const { data, error, loading } = useAsync((signal) => loadRuns(projectId, signal), [projectId]);
  useTitle(data?.name);
  const [picked, setPicked] = useState<RunRef[]>([]);
  const toggle = (r: RunRef, on: boolean) =>
    setPicked((p) => (on ? [...p.filter((x) => x.id !== r.id), r] : p.filter((x) => x.id !== r.id)));
  const section = (kind: RunKind, title: string) => {
    const runs = (data?.runs ?? []).filter((r) => r.kind === kind);
    return (
      <section>
        <h2>{title}</h2>
        {runs.length === 0 ? (
          <p class="muted">None.</p>
        ) : (
          <table class="grid runs">
            <thead>
              <tr>
                <th scope="col">
                  <span class="offscreen">Compare</span>
                </th>
                <th scope="col">Name</th>
                <th scope="col" class="num">
                  Traces
                </th>
                <th scope="col" class="num">
                  Spans
                </th>
                <th scope="col">Open</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {runs.map((r) => (
                <tr key={r.id}>
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`Compare ${r.name}`}
                      checked={picked.some((x) => x.id === r.id)}
                      onChange={(e) => toggle({ kind: r.kind, id: r.id }, e.currentTarget.checked)}
                    />
                  </td>
                  <td>
                    <Link class="strong" to={runTable(projectId, r.kind, r.id)}>
                      {r.name}
                    </Link>
                  </td>
                  <td class="num">{r.traces?.toLocaleString('en-US') ?? ''}</td>
                  <td class="num">{r.spans?.toLocaleString('en-US') ?? ''}</td>
                  <td class="chips">
                    <Link class="chip" to={runOverview(projectId, r.kind, r.id)}>
                      overview
                    </Link>
                    <Link class="chip" to={runTable(projectId, r.kind, r.id, 'traces')}>
                      traces
                    </Link>
                    <Link class="chip" to={runTable(projectId, r.kind, r.id, 'spans')}>
                      spans
                    </Link>
                    <Link class="chip" to={runTable(projectId, r.kind, r.id, 'sessions')}>
                      sessions
                    </Link>
                    <Link class="chip" to={runScorers(projectId, r.kind, r.id)}>
                      scorers
                    </Link>
                  </td>
                  <td class="nowrap">{formatTime(r.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    );
  };
  return (
    <main class="page">
      <Breadcrumbs items={[{ label: 'Projects', to: { name: 'projects', page: 1 } }, { label: data?.name ?? '…' }]} />
      <div class="toolbar">
        <h1>{data?.name ?? 'Project'}</h1>
        <span class="grow" />
        <button
          type="button"
          disabled={picked.length < 2}
          onClick={() => navigate({ name: 'compare', projectId, runs: picked })}
          title="Tick two or more runs to compare them"
        >
          Compare {picked.length >= 2 ? `${picked.length} runs` : 'runs'}
        </button>
      </div>
      <ErrorNote error={error} />
      {loading && !data && <Loading what="runs" />}
      {data && section('ls', 'Log streams')}
      {data && section('exp', 'Experiments')}
    </main>
  );
}
