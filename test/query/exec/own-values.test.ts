// Guarantees: an aggregate leaves out the roll-up of a metric only when every record of the level
// holds its own value of it (segments' null counts, rows in memory checked), and its answers equal a
// reference computed here (each record's own value, else the roll-up of its descendants') whether the
// roll-up ran or not: every record with a value; some without, sealed or in memory; and a sealed part
// complete beside a memory part that is not (and the other way round).
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { TraceStore } from '../../../src/engine/trace-store.js';
import { tempDir } from '../../support/helpers.js';

const BASE = Date.UTC(2026, 0, 1);
const N = 40;

/** Which records carry their own duration: the trace, and its workflow span (the one with children). */
interface Gaps {
  trace: (i: number) => boolean;
  workflow: (i: number) => boolean;
}
const EVERY: Gaps = { trace: () => true, workflow: () => true };
const SOME: Gaps = { trace: (i) => i % 4 !== 0, workflow: (i) => i % 5 !== 0 };

const at = (i: number) => BASE + i * 3 * 60_000;
const own = {
  trace: (i: number) => 90_000_000 + i * 1_000,
  workflow: (i: number) => 80_000_000 + i * 1_000,
  llm: (i: number) => 10_000_000 + ((i * 37) % 50) * 1_000_000,
  tool: (i: number) => 1_000_000 + ((i * 11) % 7) * 1_000_000,
};

function traceOf(i: number, g: Gaps): Record<string, unknown> {
  const created = new Date(at(i)).toISOString();
  return {
    name: `t${i}`,
    input: 'q',
    created_at: created,
    ...(g.trace(i) ? { metrics: { duration_ns: own.trace(i) } } : {}),
    spans: [
      {
        type: 'workflow',
        name: 'wf',
        input: 'x',
        created_at: created,
        ...(g.workflow(i) ? { metrics: { duration_ns: own.workflow(i) } } : {}),
        spans: [
          { type: 'llm', name: 'call', input: 'x', created_at: created, metrics: { duration_ns: own.llm(i), num_input_tokens: 10 + i } },
          { type: 'tool', name: 'tool', input: 'x', created_at: created, metrics: { duration_ns: own.tool(i) } },
        ],
      },
    ],
  };
}

/** Each record's duration as search shows it: its own, else the largest own value below it. */
function shown(i: number, g: Gaps): { trace: number; spans: number[] } {
  const below = Math.max(own.llm(i), own.tool(i));
  const workflow = g.workflow(i) ? own.workflow(i) : below;
  const all = [...(g.workflow(i) ? [own.workflow(i)] : []), own.llm(i), own.tool(i)];
  return { trace: g.trace(i) ? own.trace(i) : Math.max(...all), spans: [workflow, own.llm(i), own.tool(i)] };
}

/** DuckDB's quantile_cont. */
function quantile(values: number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  const pos = q * (s.length - 1);
  const lo = Math.floor(pos);
  return s[lo]! + (s[Math.ceil(pos)]! - s[lo]!) * (pos - lo);
}

interface Fixture {
  store: TraceStore;
  projectId: string;
  streamId: string;
  steps: string[][];
}

/** The first half logged and sealed with `sealed` gaps (or kept in memory), the second half in memory with `memory` gaps. */
async function seeded(t: TestContext, sealed: Gaps | null, memory: Gaps): Promise<{ f: Fixture; gaps: (i: number) => Gaps }> {
  const steps: string[][] = [];
  const store = await TraceStore.open(tempDir(t), { threads: 1, onPlan: (s) => steps.push([...s]) });
  t.after(() => store.close());
  const projectId = store.createProject({ name: 'p' }).id;
  const streamId = store.createLogStream(projectId, 's').id;
  const half = N / 2;
  const gaps = (i: number) => (i < half && sealed ? sealed : memory);
  const log = (from: number, to: number) =>
    store.logTraces(projectId, {
      log_stream_id: streamId,
      reliable: true,
      traces: Array.from({ length: to - from }, (_, k) => traceOf(from + k, gaps(from + k))),
    } as never);
  if (sealed) {
    await log(0, half);
    await store.flush();
    await log(half, N);
  } else await log(0, N);
  return { f: { store, projectId, streamId, steps }, gaps };
}

const hourOf = (ms: number) => new Date(ms - (ms % 3_600_000)).toISOString();

