// The selected span (or the trace itself): its facts and ids, then tabs for its content (an llm's
// conversation, a tool's input and output, a retriever's documents), its metrics with roll-ups,
// its metadata, and the raw JSON record.
import type { ComponentChildren } from 'preact';
import { asMessages, formatDuration, formatNumber, formatTime, isError, metricValue } from '../lib/format.js';
import { metricSource, metricState, STATUS_MEANING } from '../lib/metric-status.js';
import { Link } from '../lib/router.js';
import { TABS, type DetailTab } from '../lib/routes.js';
import type { RecordRow } from '../lib/types.js';
import { CopyButton, KindBadge, StatusBadge, Tags, TextBlock } from './common.js';
import { MetricStatusBadge } from './metric-status.js';
import { Conversation, KeyValues, ValueView } from './record-content.js';

const TAB_LABELS: Record<DetailTab, string> = { overview: 'Content', metrics: 'Metrics', metadata: 'Metadata', raw: 'Raw JSON' };

interface Props {
  record: RecordRow;
  projectId: string;
  traceStart: number;
  tab: DetailTab;
  onTab: (tab: DetailTab) => void;
}

function Fact({ label, children, wide }: { label: string; children: ComponentChildren; wide?: boolean }) {
  return (
    <div class={wide ? 'fact wide' : 'fact'}>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

function IdFact({ label, id }: { label: string; id: string | null | undefined }) {
  if (!id) return null;
  return (
    <Fact label={label} wide>
      <code class="id">{id}</code> <CopyButton text={id} label={`Copy ${label.toLowerCase()}`} />
    </Fact>
  );
}

function Content({ r }: { r: RecordRow }) {
  if (r.type === 'llm') {
    const input = asMessages(r.input);
    const output = asMessages(r.output);
    const tools = Array.isArray(r['tools']) ? (r['tools'] as unknown[]) : [];
    return (
      <>
        <h3>Conversation</h3>
        {input || output ? <Conversation messages={input ?? []} response={output} /> : <ValueView value={r.input} label="input" />}
        {!output && r.output !== undefined && r.output !== null && (
          <>
            <h3>Output</h3>
            <ValueView value={r.output} label="output" />
          </>
        )}
        {tools.length > 0 && (
          <details>
            <summary>Tools offered ({tools.length})</summary>
            <TextBlock text={JSON.stringify(tools, null, 2)} label="tools" />
          </details>
        )}
      </>
    );
  }
  const [inLabel, outLabel] = r.type === 'retriever' ? ['Query', 'Documents'] : ['Input', 'Output'];
  return (
    <>
      <h3>{inLabel}</h3>
      <ValueView value={r.input} label={inLabel.toLowerCase()} />
      <h3>{outLabel}</h3>
      <ValueView value={r.output} label={outLabel.toLowerCase()} />
    </>
  );
}

function Metrics({ r }: { r: RecordRow }) {
  const names = [...new Set([...Object.keys(r.metrics ?? {}), ...Object.keys(r.metric_info ?? {})])].sort();
  if (names.length === 0) return <p class="muted">No metrics.</p>;
  return (
    <table class="kv metrics">
      <thead>
        <tr>
          <th scope="col">Metric</th>
          <th scope="col" class="num">
            Value
          </th>
          <th scope="col">Source</th>
        </tr>
      </thead>
      <tbody>
        {names.map((n) => {
          const state = metricState(r, n);
          const value = state?.value ?? null;
          const raw = r.metrics?.[n] ?? r.metric_info?.[n]?.value;
          const note = state?.message ?? state?.explanation ?? null;
          return (
            <tr key={n} data-metric={n} data-status={state?.status}>
              <th scope="row">{n}</th>
              <td class="num" title={value === null ? undefined : String(value)}>
                {value !== null ? (
                  n.endsWith('_ns') ? (
                    formatDuration(value)
                  ) : (
                    formatNumber(value)
                  )
                ) : raw !== undefined && raw !== null ? (
                  String(raw)
                ) : state ? (
                  <MetricStatusBadge state={state} />
                ) : (
                  ''
                )}
              </td>
              <td class="muted">
                {state && value !== null ? metricSource(state) : state ? STATUS_MEANING[state.status] : ''}
                {note && (
                  <details class="metric-note" open={state?.status !== 'success'}>
                    <summary>{state?.message ? 'Why' : 'Explanation'}</summary>
                    <p class="note-text">{note}</p>
                  </details>
                )}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

const SKIP = new Set([
  'input',
  'output',
  'metrics',
  'metric_info',
  'user_metadata',
  'dataset_metadata',
  'tags',
  'spans',
  'traces',
  'tools',
]);

function Metadata({ r }: { r: RecordRow }) {
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(r)) {
    if (SKIP.has(k) || v === null || v === undefined || v === '') continue;
    if (typeof v === 'object' && Object.keys(v as object).length === 0) continue;
    fields[k] = v;
  }
  return (
    <>
      <h3>User metadata</h3>
      <KeyValues values={(r['user_metadata'] as Record<string, unknown>) ?? {}} />
      <h3>Tags</h3>
      {Array.isArray(r.tags) && r.tags.length ? <Tags tags={r.tags} /> : <p class="muted">None.</p>}
      {r['dataset_metadata'] && Object.keys(r['dataset_metadata'] as object).length > 0 && (
        <>
          <h3>Dataset metadata</h3>
          <KeyValues values={r['dataset_metadata'] as Record<string, unknown>} />
        </>
      )}
      <h3>Fields</h3>
      <KeyValues values={fields} />
    </>
  );
}

export function SpanDetail({ record: r, projectId, traceStart, tab, onTab }: Props) {
  const duration = metricValue(r, 'duration_ns');
  const tokensIn = metricValue(r, 'num_input_tokens').value;
  const tokensOut = metricValue(r, 'num_output_tokens').value;
  const tokens = metricValue(r, 'num_total_tokens');
  const start = Date.parse(r.created_at ?? '');
  const offset = Number.isNaN(start) ? null : (start - traceStart) * 1e6;
  const raw = JSON.stringify(r, null, 2);
  return (
    <section class="detail" aria-label="Span detail">
      <header class="detail-head">
        <KindBadge kind={r.type} />
        <h2>{r.name || `(unnamed ${r.type})`}</h2>
        <StatusBadge code={r.status_code} error={isError(r)} />
      </header>
      <dl class="facts">
        <Fact label="Started">
          {formatTime(r.created_at)}
          {offset !== null && offset > 0 && <span class="muted"> (+{formatDuration(offset)})</span>}
        </Fact>
        {duration.value !== null && <Fact label="Duration">{formatDuration(duration.value)}</Fact>}
        {(tokens.value !== null || tokensIn !== null || tokensOut !== null) && (
          <Fact label="Tokens">
            {tokens.value !== null ? formatNumber(tokens.value) : ''}
            {(tokensIn !== null || tokensOut !== null) && (
              <span class={tokens.value !== null ? 'muted' : ''}>
                {tokens.value !== null ? ' (' : ''}
                {[tokensIn !== null ? `${formatNumber(tokensIn)} in` : '', tokensOut !== null ? `${formatNumber(tokensOut)} out` : '']
                  .filter(Boolean)
                  .join(', ')}
                {tokens.value !== null ? ')' : ''}
              </span>
            )}
            {tokens.rollUp && <span class="muted"> ({tokens.rollUp} of its spans)</span>}
          </Fact>
        )}
        {typeof r['model'] === 'string' && <Fact label="Model">{r['model']}</Fact>}
        {typeof r['temperature'] === 'number' && <Fact label="Temperature">{String(r['temperature'])}</Fact>}
        {typeof r['finish_reason'] === 'string' && <Fact label="Finish reason">{r['finish_reason']}</Fact>}
        {typeof r['tool_call_id'] === 'string' && <Fact label="Tool call">{r['tool_call_id']}</Fact>}
        <IdFact label={r.type === 'trace' ? 'Trace ID' : 'Span ID'} id={r.id} />
        {r.session_id && (
          <Fact label="Session">
            <Link to={{ name: 'session', projectId, sessionId: r.session_id }}>
              <code class="id">{r.session_id.slice(0, 8)}</code>
            </Link>{' '}
            <CopyButton text={r.session_id} label="Copy session id" />
          </Fact>
        )}
      </dl>
      {r.error_message && (
        <div class="error-note">
          <strong>Error:</strong> <span>{r.error_message}</span>
        </div>
      )}
      <div class="detail-tabs" role="tablist" aria-label="Span detail">
        {TABS.map((t) => (
          <button
            key={t}
            type="button"
            role="tab"
            id={`tab-${t}`}
            aria-selected={tab === t}
            aria-controls="tab-panel"
            class={tab === t ? 'tab active' : 'tab'}
            onClick={() => onTab(t)}
          >
            {TAB_LABELS[t]}
          </button>
        ))}
      </div>
      <div class="tab-panel" id="tab-panel" role="tabpanel" aria-labelledby={`tab-${tab}`}>
        {tab === 'overview' && <Content r={r} />}
        {tab === 'metrics' && <Metrics r={r} />}
        {tab === 'metadata' && <Metadata r={r} />}
        {tab === 'raw' && <TextBlock text={raw} label="JSON" />}
      </div>
    </section>
  );
}
