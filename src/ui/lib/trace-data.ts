// What the trace page loads: the trace record, then only the skeleton of its spans (ids, links,
// names, times, durations: no inputs or outputs) in pages of 1,000 fetched a few at a time, up to
// a cap; a span's full record is fetched when it is selected. Spans with children and leaves are
// paged apart: the server computes metric roll-ups for every page that holds a parent (over the
// whole trace), so pages of leaves only skip that work, and parents arrive first.
import { api, idFilter } from './api.js';
import { isError, metricValue } from './format.js';
import type { SpanLite } from './span-tree.js';
import type { RecordRow, SearchPage } from './types.js';

export const SPAN_CAP = 20_000;
const PAGE = 1000;
const PARALLEL = 4;
// has_children must be selected: it is how the server sees that a page holds no parent.
const SKELETON = ['name', 'created_at', 'status_code', 'error_message', 'step_number', 'has_children', 'metrics/duration_ns'];

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
export async function fetchRecord(
  level: 'traces' | 'spans' | 'sessions',
  projectId: string,
  id: string,
  signal?: AbortSignal,
): Promise<RecordRow> {
  const page = await api<SearchPage>(
    'POST',
    `/projects/${encodeURIComponent(projectId)}/${level}/search`,
    { filters: [idFilter('id', id)], limit: 1 },
    signal,
  );
  const r = page.records[0];
  if (!r) throw new Error(`No ${level.slice(0, -1)} ${id} in this project`);
  return r;
}

/**
 * Loads a trace and its span skeleton, calling `progress` as pages arrive (at most every 100 ms, and
 * once more at the end) so a big trace shows its first spans while the rest load.
 */
export async function loadTrace(
  projectId: string,
  traceId: string,
  signal: AbortSignal,
  progress: (d: TraceData) => void,
): Promise<TraceData> {
  const pid = encodeURIComponent(projectId);
  const inTrace = { filter: idFilter('trace_id', traceId) };
  // Leaves: has_children false. Parents: the rest (`ne` also matches a missing value).
  const part = (leaves: boolean) => ({
    filter_tree: {
      and: [inTrace, { filter: { type: 'boolean', column_id: 'has_children', operator: leaves ? 'eq' : 'ne', value: false } }],
    },
  });
  const page = (leaves: boolean, start: number, limit: number) =>
    api<SearchPage>(
      'POST',
      `/projects/${pid}/spans/partial_search`,
      {
        ...part(leaves),
        sort: { column_id: 'created_at', ascending: true, sort_type: 'column' },
        pagination: { starting_token: start, limit },
        select_columns: { column_ids: SKELETON },
      },
      signal,
    ).then((p) => p.records.map(toSpanLite));
  const count = (body: object) =>
    api<{ total_count: number }>('POST', `/projects/${pid}/spans/count`, body, signal).then((c) => c.total_count);
  // The first page of each part goes out with the trace and the counts; the rest once the counts are known.
  const firstParents = page(false, 0, PAGE);
  const firstLeaves = page(true, 0, PAGE);
  // Awaited below; these only keep an early failure from going unhandled.
  firstParents.catch(() => undefined);
  firstLeaves.catch(() => undefined);
  const [trace, total, parents] = await Promise.all([
    fetchRecord('traces', projectId, traceId, signal),
    count({ filter_tree: inTrace }),
    count(part(false)),
  ]);
  const wantedParents = Math.min(parents, SPAN_CAP);
  const wantedLeaves = Math.min(Math.max(total - parents, 0), SPAN_CAP - wantedParents);
  const rest: [boolean, number, number][] = [];
  for (let s = PAGE; s < wantedParents; s += PAGE) rest.push([false, s, Math.min(PAGE, wantedParents - s)]);
  for (let s = PAGE; s < wantedLeaves; s += PAGE) rest.push([true, s, Math.min(PAGE, wantedLeaves - s)]);
  const spans: SpanLite[] = [];
  let last = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const report = () => {
    timer = null;
    last = Date.now();
    if (!signal.aborted) progress({ trace, spans: spans.slice(), total, done: false });
  };
  const arrived = (batch: SpanLite[]) => {
    spans.push(...batch);
    if (timer === null) timer = setTimeout(report, Math.max(0, 100 - (Date.now() - last)));
  };
  let next = 0;
  const worker = async () => {
    while (next < rest.length) {
      const [leaves, start, limit] = rest[next++]!;
      arrived(await page(leaves, start, limit));
    }
  };
  const firsts = [
    firstParents.then((b) => arrived(b.slice(0, wantedParents))),
    firstLeaves.then((b) => arrived(b.slice(0, Math.min(PAGE, wantedLeaves)))),
  ];
  await Promise.all([...firsts, ...Array.from({ length: Math.min(PARALLEL, rest.length) }, worker)]);
  if (timer !== null) clearTimeout(timer);
  const done: TraceData = { trace, spans, total, done: true };
  if (!signal.aborted) progress(done);
  return done;
}
