// One table cell, drawn by the column's type: previews of input and output, times, durations,
// metric values (roll-ups marked; a pending or failed scorer marked instead of a blank), status, tags. All text.
import { formatDuration, formatNumber, formatTime, isError, preview } from '../lib/format.js';
import { metricState, metricTitle } from '../lib/metric-status.js';
import { Link } from '../lib/router.js';
import type { Route } from '../lib/routes.js';
import type { ColumnInfo, RecordRow } from '../lib/types.js';
import { KindBadge, StatusBadge, Tags } from './common.js';
import { MetricStatusBadge } from './metric-status.js';

export function Cell({ id, column, record: r, to }: { id: string; column: ColumnInfo | undefined; record: RecordRow; to: Route }) {
  if (id === 'name') {
    return (
      <Link to={to} class="strong">
        {r.name || <span class="muted">(unnamed {r.type})</span>}
      </Link>
    );
  }
  if (id === 'type') return <KindBadge kind={r.type} />;
  if (id === 'status_code') return <StatusBadge code={r.status_code} error={isError(r)} />;
  if (id.startsWith('metrics/')) {
    const state = metricState(r, id.slice('metrics/'.length));
    if (state === null) return <span class="muted">–</span>;
    if (state.value === null) return <MetricStatusBadge state={state} />;
    const text = column?.data_unit === 'nano_seconds' ? formatDuration(state.value) : formatNumber(state.value);
    return (
      <span class={state.rollUp ? 'num rollup' : 'num'} title={metricTitle(state)}>
        {text}
      </span>
    );
  }
  const v = r[id];
  if (id === 'input' || id === 'output' || id === 'dataset_input' || id === 'dataset_output') {
    const text = preview(v);
    return (
      <span class="preview" title={text}>
        {text}
      </span>
    );
  }
  if (v === null || v === undefined || v === '') return <span class="muted">–</span>;
  switch (column?.data_type) {
    case 'timestamp':
      return <span class="nowrap">{formatTime(String(v))}</span>;
    case 'string_list':
      return <Tags tags={v} />;
    case 'boolean':
      return <span>{v ? 'yes' : 'no'}</span>;
    case 'uuid':
      return (
        <code class="id" title={String(v)}>
          {String(v).slice(0, 8)}
        </code>
      );
    case 'integer':
    case 'floating_point':
      return <span class="num">{formatNumber(v)}</span>;
    default:
      return (
        <span class="preview" title={preview(v, 2000)}>
          {preview(v)}
        </span>
      );
  }
}
