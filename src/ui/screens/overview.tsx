// A run at a glance: a time range (in the URL), then charts from the aggregate API — traces over
// time, latency percentiles, error rate, tokens and cost stacked by model, each scorer metric's
// average over time and its distribution. Clicking a bucket (or a model's part of a bar) opens the table
// filtered to it, the filter builder showing the filter.
import { useState } from 'preact/hooks';
import { api, runField } from '../lib/api.js';
import { formatDuration } from '../lib/format.js';
import {
  BUILT_IN_METRICS,
  binFilters,
  binsOf,
  bucketFilters,
  bucketTree,
  byModel,
  errorRate,
  errorsBody,
  histogramBody,
  metricsBody,
  modelsBody,
  rangeFilters,
  seriesOf,
  tracesBody,
  type AggAnswer,
  type Bin,
  type Series,
} from '../lib/overview.js';
import { projectInfo } from '../lib/project-info.js';
import { Link, navigate, useTitle } from '../lib/router.js';
import { DEFAULT_PAGE_SIZE, LAST_SPANS, runScorers, runTable, type Route, type TableLevel, type TimeRange } from '../lib/routes.js';
import { useAsync } from '../lib/use-async.js';
import { Breadcrumbs, ErrorNote, Loading } from '../components/common.js';
import { Chart } from '../components/chart.js';
import type { FilterTree } from '../lib/filters.js';

type OverviewRoute = Extract<Route, { name: 'overview' }>;

interface Loaded {
  interval: string;
  buckets: string[];
  traces: Series[];
  latency: Series[];
  errors: Series[];
  tokens: Series[];
  cost: Series[];
  /** The filters holding the charts' buckets (a distribution's bar opens its traces within them). */
  bounds: FilterTree[];
  metrics: { name: string; avg: Series[]; bins: Bin[]; counts: (number | null)[] }[];
}

const post = <T,>(path: string, body: unknown, signal: AbortSignal) => api<T>('POST', path, body, signal);

async function load(route: OverviewRoute, now: number, signal: AbortSignal): Promise<Loaded | null> {
  const pid = encodeURIComponent(route.projectId);
  const run = runField(route.runKind, route.runId);
  const range = rangeFilters(route.range, now);
  const first = await post<AggAnswer>(`/projects/${pid}/traces/aggregate`, tracesBody(run, range), signal);
  if (!first.interval || !first.rows.some((r) => Number(r['traces']) > 0)) return null;
  const interval = first.interval;
  const bounds = [...range, ...bucketFilters(first)];
  const { buckets, series } = seriesOf(first, ['traces', 'p50', 'p95', 'p99']);
  const columns = await post<{ columns: { id: string; category?: string }[] }>(`/projects/${pid}/traces/available_columns`, run, signal);
  const metricNames = columns.columns
    .filter((c) => c.id.startsWith('metrics/'))
    .map((c) => c.id.slice('metrics/'.length))
    .filter((m) => !BUILT_IN_METRICS.has(m))
    .slice(0, 8);
  const [errors, models, avg, spread] = await Promise.all([
    post<AggAnswer>(`/projects/${pid}/spans/aggregate`, errorsBody(run, bounds, interval), signal),
    post<AggAnswer>(`/projects/${pid}/spans/aggregate`, modelsBody(run, bounds, interval), signal),
    metricNames.length
      ? post<AggAnswer>(`/projects/${pid}/traces/aggregate`, metricsBody(run, bounds, interval, metricNames), signal)
      : null,
    metricNames.length ? post<AggAnswer>(`/projects/${pid}/traces/aggregate`, metricsBody(run, bounds, null, metricNames), signal) : null,
  ]);
  // Each metric's distribution: bars of equal width between its min and max over the range.
  const value = (op: string, m: string) => {
    const v = spread?.rows[0]?.[`${op}:${m}`];
    return typeof v === 'number' ? v : null;
  };
  const bins = metricNames.map((m) => {
    const min = value('min', m);
    const max = value('max', m);
    return min === null || max === null ? [] : binsOf(min, max);
  });
  const histograms = await Promise.all(
    metricNames.map((m, i) =>
      bins[i]!.length ? post<AggAnswer>(`/projects/${pid}/traces/aggregate`, histogramBody(run, bounds, m, bins[i]!), signal) : null,
    ),
  );
  return {
    interval,
    buckets,
    bounds,
    traces: [series[0]!],
    latency: series.slice(1),
    errors: [{ name: 'error %', values: errorRate(errors) }],
    tokens: byModel(models, buckets, ['input', 'output']),
    cost: byModel(models, buckets, ['cost']),
    metrics: metricNames.map((m, i) => ({
      name: m,
      avg: avg ? [{ name: `avg ${m}`, values: seriesOf(avg, [m]).series[0]!.values }] : [],
      bins: bins[i]!,
      counts: bins[i]!.map((_, k) => {
        const n = histograms[i]?.rows[0]?.[`b${k}`];
        return typeof n === 'number' ? n : null;
      }),
    })),
  };
}

