// One trace: the span tree with its timeline on the left, the selected span's detail on the right.
// The selected span and tab are in the URL (?span=&tab=), replaced rather than pushed as the
// selection moves, so Back leaves the trace.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { formatDuration, formatNumber, formatTime, isError, metricValue } from '../lib/format.js';
import { projectInfo, runKindOf } from '../lib/project-info.js';
import { navigate, useTitle } from '../lib/router.js';
import { runTable, type DetailTab, type Route } from '../lib/routes.js';
import { ancestorIds, buildTree, parentIds, visibleRows } from '../lib/span-tree.js';
import { fetchRecord, loadTrace, SPAN_CAP, toSpanLite, type TraceData } from '../lib/trace-data.js';
import type { RecordRow } from '../lib/types.js';
import { useAsync } from '../lib/use-async.js';
import { Breadcrumbs, CopyButton, ErrorNote, Loading, StatusBadge, type Crumb } from '../components/common.js';
import { SpanDetail } from '../components/span-detail.js';
import { SpanTreeView } from '../components/span-tree-view.js';

type TraceRoute = Extract<Route, { name: 'trace' }>;

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(t);
      reject(new DOMException('aborted', 'AbortError'));
    });
  });

/** The trace and its spans, updated as pages of spans arrive. */
function useTraceData(projectId: string, traceId: string): { data: TraceData | null; error: Error | null } {
  const [state, setState] = useState<{ data: TraceData | null; error: Error | null }>({ data: null, error: null });
  useEffect(() => {
    const ctl = new AbortController();
    setState({ data: null, error: null });
    loadTrace(projectId, traceId, ctl.signal, (data) => setState({ data, error: null })).catch((error: Error) => {
      if (!ctl.signal.aborted) setState((s) => ({ ...s, error }));
    });
    return () => ctl.abort();
  }, [projectId, traceId]);
  return state;
}

export function TracePage({ route }: { route: TraceRoute }) {
  const { projectId, traceId, spanId, tab } = route;
  const data = useTraceData(projectId, traceId);
  const project = useAsync(() => projectInfo(projectId), [projectId]);
  const trace = data.data?.trace ?? null;
  const tree = useMemo(() => (data.data ? buildTree(toSpanLite(data.data.trace), data.data.spans, data.data.done) : null), [data.data]);
  const [collapsed, setCollapsed] = useState<Set<string>>(() => new Set());
  const selectedId = spanId && tree?.byId.has(spanId) ? spanId : traceId;

  // A span named in the URL is shown even when an ancestor was collapsed.
  useEffect(() => {
    const node = tree?.byId.get(selectedId);
    if (!node) return;
    const hidden = ancestorIds(node).filter((id) => collapsed.has(id));
    if (hidden.length) setCollapsed((c) => new Set([...c].filter((id) => !hidden.includes(id))));
  }, [tree, selectedId]);

  const rows = useMemo(() => (tree ? visibleRows(tree.root, collapsed) : []), [tree, collapsed]);
  const records = useRef(new Map<string, RecordRow>());
  const detail = useAsync(
    async (signal) => {
      if (!trace) return null;
      if (selectedId === traceId) return trace;
      const cached = records.current.get(selectedId);
      if (cached) return cached;
      await sleep(60, signal); // holding an arrow key fetches only where it stops
      const r = await fetchRecord('spans', projectId, selectedId, signal);
      records.current.set(selectedId, r);
      return r;
    },
    [trace, selectedId],
  );

  useTitle(trace ? trace.name || 'Trace' : null);
  const select = (id: string) => navigate({ ...route, spanId: id === traceId ? null : id }, { replace: true });
  const setTab = (t: DetailTab) => navigate({ ...route, tab: t }, { replace: true });

  const run = trace && project.data?.runs?.find((r) => r.id === trace.run_id);
  const crumbs: Crumb[] = [
    { label: 'Projects', to: { name: 'projects', page: 1 } },
    { label: project.data?.name ?? '…', to: { name: 'project', projectId } },
  ];
  if (run) crumbs.push({ label: run.name, to: runTable(projectId, runKindOf(run), run.id) });
  crumbs.push({ label: trace?.name || 'Trace' });

  const duration = trace ? metricValue(trace, 'duration_ns').value : null;
  const span = tree ? (tree.end - tree.start) * 1e6 : null;
  const tokens = trace ? metricValue(trace, 'num_total_tokens').value : null;

  return (
    <main class="page wide trace-page">
      <Breadcrumbs items={crumbs} />
      <ErrorNote error={data.error} />
      {!trace && !data.error && <Loading what="the trace" />}
      {trace && tree && data.data && (
        <>
          <header class="trace-head">
            <h1>{trace.name || '(unnamed trace)'}</h1>
            <StatusBadge code={trace.status_code} error={isError(trace)} />
            <span class="muted">{formatTime(trace.created_at)}</span>
            <span>{formatDuration(duration ?? span)}</span>
            <span>
              {data.data.total.toLocaleString('en-US')} span{data.data.total === 1 ? '' : 's'}
            </span>
            {tokens !== null && <span>{formatNumber(tokens)} tokens</span>}
            <span class="grow" />
            <CopyButton text={trace.id} label="Copy trace id" visible="Copy trace ID" />
          </header>
          {!data.data.done && (
            <p class="banner" role="status">
              Loading spans: {(data.data.spans.length - tree.waiting).toLocaleString('en-US')} of{' '}
              {Math.min(data.data.total, SPAN_CAP).toLocaleString('en-US')}…
            </p>
          )}
          {data.data.done && data.data.total > data.data.spans.length && (
            <p class="banner" role="status">
              Showing the first {data.data.spans.length.toLocaleString('en-US')} of {data.data.total.toLocaleString('en-US')} spans (the
              viewer loads at most {SPAN_CAP.toLocaleString('en-US')}).
            </p>
          )}
          {tree.orphans > 0 && (
            <p class="banner" role="status">
              {tree.orphans} span{tree.orphans === 1 ? '' : 's'} whose parent is not in this trace {tree.orphans === 1 ? 'is' : 'are'} shown
              under the trace.
            </p>
          )}
          <div class="trace-layout">
            <section class="tree-pane" aria-label="Span tree">
              <div class="tree-toolbar">
                <button type="button" onClick={() => setCollapsed(new Set())}>
                  Expand all
                </button>
                <button type="button" onClick={() => setCollapsed(new Set([...parentIds(tree)].filter((id) => id !== traceId)))}>
                  Collapse all
                </button>
                <span class="grow" />
                <span class="muted">↑↓ move · ←→ fold · Home/End</span>
              </div>
              <div class="tree-header" aria-hidden="true">
                <span>Span</span>
                <span class="tree-duration">Duration</span>
                <span class="lane-axis">
                  <span>0</span>
                  <span>{formatDuration(span)}</span>
                </span>
              </div>
              <SpanTreeView
                busy={!data.data.done}
                tree={tree}
                rows={rows}
                selectedId={selectedId}
                collapsed={collapsed}
                onSelect={select}
                onCollapsed={setCollapsed}
              />
            </section>
            <div class={detail.loading ? 'detail-pane stale' : 'detail-pane'}>
              <ErrorNote error={detail.error} />
              {detail.data ? (
                <SpanDetail record={detail.data} projectId={projectId} traceStart={tree.start} tab={tab} onTab={setTab} />
              ) : (
                !detail.error && <Loading what="the span" />
              )}
            </div>
          </div>
        </>
      )}
    </main>
  );
}
