// Guarantees: records of every kind round-trip through the engine (in memory, sealed, and after a
// reopen) with their links and fields intact; retries never duplicate; spans logged into a new trace
// create it and its session; the folder cannot be opened twice.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sizeBytes } from '../../src/engine/store-options.js';
import { TraceStore } from '../../src/engine/trace-store.js';
import { type ConflictError, InvalidRequestError, NotFoundError } from '../../src/errors.js';
import { everyKindTrace, openStore, tempDir } from '../support/helpers.js';
import { internalsOf } from '../../src/engine/internals.js';

type Rec = Record<string, any>;

async function allRecords(store: TraceStore, projectId: string, runId: string): Promise<Rec[]> {
  const out: Rec[] = [];
  for (const kinds of [['span'], ['trace'], ['session']] as const) {
    const page = await store.search(kinds[0], projectId, { log_stream_id: runId, limit: 1000 });
    out.push(...page.records);
  }
  return out;
}

function checkEveryKind(records: Rec[]): void {
  const byName = new Map(records.map((r) => [`${r.type}:${r.name}`, r]));
  const trace = byName.get('trace:trace-a')!;
  const agent = byName.get('agent:planner')!;
  const llm = byName.get('llm:chat')!;
  const wf = byName.get('workflow:lookup')!;
  const ret = byName.get('retriever:search')!;
  const tool = byName.get('tool:calc')!;
  const control = byName.get('control:guard')!;
  const session = records.find((r) => r.type === 'session')!;
  assert.ok(trace && agent && llm && wf && ret && tool && control && session, 'every kind is present');
  assert.equal(records.length, 8);
  // links
  assert.equal(trace.trace_id, trace.id);
  assert.equal(trace.session_id, session.id);
  for (const s of [agent, llm, wf, ret, tool, control]) {
    assert.equal(s.trace_id, trace.id);
    assert.equal(s.session_id, session.id);
  }
  assert.equal(agent.parent_id, trace.id);
  assert.equal(llm.parent_id, agent.id);
  assert.equal(wf.parent_id, agent.id);
  assert.equal(ret.parent_id, wf.id);
  assert.equal(tool.parent_id, wf.id);
  assert.equal(control.parent_id, agent.id);
  // depth-first step numbers
  assert.deepEqual(
    [agent, llm, wf, ret, tool, control].map((s) => s.step_number),
    [1, 2, 3, 4, 5, 6],
  );
  assert.deepEqual(
    [trace, agent, llm, wf, ret, tool, control].map((s) => s.has_children),
    [true, true, false, true, false, false, false],
  );
  // fields
  assert.equal(trace.input, 'question a');
  assert.equal(trace.output, 'answer a');
  assert.deepEqual(trace.tags, ['t1', 'a']);
  assert.deepEqual(trace.user_metadata, { env: 'test', n: '3' });
  assert.deepEqual(trace.metrics, { duration_ns: 5_000_000 });
  assert.equal(trace.created_at, '2026-03-01T10:00:00.000Z');
  assert.equal(agent.agent_type, 'planner');
  assert.deepEqual(llm.input, [
    { role: 'system', content: 'be brief' },
    { role: 'user', content: 'say a' },
  ]);
  assert.deepEqual(llm.output, { role: 'assistant', content: 'a!' });
  assert.equal(llm.model, 'gpt-4o');
  assert.equal(llm.temperature, 0.2);
  assert.equal(llm.finish_reason, 'stop');
  assert.deepEqual(llm.tools, [{ type: 'function', function: { name: 'calc' } }]);
  // The cost the client did not log is computed from the tokens at gpt-4o's shipped prices.
  assert.deepEqual(llm.metrics, { num_input_tokens: 12, num_output_tokens: 3, custom_score: 0.75, label: 'good', cost: 0.00006 });
  assert.deepEqual(ret.output, [
    { content: 'doc one', metadata: { score: 0.9 } },
    { content: 'doc two', metadata: {} },
  ]);
  assert.equal(tool.tool_call_id, 'call-1');
  assert.equal(tool.output, '2');
  assert.deepEqual(
    [control.control_id, control.agent_name, control.check_stage, control.applies_to, control.evaluator_name, control.selector_path],
    [7, 'planner', 'post', 'llm_call', 'pii', '$.output'],
  );
  assert.equal(session.input, 'question a');
}