const count = (v: number) => (Number.isInteger(v) ? v.toLocaleString('en-US') : v.toFixed(1));
const usd = (v: number) => (v === 0 ? '$0' : v < 0.01 ? `$${v.toPrecision(2)}` : `$${v.toFixed(2)}`);
const plain = (v: number) => (Math.abs(v) >= 100 ? v.toFixed(0) : v.toPrecision(3));
/** A bin's edge in at most 3 significant digits, without trailing zeros (0.2, not 0.200). */
const edge = (v: number) => String(Number(v.toPrecision(3)));

function bucketLabel(interval: string): (b: string) => string {
  return (b) => {
    const d = new Date(b);
    const iso = d.toISOString();
    return interval === '1d' ? iso.slice(5, 10) : `${interval === '1h' ? `${iso.slice(5, 10)} ` : ''}${iso.slice(11, 16)}`;
  };
}

/** One chart of the overview: what it draws, how its values read, and what a click on a bar opens. */
interface Card {
  title: string;
  kind: 'bars' | 'lines';
  series: Series[];
  format: (v: number) => string;
  onPick: (bucket: number, series: string | null) => void;
  /** Its own bars (a distribution's bins) instead of the time buckets every other chart shares. */
  bars?: { names: string[]; label: (name: string) => string };
}

const LLM: FilterTree = { filter: { type: 'text', column_id: 'type', operator: 'eq', value: 'llm' } };
const FAILED: FilterTree = { filter: { type: 'number', column_id: 'status_code', operator: 'gte', value: 400 } };

/** Where a click on a chart goes: a time bucket of a table (with filters), or any filter of one. */
interface Opens {
  bucket: (level: TableLevel, extra: FilterTree[]) => (i: number, series: string | null) => void;
  filter: (level: TableLevel, tree: FilterTree) => void;
}

/**
 * The overview's charts in order: traces, latency, errors, tokens and cost by model, then each
 * scorer metric's average over time and its distribution (a bar opens the traces within it).
 */
function cards(d: Loaded, open: Opens): Card[] {
  const pick = open.bucket;
  return [
    { title: 'Traces', kind: 'bars', series: d.traces, format: count, onPick: pick('traces', []) },
    { title: 'Latency', kind: 'lines', series: d.latency, format: (v) => formatDuration(v), onPick: pick('traces', []) },
    { title: 'Error rate', kind: 'lines', series: d.errors, format: (v) => `${plain(v)}%`, onPick: pick('spans', [FAILED]) },
    { title: 'Tokens by model', kind: 'bars', series: d.tokens, format: count, onPick: pick('spans', [LLM]) },
    { title: 'Cost by model', kind: 'bars', series: d.cost, format: usd, onPick: pick('spans', [LLM]) },
    ...d.metrics.flatMap((m): Card[] => {
      const average: Card = { title: `Average ${m.name}`, kind: 'lines', series: m.avg, format: plain, onPick: pick('traces', []) };
      if (m.bins.length === 0) return [average];
      const names = m.bins.map((b) => (b.lo === b.hi ? edge(b.lo) : `${edge(b.lo)}–${edge(b.hi)}`));
      return [
        average,
        {
          title: `Distribution of ${m.name}`,
          kind: 'bars',
          series: [{ name: 'traces', values: m.counts }],
          format: count,
          bars: { names, label: (n) => n },
          onPick: (i) => {
            const leaves = binFilters(m.name, m.bins[i]!).map((filter): FilterTree => ({ filter }));
            open.filter('traces', { and: [...d.bounds, ...leaves] });
          },
        },
      ];
    }),
  ];
}

/** A card of the chart grid: the chart (title, hover readout, CSV, SVG and PNG export) over the shared buckets or its own bars. */
function ChartCard({ card, buckets, label }: { card: Card; buckets: string[]; label: (b: string) => string }) {
  return (
    <Chart
      title={card.title}
      kind={card.kind}
      buckets={card.bars?.names ?? buckets}
      series={card.series}
      format={card.format}
      label={card.bars?.label ?? label}
      onPick={card.onPick}
    />
  );
}

