// What the trace page loads: the trace record, then only the skeleton of its spans (ids, links,
// names, times, durations: no inputs or outputs) in pages of 1,000 fetched a few at a time, up to
// a cap; a span's full record is fetched when it is selected.
import { api, idFilter } from './api.js';
import { isError, metricValue } from './format.js';
import type { SpanLite } from './span-tree.js';
import type { RecordRow, SearchPage } from './types.js';

export const SPAN_CAP = 20_000;
const PAGE = 1000;
const PARALLEL = 4;
const SKELETON = ['name', 'created_at', 'status_code', 'error_message', 'step_number', 'metrics/duration_ns'];

export function toSpanLite(r: RecordRow): SpanLite {
  const start = Date.parse(r.created_at ?? '');
  return {
    id: r.id,
    parentId: r.parent_id ?? null,
    type: r.type,
    name: r.name ?? '',
    start: Number.isNaN(start) ? 0 : start,
    // Only a logged duration: buildTree gives a span without one the time its descendants cover.
    durationNs: metricValue(r, 'duration_ns').rollUp ? null : metricValue(r, 'duration_ns').value,
    error: isError(r),
    step: r.step_number ?? 0,
  };
}

export interface TraceData {
  trace: RecordRow;
  /** The spans loaded so far. */
  spans: SpanLite[];
  /** Spans in the trace, loaded or not. */
  total: number;
  /** Whether every span up to the cap has arrived. */
  done: boolean;
}

/** Full records by id (one level), e.g. the trace or the selected span. */
export async function fetchRecord(level: 'traces' | 'spans' | 'sessions', projectId: string, id: string, signal?: AbortSignal): Promise<RecordRow> {
  const page = await api<SearchPage>('POST', `/projects/${encodeURIComponent(projectId)}/${level}/search`, { filters: [idFilter('id', id)], limit: 1 }, signal);
  const r = page.records[0];
  if (!r) throw new Error(`No ${level.slice(0, -1)} ${id} in this project`);
  return r;
}

/**
 * Loads a trace and its span skeleton, calling `progress` as pages arrive (at most every 100 ms, and
 * once more at the end) so a big trace shows its first spans while the rest load.
 */
export async function loadTrace(projectId: string, traceId: string, signal: AbortSignal, progress: (d: TraceData) => void): Promise<TraceData> {
  const pid = encodeURIComponent(projectId);
  const byTrace = { filters: [idFilter('trace_id', traceId)] };
  const page = (start: number, limit: number) =>
    api<SearchPage>(
      'POST',
      `/projects/${pid}/spans/partial_search`,
      { ...byTrace, sort: { column_id: 'created_at', ascending: true, sort_type: 'column' }, pagination: { starting_token: start, limit }, select_columns: { column_ids: SKELETON } },
      signal,
    ).then((p) => p.records.map(toSpanLite));
  // The first page goes out with the trace and the count; the rest once the count is known.
  const firstPage = page(0, PAGE);
  firstPage.catch(() => undefined); // awaited below; this only keeps an early failure from going unhandled
  const [trace, count] = await Promise.all([
    fetchRecord('traces', projectId, traceId, signal),
    api<{ total_count: number }>('POST', `/projects/${pid}/spans/count`, byTrace, signal),
  ]);
  const wanted = Math.min(count.total_count, SPAN_CAP);
  const starts: number[] = [];
  for (let s = PAGE; s < wanted; s += PAGE) starts.push(s);
  const spans: SpanLite[] = [];
  let last = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const report = () => {
    timer = null;
    last = Date.now();
    if (!signal.aborted) progress({ trace, spans: spans.slice(), total: count.total_count, done: false });
  };
  const arrived = (batch: SpanLite[]) => {
    spans.push(...batch);
    if (timer === null) timer = setTimeout(report, Math.max(0, 100 - (Date.now() - last)));
  };
  let next = 0;
  const worker = async () => {
    while (next < starts.length) {
      const i = next++;
      arrived(await page(starts[i]!, Math.min(PAGE, wanted - starts[i]!)));
    }
  };
  await Promise.all([firstPage.then(arrived), ...Array.from({ length: Math.min(PARALLEL, starts.length) }, worker)]);
  if (timer !== null) clearTimeout(timer);
  const done: TraceData = { trace, spans: spans.slice(0, Math.max(wanted, 0)), total: count.total_count, done: true };
  if (!signal.aborted) progress(done);
  return done;
}
