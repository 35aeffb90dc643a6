// Guarantees: walking every page of a 10,000-span search returns each record exactly once, in the
// requested order, for sorts on a text column (name), a time column (created_at) and a metric column,
// ascending and descending, with many ties (broken by id in the same direction) and records without
// the metric (last in both directions); the same at trace level with metric roll-ups. The expected
// order is computed from the generated request bodies, not from anything tracelake returns. Half the
// records are sealed into Parquet and half are in the in-memory batch.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Level } from '../../src/query/columns.js';
import { generateBatches, type GenSpan, type GenTrace } from '../support/generator.js';
import { openStore } from '../support/helpers.js';
import { compareCodePoints, parseMicros } from '../support/reference-eval.js';

const TIE_INSTANTS = ['2026-01-01T12:00:00.000Z', '2026-01-01T12:00:00.001Z', '2026-01-01T12:00:00.000001Z'];
const TIE_SCORES = [0.25, 0.5, 0.75];

interface Row {
  id: string;
  name: string;
  at: number;
  score: number | undefined;
}

/** The generated set with deliberate ties, and what each record's sort keys are. */
function buildSet(): { batches: GenTrace[][]; spans: Row[]; traces: Row[] } {
  const batches: GenTrace[][] = [];
  const spans: Row[] = [];
  const traces: Row[] = [];
  let i = 0;
  let t = 0;
  for (const batch of generateBatches({ spans: 10_000, seed: 2026, batchSpans: 1_000 })) {
    for (const trace of batch) {
      if (t % 5 === 0) trace.created_at = TIE_INSTANTS[t % TIE_INSTANTS.length]!;
      const own: number[] = [];
      const walk = (list: GenSpan[]): void => {
        for (const s of list) {
          if (i % 4 === 0) s.created_at = TIE_INSTANTS[i % TIE_INSTANTS.length]!; // ties on created_at
          const container = s.type === 'agent' || s.type === 'workflow';
          // every container has its own value (no span-level roll-ups); one leaf in seven has none
          if (container || i % 7 !== 0) s.metrics['tie_score'] = TIE_SCORES[i % TIE_SCORES.length]!;
          const score = s.metrics['tie_score'];
          if (score !== undefined) own.push(score);
          spans.push({ id: s.id, name: s.name, at: parseMicros(s.created_at), score });
          i++;
          if (container) walk(s.spans);
        }
      };
      walk(trace.spans);
      // a trace has no value of its own: it sorts by the average of its spans' values
      traces.push({
        id: trace.id,
        name: trace.name,
        at: parseMicros(trace.created_at),
        score: own.length ? own.reduce((a, b) => a + b, 0) / own.length : undefined,
      });
      t++;
    }
    batches.push(batch);
  }
  return { batches, spans, traces };
}

function expectedOrder(rows: Row[], key: 'name' | 'at' | 'score', ascending: boolean): string[] {
  const sorted = [...rows].sort((a, b) => {
    const x = a[key];
    const y = b[key];
    if (x === undefined || y === undefined) {
      if (x !== y) return x === undefined ? 1 : -1; // without a value: last, whatever the direction
      return (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) * (ascending ? 1 : -1);
    }
    let c =
      typeof x === 'string'
        ? compareCodePoints(x, y as string)
        : (x as number) < (y as number)
          ? -1
          : (x as number) > (y as number)
            ? 1
            : 0;
    if (c === 0) c = a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
    return ascending ? c : -c;
  });
  return sorted.map((r) => r.id);
}

test('walking every page of a 10,000-span search returns each record once, in order, with ties', async (t) => {
  const { batches, spans, traces } = buildSet();
  assert.ok(spans.length >= 10_000);
  const { store, projectId, logStreamId } = await openStore(t);
  const t0 = performance.now();
  for (const [n, batch] of batches.entries()) {
    await store.logTraces(projectId, { log_stream_id: logStreamId, traces: batch as any });
    if (n === Math.floor(batches.length / 2)) await store.flush(); // half sealed, half in memory
  }
  assert.equal((await store.count('span', projectId, { log_stream_id: logStreamId })).total_count, spans.length);
  assert.ok(
    store.records.stats.sealedRows > 0 && store.records.stats.memRows > 0,
    `half sealed, half in memory: ${JSON.stringify(store.records.stats)}`,
  );
  t.diagnostic(`logged in ${Math.round(performance.now() - t0)} ms`);

  const ties = (rows: Row[], key: 'at' | 'score' | 'name') => rows.length - new Set(rows.map((r) => String(r[key]))).size;
  t.diagnostic(
    `${spans.length} spans (${ties(spans, 'name')} tied names, ${ties(spans, 'at')} tied created_at, ` +
      `${ties(spans, 'score')} tied scores), ${traces.length} traces`,
  );

  const walks: { level: Level; rows: Row[]; column_id: string; key: 'name' | 'at' | 'score'; limit: number }[] = [
    { level: 'span', rows: spans, column_id: 'name', key: 'name', limit: 997 },
    { level: 'span', rows: spans, column_id: 'created_at', key: 'at', limit: 1000 },
    { level: 'span', rows: spans, column_id: 'metrics/tie_score', key: 'score', limit: 613 },
    { level: 'trace', rows: traces, column_id: 'created_at', key: 'at', limit: 101 },
    { level: 'trace', rows: traces, column_id: 'metrics/tie_score', key: 'score', limit: 89 },
  ];
  for (const w of walks) {
    for (const ascending of [true, false]) {
      const want = expectedOrder(w.rows, w.key, ascending);
      const t1 = performance.now();
      const got: string[] = [];
      let token: number | null = 0;
      let pages = 0;
      while (token !== null) {
        // spans page with top-level starting_token/limit, traces with the newer pagination object
        const paging =
          w.level === 'span' ? { starting_token: token, limit: w.limit } : { pagination: { starting_token: token, limit: w.limit } };
        const page = await store.partialSearch(w.level, projectId, {
          log_stream_id: logStreamId,
          sort: { column_id: w.column_id, ascending },
          ...paging,
          select_columns: { column_ids: ['id'] },
        });
        if (page.next_starting_token !== null)
          assert.equal(page.next_starting_token, token + page.records.length, 'next_starting_token = starting_token + rows');
        got.push(...page.records.map((r) => r['id'] as string));
        assert.ok(page.records.length <= w.limit);
        token = page.next_starting_token;
        assert.ok(++pages <= Math.ceil(w.rows.length / w.limit) + 1, 'paging ends');
      }
      const label = `${w.level} by ${w.column_id} ${ascending ? 'asc' : 'desc'}, pages of ${w.limit}`;
      t.diagnostic(`${label}: ${pages} pages, ${Math.round(performance.now() - t1)} ms`);
      assert.equal(new Set(got).size, got.length, `${label}: no record twice`);
      assert.equal(got.length, want.length, `${label}: every record`);
      const at = got.findIndex((id, k) => id !== want[k]);
      assert.equal(at, -1, `${label}: order differs at ${at} (${got[at]} instead of ${want[at]})`);
    }
  }
});