test('nested traces of every kind read back intact before sealing, after sealing and after reopening', async (t) => {
  const { dir, store, projectId, logStreamId } = await openStore(t);
  const res = await store.logTraces(projectId, { log_stream_id: logStreamId, traces: [everyKindTrace('a') as any] });
  assert.equal(res.traces_count, 1);
  assert.equal(res.spans_count, 6);
  assert.equal(res.records_count, 7);
  checkEveryKind(await allRecords(store, projectId, logStreamId));
  await store.flush();
  assert.equal(store.records.stats.memRows, 0);
  assert.ok(store.records.stats.segments >= 3, 'spans, traces and sessions are sealed apart');
  checkEveryKind(await allRecords(store, projectId, logStreamId));
  await store.close();
  const again = await TraceStore.open(dir);
  t.after(() => again.close());
  checkEveryKind(await allRecords(again, projectId, logStreamId));
});

test('a retried request (with client ids, or with the same idempotency key) does not duplicate records', async (t) => {
  const { store, projectId, logStreamId } = await openStore(t);
  const withoutIds = everyKindTrace('b');
  const withIds = { ...everyKindTrace('c'), id: '5b6a3f3e-1f0e-4a55-9d7a-0c1f1f2b8e01' };
  // Ids sent by the client: each retry replaces. Without ids, only the key makes the retry the same request.
  for (let round = 0; round < 2; round++) {
    await store.logTraces(projectId, { log_stream_id: logStreamId, traces: [structuredClone(withIds) as any] });
    await store.logTraces(projectId, { log_stream_id: logStreamId, traces: [structuredClone(withoutIds) as any] }, { idempotencyKey: 'b' });
  }
  assert.equal((await store.count('span', projectId, { log_stream_id: logStreamId })).total_count, 12);
  await store.flush();
  await store.logTraces(projectId, { log_stream_id: logStreamId, traces: [structuredClone(withIds) as any] });
  await store.logTraces(projectId, { log_stream_id: logStreamId, traces: [structuredClone(withoutIds) as any] }, { idempotencyKey: 'b' });
  assert.equal((await store.count('span', projectId, { log_stream_id: logStreamId })).total_count, 12, 'retry after sealing replaces');
  assert.equal((await store.count('trace', projectId, { log_stream_id: logStreamId })).total_count, 2);
  assert.equal((await store.count('session', projectId, { log_stream_id: logStreamId })).total_count, 2);
});

test('log spans into a trace that does not exist creates the trace and its session, then extends it', async (t) => {
  const { store, projectId, logStreamId } = await openStore(t);
  const traceId = '0d7e54c2-7d5b-4a0f-8d6e-3b2a1c0f9e11';
  const wfId = '1d7e54c2-7d5b-4a0f-8d6e-3b2a1c0f9e12';
  const r1 = await store.records.logSpans(projectId, {
    log_stream_id: logStreamId,
    trace_id: traceId,
    parent_id: traceId,
    spans: [{ type: 'workflow', id: wfId, name: 'wf', input: 'go' }],
  });
  assert.equal(r1.records_count, 1);
  assert.ok(r1.session_id);
  await store.flush(); // the parent is sealed now: adding a child must rewrite it, not duplicate it
  await store.records.logSpans(projectId, {
    log_stream_id: logStreamId,
    trace_id: traceId,
    parent_id: wfId,
    spans: [{ type: 'tool', name: 'calc', input: '1+1', output: '2' }],
  });
  const spans = (await store.search('span', projectId, { log_stream_id: logStreamId })).records;
  assert.equal(spans.length, 2);
  const wf = spans.find((s) => s['id'] === wfId)!;
  const tool = spans.find((s) => s['name'] === 'calc')!;
  assert.equal(wf['has_children'], true);
  assert.equal(tool['parent_id'], wfId);
  assert.equal(tool['step_number'], 2);
  assert.equal(tool['session_id'], r1.session_id);
  const traces = (await store.search('trace', projectId, { log_stream_id: logStreamId })).records;
  assert.equal(traces.length, 1);
  assert.equal(traces[0]!['id'], traceId);
  assert.equal(traces[0]!['has_children'], true);
  assert.equal((await store.count('session', projectId, { log_stream_id: logStreamId })).total_count, 1);
});

