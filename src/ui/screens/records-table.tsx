// A run's traces, spans or sessions as a table paged on the server: the columns the user picked,
// sorting by any sortable header, a filter_tree from the builder, the total count, and pages. All
// of it lives in the URL.
import { useMemo, useState } from 'preact/hooks';
import { api, runField } from '../lib/api.js';
import { countConditions, describeFilter } from '../lib/filters.js';
import { projectInfo } from '../lib/project-info.js';
import { Link, navigate, useTitle } from '../lib/router.js';
import { PAGE_SIZES, runOverview, runScorers, type Route, type TableLevel, type TableQuery } from '../lib/routes.js';
import { columnLabel, firstSortAscending, selectedColumnIds, visibleColumns } from '../lib/table-columns.js';
import type { ColumnInfo, RecordRow, SearchPage } from '../lib/types.js';
import { useAsync } from '../lib/use-async.js';
import { Breadcrumbs, ErrorNote, Loading } from '../components/common.js';
import { ColumnPicker } from '../components/column-picker.js';
import { FilterBuilder } from '../components/filter-builder.js';
import { Cell } from '../components/cells.js';
import { ScorePanel } from '../components/score-panel.js';

type TableRoute = Extract<Route, { name: 'table' }>;

const columnCache = new Map<string, Promise<ColumnInfo[]>>();

function availableColumns(r: TableRoute): Promise<ColumnInfo[]> {
  const key = `${r.projectId}/${r.runId}/${r.level}`;
  let p = columnCache.get(key);
  if (!p) {
    p = api<{ columns: ColumnInfo[] }>(
      'POST',
      `/projects/${encodeURIComponent(r.projectId)}/${r.level}/available_columns`,
      runField(r.runKind, r.runId),
    ).then((b) => b.columns);
    p.catch(() => columnCache.delete(key));
    columnCache.set(key, p);
  }
  return p;
}

/** Drops a run's cached columns: scoring may have added metric columns. */
function forgetColumns(r: TableRoute): void {
  for (const key of columnCache.keys()) if (key.startsWith(`${r.projectId}/${r.runId}/`)) columnCache.delete(key);
}

const NOUN: Record<TableLevel, [string, string]> = {
  traces: ['trace', 'traces'],
  spans: ['span', 'spans'],
  sessions: ['session', 'sessions'],
};

/** Where a row leads: its trace (with the span selected) or its session. */
export function rowTarget(level: TableLevel, projectId: string, r: RecordRow): Route {
  if (level === 'sessions') return { name: 'session', projectId, sessionId: r.id };
  if (level === 'spans') return { name: 'trace', projectId, traceId: String(r.trace_id), spanId: r.id, tab: 'overview' };
  return { name: 'trace', projectId, traceId: r.id, spanId: null, tab: 'overview' };
}

