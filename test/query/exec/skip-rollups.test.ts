// Guarantees: the planner leaves out a roll-up, a fetch or a page roll-up query only when it cannot
// change the answer. Every answer is checked against the reference evaluator (test/support/
// reference-eval.ts) and the steps the plan ran (onPlan) show what was left out:
// - v2 logging keeps model on llm spans and gives them no children: filters on model (no `type`
//   leaf) read own metric values, no roll-up;
// - OpenTelemetry gives an llm span children: there the roll-ups stay, and the span whose only value
//   is rolled up still matches; an import leaves kind-specific columns off other kinds, as logging does;
// - trace and session roll-ups are left out only for metrics no descendant carries;
// - a page selecting only the sort metric reads it once (no fetch) and runs no roll-up query for
//   childless rows; with children under the page's rows it still does.
// Each case runs with the rows in memory and sealed into Parquet.
import assert from 'node:assert/strict';
import { writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { TraceStore } from '../../../src/engine/trace-store.js';
import type { Level } from '../../../src/query/columns.js';
import { tempDir } from '../../support/helpers.js';
import { jsonRequest, spanHex, traceHex, type SpanSpec } from '../../support/otlp.js';
import { ReferenceEvaluator, type Filter, type FilterBody, type Rec, type Sort } from '../../support/reference-eval.js';
import { internalsOf } from '../../../src/engine/internals.js';

const LEVELS: readonly Level[] = ['span', 'trace', 'session'];
const msgs = [{ role: 'user', content: 'hi' }];

/** v2 traces: a workflow (children, no own quality) over llm and tool spans, and a top-level llm span. */
function traces(n: number): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) => ({
    name: `t${i}`,
    input: 'q',
    created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    metrics: i % 3 === 0 ? { trace_only: i } : {},
    spans: [
      {
        type: 'workflow',
        name: 'wf',
        input: 'x',
        tags: ['prod'],
        spans: [
          {
            type: 'llm',
            name: 'call',
            input: msgs,
            model: i % 2 ? 'gpt-4o' : 'other',
            metrics: { quality: 0.2 + 0.1 * (i % 7) },
            tags: ['prod'],
          },
          { type: 'tool', name: 'tool', input: 'x', metrics: { quality: 0.9 }, tags: i % 2 ? ['prod'] : [] },
        ],
      },
      { type: 'llm', name: 'top', input: msgs, model: 'gpt-4o', metrics: { quality: 0.1 * (i % 10) }, tags: ['prod'] },
    ],
  }));
}

interface Fixture {
  store: TraceStore;
  projectId: string;
  steps: string[][];
}

async function open(t: TestContext): Promise<Fixture> {
  const steps: string[][] = [];
  // The lists tried at any size (by default a store this small is answered by its keys query).
  const store = await TraceStore.open(tempDir(t), { threads: 1, metricTopKRowsPerCandidate: 0, onPlan: (s) => steps.push([...s]) });
  t.after(() => store.close());
  const project = store.createProject({ name: 'p' });
  return { store, projectId: project.id, steps };
}

async function all(store: TraceStore, projectId: string): Promise<Record<Level, Rec[]>> {
  const out = {} as Record<Level, Rec[]>;
  for (const level of LEVELS) out[level] = (await store.search(level, projectId, { limit: 1000 })).records;
  return out;
}

/** Ids and count from tracelake equal the evaluator's (sorted when `sort` is given); returns the steps of the search. */
async function agrees(f: Fixture, ref: ReferenceEvaluator, level: Level, body: FilterBody, sort?: Sort): Promise<string[]> {
  const want = ref.search(level, { ...body, sort: sort ?? null }).map((r) => r['id'] as string);
  f.steps.length = 0;
  const page = await f.store.partialSearch(level, f.projectId, {
    limit: 1000,
    select_columns: { column_ids: ['id'] },
    ...(body as object),
    ...(sort ? { sort } : {}),
  });
  const got = page.records.map((r) => r['id'] as string);
  const search = f.steps[0]!;
  assert.deepEqual(
    sort ? got : [...got].sort(),
    sort ? want : [...want].sort(),
    `${level} ${JSON.stringify(body)} ${JSON.stringify(sort)}`,
  );
  assert.equal((await f.store.count(level, f.projectId, body as never)).total_count, want.length, 'count agrees');
  assert.ok(want.length > 0, 'the case matches something');
  return [...search, ...f.steps[1]!];
}