test('a parent from another trace, an unknown parent and a childless kind as parent are refused', async (t) => {
  const { store, projectId, logStreamId } = await openStore(t);
  const res = await store.logTraces(projectId, { log_stream_id: logStreamId, traces: [everyKindTrace('d') as any] });
  const spans = (await store.search('span', projectId, { log_stream_id: logStreamId })).records;
  const llm = spans.find((s) => s['type'] === 'llm')!;
  const agent = spans.find((s) => s['type'] === 'agent')!;
  const other = '7d7e54c2-7d5b-4a0f-8d6e-3b2a1c0f9e13';
  const attempt = (trace_id: string, parent_id: string) =>
    store.records.logSpans(projectId, { log_stream_id: logStreamId, trace_id, parent_id, spans: [{ type: 'tool', name: 'x' }] });
  await assert.rejects(
    attempt(other, String(agent['id'])),
    (e: InvalidRequestError) => e.issues[0]!.loc.join('.') === 'body.parent_id' && /belongs to trace/.test(e.issues[0]!.msg),
  );
  await assert.rejects(attempt(res.trace_ids[0]!, '8d7e54c2-7d5b-4a0f-8d6e-3b2a1c0f9e14'), InvalidRequestError);
  await assert.rejects(attempt(res.trace_ids[0]!, String(llm['id'])), /cannot have child spans/);
  assert.equal((await store.count('span', projectId, { log_stream_id: logStreamId })).total_count, 6);
});

test('run addressing: none, several, unknown and wrong-kind run ids are refused', async (t) => {
  const { store, projectId, logStreamId } = await openStore(t);
  const exp = store.catalog.createExperiment(projectId, 'exp-1');
  const trace = everyKindTrace('e') as any;
  await assert.rejects(store.logTraces(projectId, { traces: [trace] }), InvalidRequestError);
  await assert.rejects(
    store.logTraces(projectId, { log_stream_id: logStreamId, experiment_id: exp.id, traces: [trace] }),
    InvalidRequestError,
  );
  await assert.rejects(store.logTraces(projectId, { log_stream_id: exp.id, traces: [trace] }), NotFoundError);
  await assert.rejects(
    store.logTraces('9d7e54c2-7d5b-4a0f-8d6e-3b2a1c0f9e15', { log_stream_id: logStreamId, traces: [trace] }),
    NotFoundError,
  );
  const ok = await store.logTraces(projectId, { experiment_id: exp.id, traces: [trace] });
  assert.equal(ok.experiment_id, exp.id);
  assert.equal((await store.count('span', projectId, { experiment_id: exp.id })).total_count, 6);
  assert.equal((await store.count('span', projectId, { log_stream_id: logStreamId })).total_count, 0);
});

test('a level that is not span, trace or session is refused as the level, by every call that takes one', async (t) => {
  const fx = await openStore(t);
  const body = { log_stream_id: fx.logStreamId, filters: [{ type: 'text', column_id: 'model', operator: 'eq', value: 'x' }] };
  const r = fx.store.records;
  const calls: [string, () => Promise<unknown>][] = [
    ['count', () => r.count('spans' as never, fx.projectId, body as never)],
    ['search', () => r.search('spans' as never, fx.projectId, body as never)],
    ['partialSearch', () => r.partialSearch('spans' as never, fx.projectId, { ...body, select_columns: { column_ids: ['id'] } } as never)],
    ['aggregate', () => r.aggregate('spans' as never, fx.projectId, { ...body, measures: [{ op: 'count' }] } as never)],
    ['delete', () => r.delete('spans' as never, fx.projectId, body as never)],
    ['availableColumns', () => r.availableColumns('spans' as never, fx.projectId, { log_stream_id: fx.logStreamId })],
    ['getRecord', () => r.getRecord('spans' as never, fx.projectId, '8d7e54c2-7d5b-4a0f-8d6e-3b2a1c0f9e14')],
  ];
  for (const [name, call] of calls)
    await assert.rejects(
      call,
      (e: InvalidRequestError) =>
        e instanceof InvalidRequestError &&
        e.issues[0]!.loc.join('.') === 'level' &&
        /one of span, trace, session, not "spans"/.test(e.issues[0]!.msg),
      name,
    );
});