/** Hourly count, sum, max and p90 of duration at a level; checks them against the reference; returns the aggregate's steps. */
async function checkHourly(f: Fixture, level: 'trace' | 'span', gaps: (i: number) => Gaps): Promise<string> {
  f.steps.length = 0;
  const got = await f.store.aggregate(level, f.projectId, {
    log_stream_id: f.streamId,
    group_by: [{ column_id: 'created_at', interval: '1h' }],
    measures: [
      { op: 'count' },
      { op: 'sum', column_id: 'metrics/duration_ns', alias: 'sum' },
      { op: 'max', column_id: 'metrics/duration_ns', alias: 'max' },
      { op: 'p90', column_id: 'metrics/duration_ns', alias: 'p90' },
    ],
  } as never);
  const step = f.steps.flat().find((s) => s.startsWith('aggregate'));
  assert.ok(step, 'the aggregate reports its step');
  const values = new Map<string, number[]>();
  for (let i = 0; i < N; i++) {
    const s = shown(i, gaps(i));
    const list = values.get(hourOf(at(i))) ?? [];
    list.push(...(level === 'trace' ? [s.trace] : s.spans));
    values.set(hourOf(at(i)), list);
  }
  assert.deepEqual(
    got.rows.map((r) => r['created_at']),
    [...values.keys()],
  );
  for (const row of got.rows) {
    const v = values.get(String(row['created_at']))!;
    const what = `${level} ${String(row['created_at'])}`;
    assert.equal(row['count'], v.length, `${what} count`);
    assert.equal(
      row['sum'],
      v.reduce((a, b) => a + b, 0),
      `${what} sum`,
    );
    assert.equal(row['max'], Math.max(...v), `${what} max`);
    assert.ok(Math.abs(Number(row['p90']) - quantile(v, 0.9)) < 1e-3, `${what} p90: ${String(row['p90'])} != ${quantile(v, 0.9)}`);
  }
  return step;
}

const rollsUp = (step: string) => step.includes('rolling up duration_ns');

for (const sealed of [false, true]) {
  const mode = sealed ? 'sealed and in memory' : 'in memory';

  test(`every record holds its own duration: no roll-up, the same answers (${mode})`, async (t) => {
    const { f, gaps } = await seeded(t, sealed ? EVERY : null, EVERY);
    for (const level of ['trace', 'span'] as const) assert.ok(!rollsUp(await checkHourly(f, level, gaps)), `${level}: no roll-up`);
  });

  test(`some records lack their own duration: the roll-up runs and fills them (${mode})`, async (t) => {
    const { f, gaps } = await seeded(t, sealed ? SOME : null, SOME);
    for (const level of ['trace', 'span'] as const) assert.ok(rollsUp(await checkHourly(f, level, gaps)), `${level}: rolled up`);
  });
}

test('sealed records all hold a value, some in memory do not: the roll-up runs', async (t) => {
  const { f, gaps } = await seeded(t, EVERY, SOME);
  for (const level of ['trace', 'span'] as const) assert.ok(rollsUp(await checkHourly(f, level, gaps)), `${level}: rolled up`);
});

test('some sealed records lack a value, every one in memory holds one: the roll-up runs', async (t) => {
  const { f, gaps } = await seeded(t, SOME, EVERY);
  for (const level of ['trace', 'span'] as const) assert.ok(rollsUp(await checkHourly(f, level, gaps)), `${level}: rolled up`);
});

test('a metric the level never holds (tokens on traces) still rolls up, in one pass with the rest', async (t) => {
  const { f, gaps } = await seeded(t, SOME, SOME);
  f.steps.length = 0;
  const got = await f.store.aggregate('trace', f.projectId, {
    log_stream_id: f.streamId,
    measures: [
      { op: 'sum', column_id: 'metrics/num_input_tokens', alias: 'tokens' },
      { op: 'sum', column_id: 'metrics/duration_ns', alias: 'duration' },
    ],
  } as never);
  const ids = Array.from({ length: N }, (_, i) => i);
  assert.equal(
    got.rows[0]!['tokens'],
    ids.reduce((a, i) => a + 10 + i, 0),
  );
  assert.equal(
    got.rows[0]!['duration'],
    ids.reduce((a, i) => a + shown(i, gaps(i)).trace, 0),
  );
  const step = f.steps.flat().find((s) => s.startsWith('aggregate'))!;
  assert.match(step, /rolling up (num_input_tokens, duration_ns|duration_ns, num_input_tokens) /);
});

for (const [what, gaps] of [
  ['every trace holds its own duration', EVERY],
  ['some traces lack their own duration', SOME],
] as const) {
  test(`traces sorted by duration (${what}): the roll-up runs only where needed, the order as the reference's`, async (t) => {
    const { f } = await seeded(t, gaps, gaps);
    f.steps.length = 0;
    const page = await f.store.partialSearch('trace', f.projectId, {
      log_stream_id: f.streamId,
      sort: { column_id: 'metrics/duration_ns', ascending: false },
      pagination: { starting_token: 0, limit: 1000 },
      select_columns: { column_ids: ['id'], metric_columns_names: ['duration_ns'] },
    } as never);
    const got = (page.records as Record<string, any>[]).map((r) => r['metric_info']?.['duration_ns']?.value);
    const want = Array.from({ length: N }, (_, i) => shown(i, gaps).trace).sort((a, b) => b - a);
    assert.deepEqual(got, want);
    const rolled = f.steps.flat().some((s) => s.includes('roll-up of') && s.includes('duration_ns'));
    assert.equal(rolled, gaps === SOME, f.steps.flat().join(' | '));
  });
}
