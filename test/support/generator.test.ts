// Guarantees the trace generator is seeded-reproducible and yields well-formed, realistic ingest-shaped trace sets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countSpans, generateBatches, generateTraces, generateTraceSet, GEN_SPAN_KINDS, type GenSpan, type GenTrace } from './generator.js';

const TARGET = 20_000;
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

// One shared set keeps the suite well under 2 s.
const { traces, summary } = generateTraceSet({ spans: TARGET, seed: 7 });

/** Every span with its parent's created_at (the trace's for top-level spans). */
function allSpans(list: readonly GenTrace[]): { span: GenSpan; parentAt: string }[] {
  const out: { span: GenSpan; parentAt: string }[] = [];
  const walk = (spans: readonly GenSpan[], parentAt: string): void => {
    for (const span of spans) {
      out.push({ span, parentAt });
      if (span.type === 'agent' || span.type === 'workflow') walk(span.spans, span.created_at);
    }
  };
  for (const t of list) walk(t.spans, t.created_at);
  return out;
}
const spans = allSpans(traces);

/** The exact bytes a client would send; compared with === to avoid diffing megabytes on failure. */
function serialize(list: readonly GenTrace[]): string {
  return JSON.stringify(list);
}

test('same seed gives byte-identical output, another seed differs', () => {
  // A rerun with a smaller target replays exactly the first traces of the shared set.
  const again = [...generateTraces({ spans: TARGET / 2, seed: 7 })];
  assert.ok(serialize(again) === serialize(traces.slice(0, again.length)), 'same seed, same bytes');
  const small = (seed: number): string => serialize([...generateTraces({ spans: 2000, seed })]);
  assert.ok(small(8) !== small(7), 'another seed, other bytes');
});

test('span count reaches the target and the summary is exact', () => {
  const counted = traces.reduce((n, t) => n + countSpans(t), 0);
  assert.equal(counted, spans.length);
  assert.equal(summary.spans, counted);
  assert.equal(summary.traces, traces.length);
  assert.ok(counted >= TARGET);
  const last = traces.at(-1);
  assert.ok(last !== undefined && counted - countSpans(last) < TARGET, 'stops right after reaching the target');
  assert.deepEqual([...generateTraces({ spans: 0 })], []);
});

test('spans average about 1 KB of JSON with a long tail', () => {
  const sizes = spans.map(({ span }) => {
    const { spans: _children, ...own } = span as GenSpan & { spans?: unknown };
    return Buffer.byteLength(JSON.stringify(own));
  });
  const avg = sizes.reduce((a, b) => a + b, 0) / sizes.length;
  assert.ok(avg >= 800 && avg <= 1300, `average span size ${avg.toFixed(0)} B`);
  const over8k = sizes.filter((s) => s > 8192).length / sizes.length;
  assert.ok(over8k > 0.003 && over8k < 0.03, `share over 8 KB ${over8k}`);
});

test('every span kind appears, control rarely', () => {
  const counts = new Map<string, number>();
  for (const { span } of spans) counts.set(span.type, (counts.get(span.type) ?? 0) + 1);
  for (const kind of GEN_SPAN_KINDS) assert.ok((counts.get(kind) ?? 0) > 0, `kind ${kind} missing`);
  assert.ok((counts.get('control') ?? 0) / spans.length < 0.02);
  assert.ok((counts.get('llm') ?? 0) > (counts.get('agent') ?? 0));
});

test('sessions group 1-8 consecutive traces', () => {
  const runs: number[] = [];
  const seen = new Set<string>();
  let prev = '';
  for (const t of traces) {
    assert.match(t.session_id, UUID_V4);
    if (t.session_id === prev) {
      runs[runs.length - 1]!++;
    } else {
      assert.ok(!seen.has(t.session_id), 'a session never resumes after another started');
      seen.add(t.session_id);
      runs.push(1);
      prev = t.session_id;
    }
  }
  assert.equal(runs.length, summary.sessions);
  assert.ok(runs.every((n) => n >= 1 && n <= 8));
  assert.ok(runs.filter((n) => n >= 3).length > runs.length / 5, 'many sessions hold several traces');
});

