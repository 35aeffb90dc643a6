// A metric without a value, as a small marker: pending, failed (its message on hover), not applicable,
// not computed here. Text only, like every other piece of record content.
import { metricTitle, STATUS_WORDS, type MetricState } from '../lib/metric-status.js';

export function MetricStatusBadge({ state }: { state: MetricState }) {
  return (
    <span class={`mstatus mstatus-${state.status}`} title={metricTitle(state)} data-status={state.status}>
      {STATUS_WORDS[state.status]}
    </span>
  );
}