const rolledUp = (steps: string[], metric: string) => steps.some((s) => s.includes('roll-up of') && s.includes(metric));
const leaf = (filter: Filter): { filter: Filter } => ({ filter });
const model = leaf({ type: 'text', column_id: 'model', operator: 'eq', value: 'gpt-4o' });
const metric = (name: string, operator: string, value: number) => leaf({ type: 'number', column_id: `metrics/${name}`, operator, value });
const prod = leaf({ type: 'collection', column_id: 'tags', operator: 'contains', value: 'prod' });
const type = (value: string) => leaf({ type: 'text', column_id: 'type', operator: 'eq', value });

for (const sealed of [false, true]) {
  const mode = sealed ? 'sealed' : 'in memory';

  test(`v2 data (${mode}): a model filter alone spares the roll-up; without it the roll-up stays and is needed`, async (t) => {
    const f = await open(t);
    const stream = f.store.createLogStream(f.projectId, 'v2');
    await f.store.logTraces(f.projectId, { log_stream_id: stream.id, traces: traces(20) } as never);
    if (sealed) await f.store.flush();
    const ref = new ReferenceEvaluator(await all(f.store, f.projectId));
    const issue = { filter_tree: { and: [model, metric('quality', 'gt', 0.5), prod] } };
    assert.ok(!rolledUp(await agrees(f, ref, 'span', issue), 'quality'), 'model is only on llm spans, which have no children here');
    assert.ok(!rolledUp(await agrees(f, ref, 'span', issue, { column_id: 'metrics/quality', ascending: false }), 'quality'));
    const noChildren = {
      filter_tree: { and: [leaf({ type: 'boolean', column_id: 'has_children', value: false }), metric('quality', 'gte', 0.5)] },
    };
    assert.ok(!rolledUp(await agrees(f, ref, 'span', noChildren), 'quality'));
    // The workflow spans have no quality of their own: they match through their roll-up only.
    const any = { filter_tree: { and: [metric('quality', 'gt', 0.5), { not: type('tool') }] } };
    const steps = await agrees(f, ref, 'span', any);
    assert.ok(rolledUp(steps, 'quality'));
    assert.ok(
      ref.ids('span', any).some((id) => ref.byLevel.span.find((s) => s['id'] === id)!['type'] === 'workflow'),
      'a workflow matches by roll-up',
    );
    // An OR that lets unrestricted rows read the metric keeps the roll-up.
    assert.ok(
      rolledUp(
        await agrees(f, ref, 'span', {
          filter_tree: { or: [{ and: [model, metric('quality', 'gt', 0.5)] }, metric('quality', 'lt', 0.3)] },
        }),
        'quality',
      ),
    );
    // Traces: quality is carried by spans (rolled up); trace_only by no descendant (own values only).
    assert.ok(rolledUp(await agrees(f, ref, 'trace', { filters: [metric('quality', 'gt', 0.4).filter] }), 'quality'));
    assert.ok(
      !rolledUp(
        await agrees(
          f,
          ref,
          'trace',
          { filters: [metric('trace_only', 'gte', 3).filter] },
          { column_id: 'metrics/trace_only', ascending: true },
        ),
        'trace_only',
      ),
    );
    assert.ok(
      rolledUp(await agrees(f, ref, 'session', { filters: [metric('trace_only', 'gte', 3).filter] }), 'trace_only'),
      'sessions roll traces up',
    );
    assert.ok(rolledUp(await agrees(f, ref, 'session', { filters: [metric('quality', 'gt', 0.4).filter] }), 'quality'));
  });

  test(`OpenTelemetry (${mode}): an llm span with children keeps its roll-ups`, async (t) => {
    const f = await open(t);
    const now = Date.now();
    const spans = Array.from({ length: 6 }, (_, i): SpanSpec[] => {
      const traceId = traceHex();
      const parent = spanHex();
      return [
        {
          traceId,
          spanId: parent,
          name: `chat${i}`,
          startMs: now - 100 + i,
          endMs: now,
          attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o' },
        },
        {
          traceId,
          spanId: spanHex(),
          parentSpanId: parent,
          name: `inner${i}`,
          startMs: now - 90 + i,
          endMs: now - 10,
          attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o', 'gen_ai.usage.input_tokens': 5 + i },
        },
      ];
    }).flat();
    await f.store.otlp.log(jsonRequest(spans), { project: 'p', logStream: 'otel' });
    if (sealed) await f.store.flush();
    const ref = new ReferenceEvaluator(await all(f.store, f.projectId));
    assert.ok(
      ref.byLevel.span.some((s) => s['type'] === 'llm' && s['has_children'] === true),
      'OTel gave an llm span children',
    );
    for (const body of [
      { filter_tree: { and: [type('llm'), metric('num_input_tokens', 'gt', 0)] } },
      { filter_tree: { and: [model, metric('num_input_tokens', 'gt', 0)] } },
    ]) {
      const steps = await agrees(f, ref, 'span', body, { column_id: 'metrics/num_input_tokens', ascending: true });
      assert.ok(rolledUp(steps, 'num_input_tokens'), 'the parents match through their children');
      assert.equal(ref.ids('span', body).length, 12, 'parents and children match');
    }
    // A page of the metric: the parents' values are roll-ups. The keys query rolled the sort metric up
    // for every candidate, and its values are the page's: no second roll-up over the page's traces.
    f.steps.length = 0;
    const page = await f.store.partialSearch('span', f.projectId, {
      limit: 50,
      filters: [type('llm').filter],
      sort: { column_id: 'metrics/num_input_tokens', ascending: true },
      select_columns: { column_ids: ['name'], metric_columns_names: ['num_input_tokens'] },
    });
    assert.ok(rolledUp(f.steps[0]!, 'num_input_tokens') && !f.steps[0]!.includes('page roll-ups'), f.steps[0]!.join(' → '));
    const parents = page.records.filter((r) => (r['name'] as string).startsWith('chat'));
    assert.equal(parents.length, 6);
    for (const r of parents)
      assert.equal((r['metric_info'] as Record<string, { value: number }>)['num_input_tokens']!.value, ref.metric(r, 'num_input_tokens'));
  });

  test(`import (${mode}): a model on a workflow span is left out, as every other way in does`, async (t) => {
    const f = await open(t);
    const stream = f.store.createLogStream(f.projectId, 'v2');
    await f.store.logTraces(f.projectId, { log_stream_id: stream.id, traces: traces(8) } as never);
    const out = join(tempDir(t), 'x.jsonl');
    await f.store.data.exportFile(f.projectId, out, { log_stream_id: stream.id, format: 'jsonl' });
    const lines = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    let changed = 0;
    for (const l of lines)
      if (l['type'] === 'workflow') {
        l['model'] = 'gpt-4o';
        l['tool_call_id'] = 'call-1';
        changed++;
      }
    assert.ok(changed > 0);
    const edited = join(tempDir(t), 'edited.jsonl');
    writeFileSync(edited, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
    await internalsOf(f.store).records.dropScope(f.projectId, stream.id);
    await f.store.data.importFile(edited, { project: 'p', logStream: 'imported' });
    if (sealed) await f.store.flush();
    const ref = new ReferenceEvaluator(await all(f.store, f.projectId));
    assert.equal(ref.byLevel.span.length, 8 * 4);
    // Before, the workflow spans kept a model no record shows, and `model eq` matched them.
    const wfModel = { filter_tree: { and: [type('workflow'), model] } };
    assert.equal((await f.store.count('span', f.projectId, wfModel as never)).total_count, 0);
    const toolCall = { filters: [{ type: 'text', column_id: 'tool_call_id', operator: 'eq', value: 'call-1' }] };
    assert.equal((await f.store.count('span', f.projectId, toolCall as never)).total_count, 0);
    const issue = { filter_tree: { and: [model, metric('quality', 'gt', 0.5), prod] } };
    assert.ok(!rolledUp(await agrees(f, ref, 'span', issue, { column_id: 'metrics/quality', ascending: false }), 'quality'));
  });
}

test('a page selecting only the sort metric reads it once and runs no roll-up query for childless rows', async (t) => {
  const f = await open(t);
  const stream = f.store.createLogStream(f.projectId, 'v2');
  await f.store.logTraces(f.projectId, { log_stream_id: stream.id, traces: traces(30) } as never);
  await f.store.flush();
  const body = { limit: 25, filters: [type('llm').filter], sort: { column_id: 'metrics/quality', ascending: false } };
  f.steps.length = 0;
  const light = await f.store.partialSearch('span', f.projectId, { ...body, select_columns: { metric_columns_names: ['quality'] } });
  // One keys query (from the segments' top-k lists where sealed and read, else over everything), no
  // fetch, no roll-up.
  const ran = f.steps[0]!.filter((s) => s !== 'keys (top-k: lists not read yet)');
  assert.equal(ran.length, 1, f.steps[0]!.join());
  assert.match(ran[0]!, /^keys( \(top-k of \d+ listed rows\))?$/, 'no fetch, no roll-up');
  const full = await f.store.search('span', f.projectId, body);
  assert.ok(f.steps[1]!.includes('fetch'));
  assert.deepEqual(
    light.records.map((r) => [r['id'], r['metrics'], r['metric_info']]),
    full.records.map((r) => [
      r['id'],
      { quality: (r['metrics'] as Record<string, number>)['quality'] },
      { quality: (r['metric_info'] as Record<string, unknown>)['quality'] },
    ]),
  );
  // Selecting another metric than the one read: fetched, the same values as the full records.
  const other = await f.store.partialSearch('span', f.projectId, {
    ...body,
    select_columns: { column_ids: ['metrics/trace_only', 'name'], metric_columns_names: ['quality'] },
  });
  assert.ok(f.steps[2]!.includes('fetch'));
  assert.deepEqual(
    other.records.map((r) => [r['id'], r['name'], r['metrics']]),
    full.records.map((r) => [r['id'], r['name'], { quality: (r['metrics'] as Record<string, number>)['quality'] }]),
  );
  // A metric neither filtered nor sorted on comes from the keys scan too.
  const byTime = { limit: 25, filters: [type('llm').filter] };
  const timeLight = await f.store.partialSearch('span', f.projectId, { ...byTime, select_columns: { metric_columns_names: ['quality'] } });
  assert.ok(!f.steps[3]!.includes('fetch') && !f.steps[3]!.includes('page roll-ups'), f.steps[3]!.join());
  const timeFull = await f.store.search('span', f.projectId, byTime);
  assert.deepEqual(
    timeLight.records.map((r) => [r['id'], r['metrics']]),
    timeFull.records.map((r) => [r['id'], { quality: (r['metrics'] as Record<string, number>)['quality'] }]),
  );
  // Workflow spans have children: their page runs the roll-up query, and shows the roll-up.
  const wf = await f.store.partialSearch('span', f.projectId, {
    limit: 5,
    filters: [type('workflow').filter],
    select_columns: { metric_columns_names: ['quality'] },
  });
  assert.ok(f.steps[5]!.includes('page roll-ups'));
  for (const r of wf.records)
    assert.equal((r['metric_info'] as Record<string, { status_type: string }>)['quality']!.status_type, 'roll_up');
  // has_children comes with the keys: shown when selected, absent otherwise.
  assert.ok(!('has_children' in light.records[0]!) && !('name' in light.records[0]!));
  const hc = await f.store.partialSearch('span', f.projectId, { limit: 60, select_columns: { column_ids: ['has_children'] } });
  assert.ok(!f.steps[6]!.includes('fetch'), f.steps[6]!.join());
  const hcFull = await f.store.search('span', f.projectId, { limit: 60 });
  assert.deepEqual(
    hc.records.map((r) => [r['id'], r['has_children']]),
    hcFull.records.map((r) => [r['id'], r['has_children']]),
  );
  assert.ok(hc.records.some((r) => r['has_children'] === true) && hc.records.some((r) => r['has_children'] === false));
});

test('roll-ups of selected metrics on a page equal those of full records, at every level', async (t) => {
  const f = await open(t);
  const stream = f.store.createLogStream(f.projectId, 'v2');
  await f.store.logTraces(f.projectId, { log_stream_id: stream.id, traces: traces(12).slice(0, 6) } as never);
  await f.store.flush();
  await f.store.logTraces(f.projectId, { log_stream_id: stream.id, traces: traces(12).slice(6) } as never); // half in memory
  const ref = new ReferenceEvaluator(await all(f.store, f.projectId));
  const names = ['quality', 'trace_only', "it's; --"];
  for (const level of LEVELS) {
    const full = await f.store.search(level, f.projectId, { limit: 100 });
    const part = await f.store.partialSearch(level, f.projectId, { limit: 100, select_columns: { metric_columns_names: names } });
    assert.equal(part.records.length, full.records.length);
    part.records.forEach((r, i) => {
      const want = full.records[i]!;
      assert.equal(r['id'], want['id']);
      const info = (want['metric_info'] ?? {}) as Record<string, { value: number }>;
      const picked = Object.fromEntries(names.filter((n) => info[n] !== undefined).map((n) => [n, info[n]]));
      assert.deepEqual(r['metric_info'] ?? {}, picked, `${level} ${String(r['id'])}`);
      for (const n of names) {
        const got = (r['metric_info'] as Record<string, { value: number }> | null)?.[n]?.value;
        const expect = ref.metric(want, n);
        if (expect === undefined) assert.equal(got, undefined);
        else assert.ok(Math.abs(got! - expect) < 1e-9, `${level} ${n}: ${got} vs ${expect}`);
      }
    });
  }
});

test('OpenTelemetry and PATCH leave model off a workflow span, so the fact the planner measures holds', async (t) => {
  const f = await open(t);
  const now = Date.now();
  const traceId = traceHex();
  const wf = spanHex();
  await f.store.otlp.log(
    jsonRequest([
      {
        traceId,
        spanId: wf,
        name: 'wf',
        startMs: now - 100,
        endMs: now,
        attributes: { 'tracelake.span.type': 'workflow', 'gen_ai.request.model': 'gpt-4o' },
      },
      {
        traceId,
        spanId: spanHex(),
        parentSpanId: wf,
        name: 'inner',
        startMs: now - 90,
        endMs: now - 10,
        attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o', 'gen_ai.usage.input_tokens': 9 },
      },
    ]),
    { project: 'p', logStream: 'otel' },
  );
  const otelRefs = await all(f.store, f.projectId);
  const wfRec = otelRefs.span.find((s) => s['name'] === 'wf')!;
  assert.equal(wfRec['type'], 'workflow');
  const stream = f.store.createLogStream(f.projectId, 'v2');
  await f.store.logTraces(f.projectId, { log_stream_id: stream.id, traces: traces(4) } as never);
  const v2wf = (await f.store.search('span', f.projectId, { log_stream_id: stream.id, filters: [type('workflow').filter], limit: 1 }))
    .records[0]!;
  await f.store.records.updateRecord('span', f.projectId, String(v2wf['id']), {
    log_stream_id: stream.id,
    model: 'gpt-4o',
    tags: ['patched'],
  } as never);
  for (const sealed of [false, true]) {
    if (sealed) await f.store.flush();
    const ref = new ReferenceEvaluator(await all(f.store, f.projectId));
    assert.equal(
      (await f.store.count('span', f.projectId, { filter_tree: { and: [type('workflow'), model] } } as never)).total_count,
      0,
      'no workflow span has a model',
    );
    assert.ok(
      ref.byLevel.span.some((s) => s['id'] === v2wf['id'] && (s['tags'] as string[]).includes('patched')),
      'the PATCH was applied',
    );
    assert.ok(
      !rolledUp(await agrees(f, ref, 'span', { filter_tree: { and: [model, metric('num_input_tokens', 'gt', 0)] } }), 'num_input_tokens'),
    );
  }
});