test('ids are unique lowercase v4 UUIDs', () => {
  const ids = new Set<string>();
  for (const t of traces) ids.add(t.id);
  for (const { span } of spans) ids.add(span.id);
  assert.equal(ids.size, traces.length + spans.length);
  for (const id of ids) assert.match(id, UUID_V4);
});

test('timestamps are ISO ms strings, increasing across traces, children not before parents', () => {
  assert.equal(traces[0]?.created_at, '2026-01-01T00:00:00.000Z');
  let prev = '';
  for (const t of traces) {
    assert.match(t.created_at, ISO_MS);
    assert.ok(t.created_at > prev, `${t.created_at} after ${prev}`);
    prev = t.created_at;
  }
  for (const { span, parentAt } of spans) {
    assert.match(span.created_at, ISO_MS);
    assert.ok(span.created_at >= parentAt);
  }
  const custom = generateTraces({ spans: 1, startTime: Date.UTC(2030, 5, 1, 12) }).next().value as GenTrace;
  assert.equal(custom.created_at, '2030-06-01T12:00:00.000Z');
});

test('llm spans carry message arrays, an assistant reply and token metrics', () => {
  let withScores = 0;
  let llms = 0;
  for (const { span } of spans) {
    if (span.type !== 'llm') continue;
    llms++;
    assert.ok(Array.isArray(span.input) && span.input.length >= 2);
    assert.equal(span.input[0]?.role, 'system');
    assert.equal(span.input.at(-1)?.role, 'user');
    for (const m of span.input) {
      assert.ok(['system', 'user', 'assistant', 'tool'].includes(m.role));
      assert.equal(typeof m.content, 'string');
    }
    assert.equal(span.output.role, 'assistant');
    assert.equal(typeof span.model, 'string');
    const m = span.metrics;
    assert.equal(m['num_total_tokens'], (m['num_input_tokens'] ?? NaN) + (m['num_output_tokens'] ?? NaN));
    assert.ok((m['duration_ns'] ?? 0) > 0 && (m['time_to_first_token_ns'] ?? 0) > 0);
    if (m['correctness'] !== undefined) {
      withScores++;
      for (const k of ['correctness', 'context_adherence', 'toxicity']) assert.ok(m[k]! >= 0 && m[k]! <= 1);
    }
  }
  assert.ok(withScores > llms * 0.2 && withScores < llms * 0.4, `${withScores}/${llms} llm spans scored`);
});

test('other kinds follow the ingest shapes', () => {
  for (const { span } of spans) {
    assert.ok(!('step_number' in span));
    switch (span.type) {
      case 'retriever':
        assert.equal(typeof span.input, 'string');
        for (const d of span.output) assert.ok(typeof d.content === 'string' && d.metadata.score >= 0 && d.metadata.score <= 1);
        break;
      case 'tool':
        assert.equal(typeof span.output, 'string');
        assert.doesNotThrow(() => JSON.parse(span.input));
        assert.match(span.tool_call_id, /^call_[0-9a-f]{24}$/);
        break;
      case 'agent':
      case 'workflow':
        assert.ok(span.spans.length >= 1);
        break;
      case 'control':
        assert.ok(['deny', 'steer', 'observe'].includes(span.output.action));
        break;
      case 'llm':
        break;
    }
  }
});

test('errors hit about errorRate of spans with status 500', () => {
  const failed = spans.filter(({ span }) => span.status_code !== undefined);
  assert.ok(failed.every(({ span }) => span.status_code === 500));
  const share = failed.length / spans.length;
  assert.ok(share > 0.01 && share < 0.03, `error share ${share}`);
  const none = generateTraceSet({ spans: 2000, errorRate: 0 });
  assert.ok(allSpans(none.traces).every(({ span }) => span.status_code === undefined));
});

test('batches hold about batchSpans spans and replay the same stream', () => {
  const batches = [...generateBatches({ spans: 5000, seed: 7, batchSpans: 500 })];
  const flat = batches.flat();
  assert.ok(serialize(flat) === serialize(traces.slice(0, flat.length)), 'batches replay the trace stream');
  assert.ok(flat.reduce((n, t) => n + countSpans(t), 0) >= 5000);
  const sizes = batches.map((b) => b.reduce((n, t) => n + countSpans(t), 0));
  for (const n of sizes.slice(0, -1)) assert.ok(n > 400 && n < 600, `batch of ${n} spans`);
});
