// Rows of one run of a fixed project, as the record store takes them (LogRow): the spans and traces the
// planner-facts tests (data facts, metric facts and their backfill) log. They differ only in type, in
// the trace they hang under and in what they carry beyond the base columns.
import type { LogRow } from '../../src/record/record.js';

export const FACT_PROJECT = '11111111-1111-4111-8111-111111111111';
export const FACT_RUN = '22222222-2222-4222-8222-222222222222';
export const factId = (k: number) => `00000000-0000-4000-8000-${String(k).padStart(12, '0')}`;
export const factScope = { projectId: FACT_PROJECT, runId: FACT_RUN, kinds: ['span'] as const };

/** Record k of `type`: a trace is its own root; any other type hangs under trace `trace` (its parent too). */
export function factRow(k: number, type: string, extra: Record<string, unknown> = {}, trace = 1000): LogRow {
  return {
    seq: 0,
    id: factId(k),
    type,
    project_id: FACT_PROJECT,
    run_id: FACT_RUN,
    trace_id: factId(type === 'trace' ? k : trace),
    ...(type === 'trace' ? {} : { parent_id: factId(trace) }),
    name: `s${k}`,
    input: 'x',
    created_at: 1_700_000_000_000_000 + k,
    updated_at: 0,
    is_complete: true,
    has_children: false,
    ...extra,
  } as LogRow;
}

/** Metrics of record k: every one has a duration, llm spans tokens, `quality` where asked. */
export function factMetrics(k: number, type: string, quality: boolean): Record<string, number> {
  return { duration_ns: 1000 + k, ...(type === 'llm' ? { num_input_tokens: k } : {}), ...(quality ? { quality: k / 100 } : {}) };
}