test('paging walks every span once in created_at desc, id desc order', async (t) => {
  const { store, projectId, logStreamId } = await openStore(t, { sealRows: 50 });
  for (let i = 0; i < 12; i++) await store.logTraces(projectId, { log_stream_id: logStreamId, traces: [everyKindTrace(`p${i}`) as any] });
  const seen: Rec[] = [];
  let token: number | null = 0;
  while (token !== null) {
    const page = await store.search('span', projectId, { log_stream_id: logStreamId, starting_token: token, limit: 7 });
    seen.push(...page.records);
    token = page.next_starting_token;
  }
  assert.equal(seen.length, 72);
  assert.equal(new Set(seen.map((r) => r['id'])).size, 72);
  for (let i = 1; i < seen.length; i++) {
    const a = seen[i - 1]!;
    const b = seen[i]!;
    assert.ok(a['created_at'] > b['created_at'] || (a['created_at'] === b['created_at'] && a['id'] > b['id']), `order at ${i}`);
  }
});

test('a second open of the same folder fails with a clear error', async (t) => {
  const { dir } = await openStore(t);
  await assert.rejects(TraceStore.open(dir), (e: ConflictError) => e.code === 'STORE_LOCKED' && /in use by process/.test(e.message));
});

test('a memory limit that is not a size is refused before anything opens; a valid one opens', async (t) => {
  const dir = tempDir(t);
  await assert.rejects(
    TraceStore.open(dir, { memoryLimit: "1GB'; DROP TABLE mem; --" }),
    (e: InvalidRequestError) => e instanceof InvalidRequestError && /size such as/.test(e.message),
  );
  const store = await TraceStore.open(dir, { memoryLimit: '768MB' });
  await store.close(); // the refused open left no lock behind, and the valid limit opened
});

test('memory tables larger than half the memory limit are refused before anything opens; raising the limit with them opens', async (t) => {
  const dir = tempDir(t);
  const refused = (loc: string, msg: RegExp) => (e: InvalidRequestError) =>
    e instanceof InvalidRequestError && e.issues[0]?.loc[0] === loc && msg.test(e.message);
  // The default limit is 384MB (384,000,000 bytes): 192,000,000 is the most a table may hold.
  await assert.rejects(
    TraceStore.open(dir, { memTableBytes: 192_000_001 }),
    refused('memTableBytes', /at most half of memoryLimit \(384MB\)/),
  );
  await assert.rejects(TraceStore.open(dir, { walRollBytes: 1e12 }), refused('walRollBytes', /at most half/));
  await assert.rejects(
    TraceStore.open(dir, { memTableBytes: 600 * 2 ** 20, memoryLimit: '1GB' }),
    refused('memTableBytes', /memoryLimit \(1GB\)/),
  );
  for (const bad of [0, -1, Number.NaN, '32' as unknown as number])
    await assert.rejects(TraceStore.open(dir, { memTableBytes: bad }), refused('memTableBytes', /positive number/));
  await (await TraceStore.open(dir, { memTableBytes: 192_000_000 })).close();
  await (await TraceStore.open(dir, { memTableBytes: 600 * 2 ** 20, memoryLimit: '1.5GiB' })).close();
});

test('sizes are read as DuckDB reads them', () => {
  assert.equal(sizeBytes('384MB'), 384e6);
  assert.equal(sizeBytes('1.5GiB'), 1.5 * 2 ** 30);
  assert.equal(sizeBytes('512 kib'), 512 * 1024);
  assert.equal(sizeBytes('100B'), 100);
  assert.ok(Number.isNaN(sizeBytes('lots')));
});