export function RecordsTable({ route }: { route: TableRoute }) {
  const { projectId, runKind, runId, level, query } = route;
  const [panel, setPanel] = useState<'filter' | 'columns' | 'score' | null>(null);
  // Bumped when a scoring job finishes: the table, its count and its columns load again.
  const [reload, setReload] = useState(0);
  const go = (q: Partial<TableQuery>, replace = false) => navigate({ ...route, query: { ...query, ...q } }, { replace });
  const filterKey = JSON.stringify(query.filter);
  const pid = encodeURIComponent(projectId);
  const scope = runField(runKind, runId);

  const meta = useAsync(async () => {
    const [columns, project] = await Promise.all([availableColumns(route), projectInfo(projectId)]);
    return { columns, project, run: project.runs?.find((r) => r.id === runId) };
  }, [projectId, runId, level, reload]);
  const columns = meta.data?.columns ?? null;
  const byId = useMemo(() => new Map((columns ?? []).map((c) => [c.id, c])), [columns]);
  const visible = columns ? visibleColumns(level, query.cols, columns) : [];

  const rows = useAsync(
    async (signal) => {
      if (!columns) return null;
      return api<SearchPage>(
        'POST',
        `/projects/${pid}/${level}/partial_search`,
        {
          ...scope,
          ...(query.filter ? { filter_tree: query.filter } : {}),
          ...(query.sort ? { sort: { column_id: query.sort.column, ascending: query.sort.ascending, sort_type: 'column' } } : {}),
          pagination: { starting_token: (query.page - 1) * query.size, limit: query.size },
          select_columns: { column_ids: selectedColumnIds(visible, columns) },
          truncate_fields: true,
        },
        signal,
      );
    },
    [columns, level, filterKey, query.sort?.column, query.sort?.ascending, query.page, query.size, visible.join(','), reload],
  );
  const count = useAsync(
    (signal) =>
      api<{ total_count: number }>(
        'POST',
        `/projects/${pid}/${level}/count`,
        { ...scope, ...(query.filter ? { filter_tree: query.filter } : {}) },
        signal,
      ),
    [projectId, runId, level, filterKey, reload],
  );

  useTitle(meta.data ? `${meta.data.run?.name ?? ''} ${level}` : null);
  const sortColumn = query.sort?.column ?? 'created_at';
  const sortAscending = query.sort ? query.sort.ascending : false;
  const onSort = (id: string) => {
    const ascending = sortColumn === id ? !sortAscending : firstSortAscending(byId.get(id));
    go({ sort: { column: id, ascending }, page: 1 });
  };
  const total = count.data?.total_count ?? null;
  const first = (query.page - 1) * query.size;
  const records = rows.data?.records ?? [];
  const [one, many] = NOUN[level];
  const conditions = countConditions(query.filter);

  return (
    <main class="page wide">
      <Breadcrumbs
        items={[
          { label: 'Projects', to: { name: 'projects', page: 1 } },
          { label: meta.data?.project.name ?? '…', to: { name: 'project', projectId } },
          { label: meta.data?.run?.name ?? '…' },
        ]}
      />
      <div class="toolbar">
        <nav class="tabs" aria-label="Record level">
          <Link class="tab" to={runOverview(projectId, runKind, runId)}>
            Overview
          </Link>
          {(['traces', 'spans', 'sessions'] as const).map((l) => (
            <Link
              key={l}
              to={{ ...route, level: l, query: { sort: null, cols: null, filter: null, page: 1, size: query.size } }}
              class={l === level ? 'tab active' : 'tab'}
              aria-current={l === level ? 'page' : undefined}
            >
              {l[0]!.toUpperCase() + l.slice(1)}
            </Link>
          ))}
          <Link class="tab" to={runScorers(projectId, runKind, runId)}>
            Scorers
          </Link>
        </nav>
        <span class="count" role="status" aria-live="polite">
          {total === null ? '' : `${total.toLocaleString('en-US')} ${total === 1 ? one : many}`}
        </span>
        <span class="grow" />
        <button type="button" aria-expanded={panel === 'filter'} onClick={() => setPanel(panel === 'filter' ? null : 'filter')}>
          Filter{conditions ? ` (${conditions})` : ''}
        </button>
        <button type="button" aria-expanded={panel === 'score'} onClick={() => setPanel(panel === 'score' ? null : 'score')}>
          Score these
        </button>
        <button type="button" aria-expanded={panel === 'columns'} onClick={() => setPanel(panel === 'columns' ? null : 'columns')}>
          Columns
        </button>
      </div>
      {panel === 'filter' && columns && (
        <FilterBuilder
          key={filterKey}
          columns={columns}
          tree={query.filter}
          onApply={(tree) => {
            setPanel(null);
            go({ filter: tree, page: 1 });
          }}
          onClose={() => setPanel(null)}
        />
      )}
      {panel === 'columns' && columns && (
        <ColumnPicker columns={columns} visible={visible} onChange={(cols) => go({ cols }, true)} onClose={() => setPanel(null)} />
      )}
      {panel === 'score' && (
        <ScorePanel
          projectId={projectId}
          runKind={runKind}
          runId={runId}
          filter={query.filter}
          level={level}
          counted={total === null ? `the ${many}` : `${total.toLocaleString('en-US')} ${total === 1 ? one : many}`}
          onClose={() => setPanel(null)}
          onDone={(metrics) => {
            forgetColumns(route);
            const add = metrics.map((m) => `metrics/${m}`).filter((id) => !visible.includes(id));
            if (add.length > 0) go({ cols: [...visible, ...add] }, true);
            setReload((n) => n + 1);
          }}
        />
      )}
      {conditions > 0 && (
        <p class="filter-summary">
          <span class="muted">Filter:</span> <span class="expr">{describeFilter(query.filter, byId)}</span>{' '}
          <button type="button" class="link" onClick={() => go({ filter: null, page: 1 })}>
            clear
          </button>
        </p>
      )}
      <ErrorNote error={meta.error ?? rows.error ?? count.error} />
      {!rows.data && !rows.error && <Loading what={many} />}
      {rows.data && (
        <div class={`table-wrap${rows.loading ? ' stale' : ''}`}>
          <table class="grid records" aria-label={many} aria-busy={rows.loading}>
            <thead>
              <tr>
                {visible.map((id) => {
                  const c = byId.get(id);
                  const sorted = sortColumn === id;
                  const aria = sorted ? (sortAscending ? 'ascending' : 'descending') : 'none';
                  return (
                    <th key={id} scope="col" aria-sort={c?.sortable ? aria : undefined} class={`col-${id.replace(/[^a-z_]/gi, '-')}`}>
                      {c?.sortable ? (
                        <button type="button" class="sort" onClick={() => onSort(id)}>
                          {columnLabel(c, id)}
                          <span class="arrow" aria-hidden="true">
                            {sorted ? (sortAscending ? '▲' : '▼') : ''}
                          </span>
                        </button>
                      ) : (
                        columnLabel(c, id)
                      )}
                    </th>
                  );
                })}
              </tr>
            </thead>
            <tbody>
              {records.map((r) => {
                const to = rowTarget(level, projectId, r);
                return (
                  <tr key={r.id} class="clickable" onClick={(e) => !(e.target as HTMLElement).closest('a,button') && navigate(to)}>
                    {visible.map((id) => (
                      <td key={id} class={`col-${id.replace(/[^a-z_]/gi, '-')}`}>
                        <Cell id={id} column={byId.get(id)} record={r} to={to} />
                      </td>
                    ))}
                  </tr>
                );
              })}
            </tbody>
          </table>
          {records.length === 0 && (
            <p class="empty-rows">
              No {many} match{conditions ? ' this filter' : ''}.
            </p>
          )}
        </div>
      )}
      <div class="pager">
        <label>
          Rows per page{' '}
          <select value={String(query.size)} onChange={(e) => go({ size: Number(e.currentTarget.value), page: 1 })}>
            {PAGE_SIZES.map((s) => (
              <option key={s} value={String(s)}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <span class="range">
          {records.length
            ? `${(first + 1).toLocaleString('en-US')}–${(first + records.length).toLocaleString('en-US')}` +
              `${total !== null ? ` of ${total.toLocaleString('en-US')}` : ''}`
            : ''}
        </span>
        <button type="button" disabled={query.page <= 1} onClick={() => go({ page: query.page - 1 })}>
          Previous page
        </button>
        <button type="button" disabled={!rows.data || rows.data.next_starting_token === null} onClick={() => go({ page: query.page + 1 })}>
          Next page
        </button>
      </div>
    </main>
  );
}
