// Runs side by side: a table of each run's traces, latency p50/p95, error rate, tokens, cost and
// scorer metric averages, each difference from the first run marked (red where a measure that is
// worse when higher grew), and a bar chart per measure. The table downloads as CSV.
import { api, runField } from '../lib/api.js';
import { change, FIXED_MEASURES, metricMeasure, runValues, spansBody, tracesBody, type Measure } from '../lib/compare.js';
import { formatDuration, formatNumber } from '../lib/format.js';
import { BUILT_IN_METRICS, toCsv, type AggAnswer } from '../lib/overview.js';
import { projectInfo } from '../lib/project-info.js';
import { Link, useTitle } from '../lib/router.js';
import { runOverview, type Route, type RunRef } from '../lib/routes.js';
import { useAsync } from '../lib/use-async.js';
import { Breadcrumbs, ErrorNote, Loading } from '../components/common.js';
import { PALETTE } from '../components/chart.js';

type CompareRoute = Extract<Route, { name: 'compare' }>;

interface RunColumn extends RunRef {
  name: string;
  values: Record<string, number | null>;
}

async function load(route: CompareRoute, signal: AbortSignal): Promise<{ project: string; runs: RunColumn[]; measures: Measure[] }> {
  const pid = encodeURIComponent(route.projectId);
  const project = await projectInfo(route.projectId);
  const metricSets = await Promise.all(
    route.runs.map((r) =>
      api<{ columns: { id: string }[] }>('POST', `/projects/${pid}/traces/available_columns`, runField(r.kind, r.id), signal),
    ),
  );
  const metrics = [
    ...new Set(
      metricSets.flatMap((s) => s.columns.map((c) => c.id).filter((id) => id.startsWith('metrics/') && !BUILT_IN_METRICS.has(id.slice(8)))),
    ),
  ]
    .map((id) => id.slice(8))
    .sort()
    .slice(0, 12);
  const runs = await Promise.all(
    route.runs.map(async (r): Promise<RunColumn> => {
      const run = runField(r.kind, r.id);
      const [t, s] = await Promise.all([
        api<AggAnswer>('POST', `/projects/${pid}/traces/aggregate`, tracesBody(run, metrics), signal),
        api<AggAnswer>('POST', `/projects/${pid}/spans/aggregate`, spansBody(run), signal),
      ]);
      const name = project.runs?.find((x) => x.id === r.id)?.name ?? r.id;
      return { ...r, name, values: runValues(t, s, metrics) };
    }),
  );
  return { project: project.name, runs, measures: [...FIXED_MEASURES, ...metrics.map(metricMeasure)] };
}

function show(m: Measure, v: number | null): string {
  if (v === null) return '–';
  if (m.unit === 'ns') return formatDuration(v);
  if (m.unit === 'percent') return `${formatNumber(v)}%`;
  if (m.unit === 'usd') return `$${formatNumber(v)}`;
  return formatNumber(v);
}

function Diff({ m, base, value }: { m: Measure; base: number | null; value: number | null }) {
  const c = change(base, value);
  if (c === null || Math.abs(c) < 0.005) return null;
  const worse = m.higherIsWorse === null ? null : m.higherIsWorse === c > 0;
  return (
    <span class={`diff ${worse === null ? 'neutral' : worse ? 'worse' : 'better'}`} data-diff={m.key}>
      {c > 0 ? '▲' : '▼'} {formatNumber(Math.round(Math.abs(c) * 1000) / 10)}%
    </span>
  );
}

/** One horizontal bar per run, scaled to the largest. */
function Bars({ m, runs }: { m: Measure; runs: RunColumn[] }) {
  const max = Math.max(0, ...runs.map((r) => r.values[m.key] ?? 0)) || 1;
  const row = 22;
  return (
    <figure class="chart compare-bars" data-chart={m.label}>
      <figcaption>
        <span class="chart-title">{m.label}</span>
      </figcaption>
      <svg viewBox={`0 0 400 ${row * runs.length + 4}`} role="img" aria-label={m.label} xmlns="http://www.w3.org/2000/svg">
        {runs.map((r, i) => {
          const v = r.values[m.key];
          return (
            <g key={r.id}>
              <text x="0" y={i * row + 15} class="chart-axis">
                {r.name.length > 16 ? `${r.name.slice(0, 15)}…` : r.name}
              </text>
              <rect x="110" y={i * row + 3} height={row - 8} width={v ? (v / max) * 200 : 0} fill={PALETTE[i % PALETTE.length]} />
              <text x={v ? 116 + (v / max) * 200 : 114} y={i * row + 15} class="chart-axis">
                {show(m, v ?? null)}
              </text>
            </g>
          );
        })}
      </svg>
    </figure>
  );
}

export function Compare({ route }: { route: CompareRoute }) {
  const key = route.runs.map((r) => r.id).join(',');
  const data = useAsync((signal) => load(route, signal), [route.projectId, key]);
  const d = data.data;
  useTitle(d ? `${d.runs.map((r) => r.name).join(' vs ')}` : null);
  const csv = () => {
    if (!d) return;
    const text = toCsv(
      d.measures.map((m) => m.label),
      d.runs.map((r) => ({ name: r.name, values: d.measures.map((m) => r.values[m.key] ?? null) })),
    );
    const a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([text], { type: 'text/csv' }));
    a.download = 'runs-compared.csv';
    a.click();
  };
  return (
    <main class="page wide">
      <Breadcrumbs
        items={[
          { label: 'Projects', to: { name: 'projects', page: 1 } },
          { label: d?.project ?? '…', to: { name: 'project', projectId: route.projectId } },
          { label: 'Runs compared' },
        ]}
      />
      <h1>Runs compared</h1>
      {route.runs.length < 2 && <p class="muted">Pick two or more runs on the project page to compare them.</p>}
      <ErrorNote error={data.error} />
      {data.loading && !d && <Loading what="runs" />}
      {d && (
        <>
          <div class="toolbar">
            <span class="muted">Differences are from the first run; red where latency, errors, tokens or cost grew.</span>
            <span class="grow" />
            <button type="button" class="small" onClick={csv}>
              CSV
            </button>
          </div>
          <table class="grid compare">
            <thead>
              <tr>
                <th scope="col">Measure</th>
                {d.runs.map((r) => (
                  <th scope="col" class="num" key={r.id}>
                    <Link to={runOverview(route.projectId, r.kind, r.id)}>{r.name}</Link>
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {d.measures.map((m) => (
                <tr key={m.key} data-measure={m.key}>
                  <th scope="row">{m.label}</th>
                  {d.runs.map((r, i) => (
                    <td class="num" key={r.id}>
                      <span class="value">{show(m, r.values[m.key] ?? null)}</span>
                      {i > 0 && <Diff m={m} base={d.runs[0]!.values[m.key] ?? null} value={r.values[m.key] ?? null} />}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
          <div class="charts compare-charts">
            {d.measures.map((m) => (
              <Bars key={m.key} m={m} runs={d.runs} />
            ))}
          </div>
        </>
      )}
    </main>
  );
}