test('mergeThreads that is not a whole number from 0 is refused before anything opens; 0 and 2 open', async (t) => {
  const dir = tempDir(t);
  for (const bad of [-1, 1.5, Number.NaN, '2' as unknown as number]) {
    await assert.rejects(
      TraceStore.open(dir, { mergeThreads: bad }),
      (e: InvalidRequestError) =>
        e instanceof InvalidRequestError && e.issues[0]?.loc[0] === 'mergeThreads' && /whole number/.test(e.message),
    );
  }
  for (const ok of [0, 2]) await (await TraceStore.open(dir, { mergeThreads: ok })).close();
});

test('topListMinRows that is not a number of rows is refused before anything opens; 0 and Infinity open', async (t) => {
  const dir = tempDir(t);
  for (const bad of [-1, Number.NaN, '2' as unknown as number]) {
    await assert.rejects(
      TraceStore.open(dir, { topListMinRows: bad }),
      (e: InvalidRequestError) =>
        e instanceof InvalidRequestError && e.issues[0]?.loc[0] === 'topListMinRows' && /number of rows/.test(e.message),
    );
  }
  for (const ok of [0, Number.POSITIVE_INFINITY]) await (await TraceStore.open(dir, { topListMinRows: ok })).close();
});

test('dropping a run removes its records (sealed and in memory) for good, and only its records', async (t) => {
  const { dir, store, projectId, logStreamId } = await openStore(t);
  const other = store.createLogStream(projectId, 'other');
  await store.logTraces(projectId, { log_stream_id: logStreamId, traces: [everyKindTrace('f') as any] });
  await store.logTraces(projectId, { log_stream_id: other.id, traces: [everyKindTrace('g') as any] });
  await store.flush();
  await store.logTraces(projectId, { log_stream_id: logStreamId, traces: [everyKindTrace('h') as any] });
  assert.equal(await internalsOf(store).records.dropScope(projectId, logStreamId), 16, 'two traces, their sessions and 12 spans');
  assert.equal((await store.count('span', projectId, { log_stream_id: logStreamId })).total_count, 0);
  assert.equal((await store.count('span', projectId, { log_stream_id: other.id })).total_count, 6);
  await store.close();
  const again = await TraceStore.open(dir);
  t.after(() => again.close());
  assert.equal((await again.count('span', projectId, { log_stream_id: logStreamId })).total_count, 0);
  assert.equal((await again.count('span', projectId, { log_stream_id: other.id })).total_count, 6);
});

test('memory() reports the memory tables DuckDB holds, growing with logged rows', async (t) => {
  const { store, projectId, logStreamId } = await openStore(t);
  const total = (m: Record<string, number>) => Object.values(m).reduce((a, b) => a + b, 0);
  const before = await store.maintenance.memory();
  const traces = Array.from({ length: 200 }, (_, i) => ({ ...everyKindTrace(`m${i}`), output: 'x'.repeat(2000) }));
  await store.logTraces(projectId, { log_stream_id: logStreamId, traces: traces as never });
  const after = await store.maintenance.memory();
  assert.ok(total(after.duckdb) > total(before.duckdb), JSON.stringify({ before: before.duckdb, after: after.duckdb }));
  assert.ok(after.process.rss > 0 && after.process.heapUsed > 0);
  // Merges run on a database of their own: its buffer manager's tags are listed too.
  assert.ok(
    Object.keys(after.duckdbMerge).length > 0 && Object.values(after.duckdbMerge).every((b) => b >= 0),
    JSON.stringify(after.duckdbMerge),
  );
  // Rows in memory are keyed by id; a seal moves them to the sealed id index and empties that map.
  assert.ok(after.js['memIds']! > 0 && after.js['idIndexHashes'] === 0, JSON.stringify(after.js));
  await store.flush();
  const sealed = await store.maintenance.memory();
  assert.equal(sealed.js['memIds'], 0);
  assert.equal(sealed.js['idIndexHashes'], after.js['memIds']);
  assert.ok(sealed.js['segments']! > 0 && sealed.js['idIndexBytes']! > 0, JSON.stringify(sealed.js));
});
