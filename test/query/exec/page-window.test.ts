// Guarantees: newest-first (and oldest-first) pages read through small created_at windows return
// exactly what a full scan returns, for filters of any selectivity and at any offset.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateBatches } from '../../support/generator.js';
import type { TraceStore } from '../../../src/engine/trace-store.js';
import { openStore } from '../../support/helpers.js';

test('windowed pages equal full-scan pages', { timeout: 60_000 }, async (t) => {
  const small = await openStore(t, { rowGroupSize: 64, sealRows: 1500, walRollBytes: 200_000, pageWindowRows: 100 });
  const full = await openStore(t, { rowGroupSize: 64, sealRows: 1500, walRollBytes: 200_000, pageWindowRows: 10_000_000 });
  for (const fx of [small, full]) {
    for (const batch of generateBatches({ spans: 4000, batchSpans: 500, seed: 21 })) {
      await fx.store.logTraces(fx.projectId, { log_stream_id: fx.logStreamId, traces: batch as never });
    }
  }
  await small.store.flush();
  await full.store.flush();
  // Sealed into row groups of 64 rows: a window of 100 rows spans a few of them.
  assert.ok(small.store.records.stats.sealedRows > 4000, JSON.stringify(small.store.records.stats));
  const filters = [
    [],
    [{ type: 'text', column_id: 'type', operator: 'eq', value: 'llm' }],
    [{ type: 'number', column_id: 'status_code', operator: 'eq', value: 500 }],
    [{ type: 'text', column_id: 'name', operator: 'eq', value: 'no such name' }],
  ];
  for (const f of filters) {
    for (const ascending of [false, true]) {
      for (const offset of [0, 37, 2000]) {
        const body = {
          log_stream_id: small.logStreamId,
          filters: f,
          starting_token: offset,
          limit: 25,
          ...(ascending ? { sort: { column_id: 'created_at', ascending } } : {}),
        };
        const a = await small.store.search('span', small.projectId, body);
        const b = await full.store.search('span', full.projectId, { ...body, log_stream_id: full.logStreamId });
        assert.deepEqual(
          a.records.map((r) => r['id']),
          b.records.map((r) => r['id']),
          `${JSON.stringify(f)} asc=${ascending} offset=${offset}`,
        );
        assert.equal(a.next_starting_token, b.next_starting_token);
      }
    }
  }
});

// 400 traces of 3 spans a minute apart; the 'rare' ones are traces 0-9, which share one instant (30
// spans created at the same µs), and traces 50 and 60. Six sealed segments of an hour each (DuckDB
// writes no row group under 2,048 rows: segments make the row groups here), the last 40 traces in memory.
function batch(from: number, to: number): Record<string, unknown>[] {
  return Array.from({ length: to - from }, (_, j) => {
    const i = from + j;
    const at = new Date(Date.UTC(2026, 0, 1, 0, i < 10 ? 0 : i)).toISOString();
    const name = i < 10 || i === 50 || i === 60 ? 'rare' : 'common';
    const id = (s: number) => `00000000-0000-4000-8000-${String(i * 10 + s).padStart(12, '0')}`;
    return {
      id: id(9),
      name,
      input: 'q',
      created_at: at,
      spans: [0, 1, 2].map((s) => ({
        id: id(s),
        type: 'llm',
        name: `${name}-${(i * 7 + s) % 5}`,
        input: 'x',
        created_at: at,
        model: 'm',
        metrics: { q: (i * 13 + s) % 11 },
      })),
    };
  });
}

async function fill(stores: { store: TraceStore; projectId: string; logStreamId: string }[], segments = 6): Promise<void> {
  for (const fx of stores) {
    for (let from = 0; from < 360; from += 360 / segments) {
      await fx.store.logTraces(fx.projectId, { log_stream_id: fx.logStreamId, traces: batch(from, from + 360 / segments) } as never);
      await fx.store.flush();
    }
    await fx.store.logTraces(fx.projectId, { log_stream_id: fx.logStreamId, traces: batch(360, 400) } as never); // in memory
  }
}

