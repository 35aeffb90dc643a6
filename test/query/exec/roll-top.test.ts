// Guarantees: a page of traces sorted by a metric only their spans carry (the roll-up alone) is
// exactly the page computed from what was logged, whether it is found among the best roll-ups (no
// table of every trace) or, when those fall short, over every trace: both directions, ties, traces
// without the metric (last), offsets reaching them, a selective filter the estimate misjudges, deleted
// traces among the best, and rows still in memory beside sealed ones.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TraceStore } from '../../../src/engine/trace-store.js';
import { tempDir } from '../../support/helpers.js';

const idOf = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const TRACES = 1_500;

/** Trace i: 0-3 llm spans of 0-19 tokens (summed: many equal sums), or one tool span without metrics. */
function trace(i: number) {
  const x = Math.imul(i + 1, 2654435761) >>> 0;
  const n = x % 4;
  const created_at = new Date(1_700_000_000_000 + i * 1000).toISOString();
  const spans =
    n === 0
      ? [{ type: 'tool', id: idOf(1_000_000 + i * 4), name: 'lookup', input: 'x', created_at }]
      : Array.from({ length: n }, (_, j) => ({
          type: 'llm',
          id: idOf(1_000_000 + i * 4 + j),
          name: 'call',
          input: 'x',
          created_at,
          metrics: { num_total_tokens: (x >>> (8 + j * 5)) % 20 },
        }));
  const sum =
    n === 0 ? null : spans.reduce((a, s) => a + ((s as { metrics?: { num_total_tokens: number } }).metrics?.num_total_tokens ?? 0), 0);
  return { body: { id: idOf(i), name: i % 50 === 0 ? 'rare' : 't', input: 'q', created_at, spans }, sum };
}

interface Expected {
  id: string;
  sum: number | null;
  name: string;
}

/** The page from the logged data: sums descending (or ascending), traces without one last, ties by id in the sort's direction. */
function expectedPage(all: Expected[], ascending: boolean, offset: number, limit: number, name?: string): string[] {
  const rows = all.filter((t) => name === undefined || t.name === name);
  rows.sort((a, b) => {
    if (a.sum === null || b.sum === null) return a.sum === b.sum ? cmp(a.id, b.id, ascending) : a.sum === null ? 1 : -1;
    if (a.sum !== b.sum) return ascending ? a.sum - b.sum : b.sum - a.sum;
    return cmp(a.id, b.id, ascending);
  });
  return rows.slice(offset, offset + limit).map((t) => t.id);
}
const cmp = (a: string, b: string, ascending: boolean) => (a < b ? -1 : a > b ? 1 : 0) * (ascending ? 1 : -1);

async function openStore(dir: string, steps: string[], estimate?: 'many') {
  return TraceStore.open(dir, {
    threads: 1,
    metricTopK: false,
    autoCompact: false,
    ...(estimate ? { planEstimate: estimate } : {}),
    onPlan: (s) => steps.push(...s),
  });
}

test('traces sorted by a roll-up alone: the best roll-ups give the page, or every trace does', { timeout: 180_000 }, async (t) => {
  const dir = tempDir(t);
  const steps: string[] = [];
  let store = await openStore(dir, steps);
  const projectId = store.createProject({ name: 'p' }).id;
  const log_stream_id = store.createLogStream(projectId, 'default').id;
  const all: Expected[] = [];
  const log = async (from: number, to: number) => {
    const made = Array.from({ length: to - from }, (_, j) => trace(from + j));
    for (const [j, m] of made.entries()) all.push({ id: idOf(from + j), sum: m.sum, name: m.body.name });
    await store.logTraces(projectId, { log_stream_id, traces: made.map((m) => m.body) } as never);
  };
  await log(0, 1_000);
  await store.flush();
  await log(1_000, TRACES);
  // Three of the best traces go (sealed and in memory): the page must not hold them.
  const best = expectedPage(all, false, 0, 3);
  for (const id of best) {
    const r = await store.records.delete('trace', projectId, {
      log_stream_id,
      filters: [{ type: 'id', column_id: 'id', operator: 'eq', value: id }],
    } as never);
    assert.equal(r.deleted > 0, true);
  }
  const live = all.filter((e) => !best.includes(e.id));

  const page = async (ascending: boolean, offset: number, limit: number, name?: string) => {
    steps.length = 0;
    const body = {
      log_stream_id,
      ...(name !== undefined ? { filters: [{ type: 'text', column_id: 'name', operator: 'eq', value: name }] } : {}),
      sort: { column_id: 'metrics/num_total_tokens', ascending },
      pagination: { starting_token: offset, limit },
      select_columns: { column_ids: ['id'] },
    };
    const got = await store.partialSearch('trace', projectId, body as never);
    return got.records.map((r) => String(r['id']));
  };

  for (const [ascending, offset, limit] of [
    [false, 0, 50],
    [true, 0, 30],
    [false, 200, 100],
  ] as const) {
    assert.deepEqual(await page(ascending, offset, limit), expectedPage(live, ascending, offset, limit), `${ascending} ${offset}`);
    assert.ok(
      steps.some((s) => s.includes('roll-up top')) && !steps.includes('keys (roll-up top: short)'),
      `found among the best roll-ups: ${steps.join(' | ')}`,
    );
  }
  // Past the traces with the metric: those without it follow, by id; only every trace holds them.
  const withSum = live.filter((e) => e.sum !== null).length;
  assert.deepEqual(await page(false, withSum - 20, 60), expectedPage(live, false, withSum - 20, 60));
  assert.ok(steps.includes('keys (roll-up top: short)'), steps.join(' | '));
  assert.deepEqual(await page(true, withSum - 5, 40), expectedPage(live, true, withSum - 5, 40));

  // A selective filter (1 trace in 50) the estimate takes for one every trace passes: the best
  // roll-ups hold too few of its traces, and every trace is read.
  await store.close();
  store = await openStore(dir, steps, 'many');
  assert.deepEqual(await page(false, 0, 25, 'rare'), expectedPage(live, false, 0, 25, 'rare'));
  assert.ok(steps.includes('keys (roll-up top: short)'), steps.join(' | '));
  assert.deepEqual(await page(true, 0, 25, 'rare'), expectedPage(live, true, 0, 25, 'rare'));

  // A trace carrying the metric itself shows its own value, not its spans' sum: the best roll-ups no
  // longer decide the page.
  const own = idOf(TRACES);
  const created_at = new Date(1_700_000_000_000 + TRACES * 1000).toISOString();
  const span = { type: 'llm', id: idOf(2_000_000), name: 'call', input: 'x', created_at, metrics: { num_total_tokens: 1 } };
  const body = { id: own, name: 't', input: 'q', created_at, metrics: { num_total_tokens: 10_000 }, spans: [span] };
  await store.logTraces(projectId, { log_stream_id, traces: [body] } as never);
  live.push({ id: own, sum: 10_000, name: 't' });
  assert.deepEqual(await page(false, 0, 10), expectedPage(live, false, 0, 10));
  assert.equal((await page(false, 0, 10))[0], own);
  await store.close();
});
