// Guarantees: a delete at session level removes exactly the sessions its filter matches (the
// reference evaluator's answer over the same records: test/support/reference-eval.ts), every trace of
// those sessions and every span of those traces, and nothing else; `deleted` counts all of them. Over
// the awkward data set in memory, sealed, and split between the two (with the text index), for
// filters on ids, text, dates, metric roll-ups and a filter tree, one after another, and the same
// after a reopen.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TraceStore } from '../../../src/engine/trace-store.js';
import { labelOf, logAwkward, uid, type LoadMode } from '../../support/awkward-data.js';
import { openStore } from '../../support/helpers.js';
import { ReferenceEvaluator, type FilterBody, type Level, type Rec } from '../../support/reference-eval.js';

const LEVELS: readonly Level[] = ['span', 'trace', 'session'];

/** Applied in this order, each to what the ones before left. */
const DELETES: { name: string; body: FilterBody }[] = [
  { name: 'ids, one_of', body: { filters: [{ type: 'id', column_id: 'id', operator: 'one_of', value: [uid('S1'), uid('R03')] }] } },
  {
    name: 'a metric rolled up from its traces and spans',
    body: { filters: [{ type: 'number', column_id: 'metrics/quality', operator: 'eq', value: 0.4 }] },
  },
  {
    name: 'a date bound (sessions tied on it included)',
    body: { filters: [{ type: 'date', column_id: 'created_at', operator: 'lte', value: '2026-02-10T08:00:00Z' }] },
  },
  {
    name: 'a tree: an or of text and an id, under a not',
    body: {
      filter_tree: {
        and: [
          {
            or: [
              { filter: { type: 'text', column_id: 'input', operator: 'contains', value: 'ΩMEGA', case_sensitive: false } },
              { filter: { type: 'id', column_id: 'id', operator: 'one_of', value: [uid('S3'), uid('S5')] } },
            ],
          },
          { not: { filter: { type: 'id', column_id: 'id', operator: 'eq', value: uid('S5') } } },
        ],
      },
    },
  },
];

async function everything(store: TraceStore, projectId: string, runId: string): Promise<Record<Level, Rec[]>> {
  const out = {} as Record<Level, Rec[]>;
  for (const level of LEVELS) {
    const page = await store.search(level, projectId, { log_stream_id: runId, limit: 1000 });
    assert.equal(page.next_starting_token, null, 'one page holds every record');
    out[level] = page.records;
  }
  return out;
}

const labels = (records: readonly Rec[]) => records.map((r) => labelOf(String(r['id']))).sort();

for (const mode of ['memory', 'sealed', 'mixed'] as const satisfies readonly LoadMode[]) {
  test(`session deletes by filter take their sessions, traces and spans (${mode})`, async (t) => {
    const {
      dir,
      store,
      projectId,
      logStreamId: runId,
    } = await openStore(t, { threads: 1, ...(mode === 'mixed' ? { textIndex: true } : {}) });
    await logAwkward(store, projectId, runId, mode);
    let expected = await everything(store, projectId, runId);
    for (const d of DELETES) {
      const ref = new ReferenceEvaluator(expected);
      const sessions = new Set(ref.ids('session', d.body));
      // Some sessions but not all: a delete that takes nothing (or everything) would prove little.
      assert.ok(
        sessions.size > 0 && sessions.size < expected.session.length,
        `${d.name}: matches ${sessions.size} of ${expected.session.length} sessions`,
      );
      const traces = new Set(expected.trace.filter((r) => sessions.has(String(r['session_id']))).map((r) => String(r['id'])));
      const spans = expected.span.filter((r) => traces.has(String(r['trace_id'])));
      assert.ok(traces.size > 0 && spans.length > 0, `${d.name}: the sessions have traces and spans`);

      const result = await store.records.delete('session', projectId, { log_stream_id: runId, ...d.body } as never);
      assert.equal(
        result.deleted,
        sessions.size + traces.size + spans.length,
        `${d.name}: deleted counts the sessions, their traces and their spans`,
      );
      expected = {
        session: expected.session.filter((r) => !sessions.has(String(r['id']))),
        trace: expected.trace.filter((r) => !traces.has(String(r['id']))),
        span: expected.span.filter((r) => !traces.has(String(r['trace_id']))),
      };
      const now = await everything(store, projectId, runId);
      for (const level of LEVELS) {
        assert.deepEqual(labels(now[level]), labels(expected[level]), `${d.name}: the ${level}s left`);
        assert.equal(
          (await store.count(level, projectId, { log_stream_id: runId })).total_count,
          expected[level].length,
          `${d.name}: ${level} count`,
        );
      }
      // The same delete again finds nothing.
      assert.equal(
        (await store.records.delete('session', projectId, { log_stream_id: runId, ...d.body } as never)).deleted,
        0,
        `${d.name}: nothing left to delete`,
      );
    }
    await store.close();
    const again = await TraceStore.open(dir);
    try {
      const now = await everything(again, projectId, runId);
      for (const level of LEVELS) assert.deepEqual(labels(now[level]), labels(expected[level]), `after a reopen: the ${level}s left`);
    } finally {
      await again.close();
    }
  });
}