function RangePicker({ route }: { route: OverviewRoute }) {
  const r = route.range;
  const [from, setFrom] = useState(r.kind === 'custom' ? r.from.slice(0, 16) : '');
  const [to, setTo] = useState(r.kind === 'custom' ? r.to.slice(0, 16) : '');
  const go = (range: TimeRange) => navigate({ ...route, range });
  const choices: [string, TimeRange][] = [
    ...LAST_SPANS.map((span): [string, TimeRange] => [`Last ${span}`, { kind: 'last', span }]),
    ['All time', { kind: 'all' }],
  ];
  return (
    <div class="range-picker">
      <nav class="tabs">
        {choices.map(([name, range]) => {
          const on = JSON.stringify(range) === JSON.stringify(r.kind === 'custom' ? null : r);
          return (
            <button type="button" key={name} class={on ? 'tab active' : 'tab'} aria-pressed={on} onClick={() => go(range)}>
              {name}
            </button>
          );
        })}
      </nav>
      <form
        class="range-picker"
        onSubmit={(e) => {
          e.preventDefault();
          if (from && to) go({ kind: 'custom', from: `${from}:00Z`, to: `${to}:00Z` });
        }}
      >
        <label>
          From (UTC) <input type="datetime-local" value={from} onInput={(e) => setFrom(e.currentTarget.value)} />
        </label>
        <label>
          to <input type="datetime-local" value={to} onInput={(e) => setTo(e.currentTarget.value)} />
        </label>
        <button type="submit">Apply</button>
      </form>
    </div>
  );
}

export function Overview({ route }: { route: OverviewRoute }) {
  const { projectId, runKind, runId } = route;
  const rangeKey = JSON.stringify(route.range);
  const meta = useAsync(() => projectInfo(projectId), [projectId]);
  // A "last hour" range ends when it is asked for: a new choice (or a reload) moves it.
  const data = useAsync((signal) => load(route, Date.now(), signal), [projectId, runId, rangeKey]);
  const runName = meta.data?.runs?.find((r) => r.id === runId)?.name;
  useTitle(runName ? `${runName} overview` : null);
  const d = data.data;
  const table = (level: TableLevel, filter: FilterTree) =>
    navigate({
      ...runTable(projectId, runKind, runId, level),
      query: { sort: null, cols: null, filter, page: 1, size: DEFAULT_PAGE_SIZE },
    } as Route);
  const open: Opens = {
    bucket: (level, extra) => (i, series) => {
      if (!d) return;
      const model =
        series && series !== '(no model)' ? [{ filter: { type: 'text', column_id: 'model', operator: 'eq', value: series } }] : [];
      table(level, bucketTree(d.buckets[i]!, d.interval, [...extra, ...model]));
    },
    filter: table,
  };
  const label = bucketLabel(d?.interval ?? '1h');
  const total = (s: Series[]) => s.reduce((a, x) => a + x.values.reduce<number>((b, v) => b + (v ?? 0), 0), 0);
  return (
    <main class="page wide">
      <Breadcrumbs
        items={[
          { label: 'Projects', to: { name: 'projects', page: 1 } },
          { label: meta.data?.name ?? '…', to: { name: 'project', projectId } },
          { label: runName ?? '…' },
        ]}
      />
      <div class="toolbar">
        <nav class="tabs" aria-label="Run views">
          <span class="tab active" aria-current="page">
            Overview
          </span>
          {(['traces', 'spans', 'sessions'] as const).map((l) => (
            <Link key={l} class="tab" to={runTable(projectId, runKind, runId, l)}>
              {l[0]!.toUpperCase() + l.slice(1)}
            </Link>
          ))}
          <Link class="tab" to={runScorers(projectId, runKind, runId)}>
            Scorers
          </Link>
        </nav>
        <span class="grow" />
        <RangePicker route={route} />
      </div>
      <ErrorNote error={data.error} />
      {data.loading && !d && <Loading what="charts" />}
      {!data.loading && !data.error && d === null && <p class="muted">No traces in this time range.</p>}
      {d && (
        <>
          <div class="summary" role="status">
            <div>
              <span class="muted">Traces</span>
              <b data-total="traces">{count(total(d.traces))}</b>
            </div>
            <div>
              <span class="muted">Tokens</span>
              <b data-total="tokens">{count(total(d.tokens))}</b>
            </div>
            <div>
              <span class="muted">Cost</span>
              <b data-total="cost">{usd(total(d.cost))}</b>
            </div>
            <div>
              <span class="muted">Buckets</span>
              <b>{d.interval}</b>
            </div>
          </div>
          <div class="charts">
            {cards(d, open).map((c) => (
              <ChartCard key={c.title} card={c} buckets={d.buckets} label={label} />
            ))}
          </div>
        </>
      )}
    </main>
  );
}
