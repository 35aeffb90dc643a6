// Guarantees: store.otlp.log stores each OTel span once however often it is exported; children that
// arrive before their parent move under it when it comes, even after the store was closed and opened
// again in between; traces naming one session id share one session; the target comes from the
// options, else the resource attributes, else "default"; typed errors for what cannot be decoded.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TraceStore } from '../../../src/engine/trace-store.js';
import { BadRequestError, ForbiddenError, PayloadTooLargeError } from '../../../src/errors.js';
import { jsonRequest, protobufRequest, spanHex, traceHex, type SpanSpec } from '../../support/otlp.js';
import { tempDir } from '../../support/helpers.js';

const uuidOf = (hex: string) => `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;

function family(traceId = traceHex()) {
  const now = Date.now();
  const root: SpanSpec = {
    traceId,
    spanId: spanHex(),
    name: 'root',
    startMs: now - 100,
    endMs: now,
    attributes: { 'openinference.span.kind': 'AGENT', 'input.value': 'in', 'output.value': 'out' },
  };
  const mid: SpanSpec = {
    traceId,
    spanId: spanHex(),
    parentSpanId: root.spanId,
    name: 'mid',
    startMs: now - 90,
    endMs: now - 10,
    attributes: { 'openinference.span.kind': 'CHAIN' },
  };
  const leaf: SpanSpec = {
    traceId,
    spanId: spanHex(),
    parentSpanId: mid.spanId,
    name: 'leaf',
    startMs: now - 80,
    endMs: now - 20,
    attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.usage.input_tokens': 5 },
  };
  return { traceId, root, mid, leaf };
}

async function tree(store: TraceStore, projectId: string, traceHexId: string): Promise<Record<string, string>> {
  const spans = (
    await store.search('span', projectId, {
      filters: [{ type: 'id', column_id: 'trace_id', operator: 'eq', value: uuidOf(traceHexId) }],
      limit: 100,
    })
  ).records;
  const names = new Map(spans.map((s) => [s['id'], s['name']]));
  names.set(uuidOf(traceHexId), 'TRACE');
  return Object.fromEntries(
    spans.map((s) => [
      s['name'],
      `${names.get(s['parent_id']) ?? `missing ${String(s['parent_id'])}`}${s['has_children'] ? ' +children' : ''}`,
    ]),
  );
}

test('children first, parents later (across a restart), retries stored once', async (t) => {
  const dir = tempDir(t);
  let store = await TraceStore.open(dir);
  const f = family();
  const options = { project: 'p', logStream: 'ls' };
  await store.otlp.log(jsonRequest([f.leaf]), options);
  const projectId = store.findProjects({ name: 'p' })[0]!.id;
  assert.deepEqual(await tree(store, projectId, f.traceId), { leaf: 'TRACE' });
  await store.close();
  store = await TraceStore.open(dir);
  t.after(() => store.close());
  await store.otlp.log(protobufRequest([f.mid]), options); // the leaf's parent, after a restart: found from the stored leaf
  assert.deepEqual(await tree(store, projectId, f.traceId), { leaf: 'mid', mid: 'TRACE +children' });
  const before = (await store.search('span', projectId, { limit: 100 })).records.map((s) => [s['id'], s['step_number']]);
  const retry = await store.otlp.log(jsonRequest([f.leaf, f.mid]), options);
  assert.deepEqual([retry.accepted_spans, retry.duplicate_spans, retry.rejected_spans], [2, 2, 0]);
  assert.deepEqual(
    (await store.search('span', projectId, { limit: 100 })).records.map((s) => [s['id'], s['step_number']]),
    before,
    'a retry changes nothing',
  );
  await store.otlp.log(jsonRequest([f.root]), options);
  assert.deepEqual(await tree(store, projectId, f.traceId), { leaf: 'mid', mid: 'root +children', root: 'TRACE +children' });
  const trace = await store.records.getRecord('trace', projectId, uuidOf(f.traceId));
  assert.deepEqual([trace['name'], trace['input'], trace['output']], ['root', 'in', 'out']);
  assert.equal((await store.count('span', projectId, {})).total_count, 3);
  assert.equal((await store.count('trace', projectId, {})).total_count, 1);
  assert.equal((await store.count('session', projectId, {})).total_count, 1);
});

test('a whole trace in one export, in any order, links the same way', async (t) => {
  const store = await TraceStore.open(tempDir(t));
  t.after(() => store.close());
  const f = family();
  await store.otlp.log(jsonRequest([f.leaf, f.root, f.mid]));
  const projectId = store.findProjects({ name: 'default' })[0]!.id;
  assert.deepEqual(await tree(store, projectId, f.traceId), { leaf: 'mid', mid: 'root +children', root: 'TRACE +children' });
  const steps = (await store.search('span', projectId, { sort: { column_id: 'step_number', ascending: true } })).records.map(
    (s) => s['name'],
  );
  assert.deepEqual(steps, ['root', 'mid', 'leaf'], 'steps follow start times');
});

test('one session per external id, shared by the traces that name it; others get their own', async (t) => {
  const store = await TraceStore.open(tempDir(t));
  t.after(() => store.close());
  const a = family();
  const b = family();
  const c = family();
  a.leaf.attributes!['session.id'] = 'chat-1';
  b.root.attributes!['gen_ai.conversation.id'] = 'chat-1';
  await store.otlp.log(jsonRequest([a.leaf, a.mid, a.root]));
  await store.otlp.log(jsonRequest([b.leaf])); // no session named yet: its own
  await store.otlp.log(jsonRequest([b.mid, b.root])); // now it names chat-1: it moves there
  await store.otlp.log(jsonRequest([c.root]));
  const projectId = store.findProjects({ name: 'default' })[0]!.id;
  const sessions = (await store.search('session', projectId, {})).records;
  assert.equal(sessions.length, 2);
  const shared = sessions.find((s) => s['external_id'] === 'chat-1')!;
  const traces = (await store.search('trace', projectId, {})).records;
  const sessionOf = (h: string) => traces.find((x) => x['id'] === uuidOf(h))!['session_id'];
  assert.equal(sessionOf(a.traceId), shared['id']);
  assert.equal(sessionOf(b.traceId), shared['id']);
  assert.notEqual(sessionOf(c.traceId), shared['id']);
  const bSpans = (
    await store.search('span', projectId, { filters: [{ type: 'id', column_id: 'trace_id', operator: 'eq', value: uuidOf(b.traceId) }] })
  ).records;
  assert.deepEqual(
    bSpans.map((s) => s['session_id']),
    [shared['id'], shared['id'], shared['id']],
  );
});

test('targets: options, then resource attributes, then default; rights; typed errors', async (t) => {
  const store = await TraceStore.open(tempDir(t), { maxSpansPerRequest: 3 });
  t.after(() => store.close());
  const one = () => [family().root];
  const r = await store.otlp.log(jsonRequest(one(), { 'tracelake.project.name': 'from-res', 'tracelake.log_stream.name': 'rs' }));
  assert.deepEqual(
    r.targets.map((x) => [x.project_name, x.log_stream_name, x.spans]),
    [['from-res', 'rs', 1]],
  );
  const o = await store.otlp.log(jsonRequest(one(), { 'tracelake.project.name': 'from-res' }), { project: 'from-options' });
  assert.deepEqual(
    o.targets.map((x) => [x.project_name, x.log_stream_name]),
    [['from-options', 'default']],
  );
  const viewer = store.users.create({ email: 'v@x' });
  store.catalog.addProjectMember(store.findProjects({ name: 'from-res' })[0]!.id, viewer.id, 'viewer');
  await assert.rejects(store.otlp.log(jsonRequest(one()), { project: 'from-res', user: viewer }), ForbiddenError);
  await assert.rejects(store.otlp.log(new Uint8Array([0xff, 0x01])), BadRequestError);
  await assert.rejects(store.otlp.log('a string'), BadRequestError);
  const f = family();
  await assert.rejects(store.otlp.log(jsonRequest([f.root, f.mid, f.leaf, family().root])), PayloadTooLargeError);
  const text = await store.otlp.log(JSON.stringify(jsonRequest(one())), { project: 'from-text' });
  assert.deepEqual(
    text.targets.map((x) => [x.project_name, x.spans]),
    [['from-text', 1]],
  );
  const empty = await store.otlp.log({});
  assert.deepEqual([empty.accepted_spans, empty.targets], [0, []]);
});