// A selective filter leaves the first window short. Then one read of created_at and the filter's
// columns finds when the page's rows were created, and the keys query reads only the row groups
// holding those instants, instead of widening the window step by step. The page must still equal a
// full scan's: with many rows sharing one created_at (the page ends inside a tie), rows still in
// memory, both orders, offsets, and a filter nothing matches.
test("a short window finds the page by its rows' times, and the page stays exact", { timeout: 60_000 }, async (t) => {
  const steps: string[][] = [];
  const opts = { sealRows: 100_000, walRollBytes: 200_000, autoCompact: false };
  const small = await openStore(t, { ...opts, pageWindowRows: 50, onPlan: (s) => steps.push([...s]) });
  const full = await openStore(t, { ...opts, pageWindowRows: 10_000_000 });
  await fill([small, full]);
  const rare = [{ type: 'text', column_id: 'name', operator: 'contains', value: 'rare' }];
  const none = [{ type: 'text', column_id: 'name', operator: 'eq', value: 'no such name' }];
  let timed = 0;
  for (const f of [rare, none]) {
    for (const ascending of [false, true]) {
      for (const [offset, limit] of [
        [0, 10],
        [5, 20],
        [0, 40],
        [30, 10],
        [3, 4],
        [0, 1],
      ] as const) {
        const body = { filters: f, starting_token: offset, limit, ...(ascending ? { sort: { column_id: 'created_at', ascending } } : {}) };
        steps.length = 0;
        const a = await small.store.search('span', small.projectId, { ...body, log_stream_id: small.logStreamId });
        const b = await full.store.search('span', full.projectId, { ...body, log_stream_id: full.logStreamId });
        const what = `${JSON.stringify(f)} asc=${ascending} offset=${offset} limit=${limit}`;
        assert.deepEqual(
          a.records.map((r) => r['id']),
          b.records.map((r) => r['id']),
          what,
        );
        assert.equal(a.next_starting_token, b.next_starting_token, what);
        const keys = steps[0]!.filter((s) => s.startsWith('keys'));
        // The first window, at most one widening, then (if still short) the page's times and one more.
        assert.ok(keys.length <= 3, `${what}: ${steps[0]!.join(' → ')}`);
        if (steps[0]!.includes('page times')) timed++;
      }
    }
  }
  assert.ok(timed >= 12, `the short windows asked for the page's times (${timed})`);
  assert.ok(small.store.records.stats.memRows > 0 && small.store.records.stats.sealedRows > 0, 'rows both sealed and in memory');
});

// Sorted by name or by a metric, a filter admitting few rows can first read created_at and the
// filter's columns for at most 4,097 matches; when they sit in few row groups the keys query reads only
// those. The planner does so only when its estimate says the matches are few and in few row groups;
// here the estimate is forced ('few': always; 'many': never), so each plan runs whatever the data, and
// pages equal a store whose rows sit in one segment (where it never applies), in both orders, with
// ties on the sort value (names and metric values repeat), offsets, rows in memory, and filters
// admitting nothing or everything.
test("a page not sorted by time reads only the row groups holding a selective filter's matches, and stays exact", {
  timeout: 60_000,
}, async (t) => {
  const steps: string[][] = [];
  const opts = { sealRows: 100_000, walRollBytes: 200_000, autoCompact: false, metricTopK: false };
  const few = await openStore(t, { ...opts, planEstimate: 'few', onPlan: (s) => steps.push([...s]) });
  const many = await openStore(t, { ...opts, planEstimate: 'many', onPlan: (s) => steps.push([...s]) });
  const whole = await openStore(t, opts);
  await fill([few, many]);
  await fill([whole], 1);
  const filters = [
    [{ type: 'text', column_id: 'name', operator: 'contains', value: 'rare' }],
    [{ type: 'text', column_id: 'name', operator: 'eq', value: 'no such name' }],
    [{ type: 'text', column_id: 'model', operator: 'eq', value: 'm' }],
    [
      { type: 'number', column_id: 'metrics/q', operator: 'gte', value: 9 },
      { type: 'text', column_id: 'name', operator: 'one_of', value: ['rare-1', 'rare-3'] },
    ],
  ];
  let narrowed = 0;
  let plain = 0;
  for (const f of filters) {
    for (const sort of [
      { column_id: 'name', ascending: true },
      { column_id: 'name', ascending: false },
      { column_id: 'metrics/q', ascending: false },
    ]) {
      for (const [offset, limit] of [
        [0, 10],
        [7, 5],
        [0, 50],
      ] as const) {
        const body = { filters: f, sort, starting_token: offset, limit };
        const b = await whole.store.search('span', whole.projectId, { ...body, log_stream_id: whole.logStreamId });
        for (const fx of [few, many]) {
          steps.length = 0;
          const a = await fx.store.search('span', fx.projectId, { ...body, log_stream_id: fx.logStreamId });
          const what = `${fx === few ? 'few' : 'many'} ${JSON.stringify(f)} ${JSON.stringify(sort)} offset=${offset} limit=${limit}`;
          assert.deepEqual(
            a.records.map((r) => r['id']),
            b.records.map((r) => r['id']),
            what,
          );
          assert.equal(a.next_starting_token, b.next_starting_token, what);
          if (fx === few && steps[0]!.includes('match times') && steps[0]!.includes('keys (window)')) narrowed++;
          if (fx === many && !steps[0]!.includes('match times')) plain++;
        }
      }
    }
  }
  // The rare and the nothing filters (2 x 3 sorts x 3 pages) read few row groups; 'model eq m' admits every row.
  assert.ok(narrowed >= 18, `pages that read only their row groups: ${narrowed}`);
  assert.equal(plain, 36, 'told that every filter admits many rows, no page reads the match times first');
});
