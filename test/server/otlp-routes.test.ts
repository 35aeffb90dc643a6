// Guarantees: POST /v1/traces and /otel/traces take protobuf and JSON, plain, gzip or deflate, and
// answer in the request's encoding; they refuse with the right status (400, 401, 403, 404, 413, 415,
// 503 + Retry-After) and a google.rpc.Status body, never a 5xx; a bad span is refused alone. Requests
// are encoded and protobuf answers decoded by test/support/otlp-proto.ts, not by tracelake's codec.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deflateSync, gzipSync } from 'node:zlib';
import { jsonRequest, postOtlp, protobufRequest, spanHex, traceHex, type SpanSpec } from '../support/otlp.js';
import { decodeResponse, decodeStatus } from '../support/otlp-proto.js';
import { startServer } from '../support/helpers.js';

function spans(n: number, traceId = traceHex()): SpanSpec[] {
  const now = Date.now();
  const root: SpanSpec = {
    traceId,
    spanId: spanHex(),
    name: 'root',
    startMs: now - 100,
    endMs: now,
    attributes: { 'openinference.span.kind': 'CHAIN', 'input.value': 'q' },
  };
  return [
    root,
    ...Array.from({ length: n - 1 }, (_, i) => ({
      traceId,
      spanId: spanHex(),
      parentSpanId: root.spanId,
      name: `step ${i}`,
      startMs: now - 90 + i,
      endMs: now - 80 + i,
      attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.usage.input_tokens': i },
    })),
  ];
}

test('both paths, both encodings, gzip and deflate; answers in the request encoding', async (t) => {
  const s = await startServer(t);
  const headers = { 'Galileo-API-Key': s.key, project: 'test-project', logstream: 'default' };
  const a = spans(3);
  const r1 = await postOtlp(s.url, protobufRequest(a), headers, { gzip: true });
  assert.equal(r1.status, 200);
  assert.equal(r1.headers.get('content-type'), 'application/x-protobuf');
  assert.deepEqual(decodeResponse(r1.bytes), {});
  const b = spans(2);
  const r2 = await fetch(`${s.url}/otel/traces`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json; charset=utf-8', 'content-encoding': 'deflate' },
    body: deflateSync(JSON.stringify(jsonRequest(b))),
  });
  assert.equal(r2.status, 200);
  assert.match(r2.headers.get('content-type') ?? '', /application\/json/);
  assert.deepEqual(await r2.json(), {});
  const count = await s.call('POST', `/projects/${s.projectId}/spans/count`, { log_stream_id: s.logStreamId });
  assert.equal(count.body.total_count, 5);
  // A bearer token works as on every route.
  const login = await s.call('POST', '/login/api_key', { api_key: s.key });
  const r3 = await postOtlp(s.url, protobufRequest(spans(1)), {
    authorization: `Bearer ${login.body.access_token}`,
    project: 'test-project',
  });
  assert.equal(r3.status, 200);
});

test('refusals: 400, 401, 413, 415, with a google.rpc.Status in the request encoding', async (t) => {
  const s = await startServer(t, { bodyLimit: 64 * 1024 });
  const headers = { 'Galileo-API-Key': s.key, project: 'test-project' };
  const noAuth = await postOtlp(s.url, protobufRequest(spans(1)), { project: 'test-project' });
  assert.equal(noAuth.status, 401);
  assert.deepEqual(decodeStatus(noAuth.bytes).code, 16);
  const badKey = await postOtlp(s.url, JSON.stringify(jsonRequest(spans(1))), { 'Galileo-API-Key': 'nope' });
  assert.equal(badKey.status, 401);
  assert.equal(JSON.parse(badKey.bytes.toString()).code, 16);
  const garbageJson = await postOtlp(s.url, '{"resourceSpans": [', headers);
  assert.equal(garbageJson.status, 400);
  assert.match(JSON.parse(garbageJson.bytes.toString()).detail, /not valid JSON/);
  const wrongShape = await postOtlp(s.url, '{"resourceSpans": {"a": 1}}', headers);
  assert.equal(wrongShape.status, 400);
  const garbageProto = await postOtlp(s.url, new Uint8Array([0xff, 0xff, 0xff]), headers);
  assert.equal(garbageProto.status, 400);
  assert.equal(decodeStatus(garbageProto.bytes).code, 3);
  // Over the limit on the wire, and (the same limit) after decompression: a small gzip of a large body.
  const tooBig = await postOtlp(s.url, new Uint8Array(70 * 1024), headers);
  assert.equal(tooBig.status, 413);
  const huge = JSON.stringify(jsonRequest(spans(1), { 'service.name': 'x', pad: 'a'.repeat(200 * 1024) }));
  const bomb = await postOtlp(s.url, huge, headers, { gzip: true });
  assert.ok(gzipSync(huge).length < 64 * 1024);
  assert.equal(bomb.status, 413);
  assert.match(JSON.parse(bomb.bytes.toString()).detail, /decompressed/);
  const text = await fetch(`${s.url}/v1/traces`, { method: 'POST', headers: { ...headers, 'content-type': 'text/plain' }, body: 'hi' });
  assert.equal(text.status, 415);
  const brotli = await fetch(`${s.url}/v1/traces`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', 'content-encoding': 'br' },
    body: 'x',
  });
  assert.equal(brotli.status, 415);
  const count = await s.call('POST', `/projects/${s.projectId}/spans/count`, {});
  assert.equal(count.body.total_count, 0, 'nothing refused was written');
});

test('a bad span in a good protobuf batch is refused alone, in partial_success', async (t) => {
  const s = await startServer(t);
  const good = spans(2);
  const bad: SpanSpec = { ...good[1]!, spanId: '0000000000000000', name: 'bad' };
  const r = await postOtlp(s.url, protobufRequest([...good, bad]), {
    'Galileo-API-Key': s.key,
    project: 'test-project',
    logstream: 'default',
  });
  assert.equal(r.status, 200);
  const answer = decodeResponse(r.bytes);
  assert.equal(answer.partialSuccess?.rejectedSpans, '1');
  assert.match(answer.partialSuccess?.errorMessage ?? '', /span_id/);
  const count = await s.call('POST', `/projects/${s.projectId}/spans/count`, { log_stream_id: s.logStreamId });
  assert.equal(count.body.total_count, 2);
});

test('projects and log streams: created on first use when allowed, 403 and 404 as elsewhere', async (t) => {
  const s = await startServer(t);
  const viewer = s.store.users.create({ email: 'viewer@test' });
  s.store.catalog.addProjectMember(s.projectId, viewer.id, 'viewer');
  const viewerKey = s.store.users.createApiKey(viewer.id).key;
  const hidden = s.store.createProject({ name: 'someone-elses' });
  const asViewer = (h: Record<string, string>) => postOtlp(s.url, protobufRequest(spans(1)), { 'Galileo-API-Key': viewerKey, ...h });
  assert.equal((await asViewer({ project: 'test-project' })).status, 403);
  assert.equal((await asViewer({ 'x-project-name': 'someone-elses' })).status, 404);
  // A new project: created, and its creator owns it (so may also create its log streams).
  assert.equal((await asViewer({ project: 'viewers-own', logstream: 'prod' })).status, 200);
  const own = s.store.findProjects({ name: 'viewers-own' })[0]!;
  assert.equal(s.store.catalog.projectRole(own.id, viewer.id), 'owner');
  assert.deepEqual(
    s.store.listRuns(own.id).map((r) => r.name),
    ['prod'],
  );
  assert.equal((await s.store.count('span', own.id, {})).total_count, 1);
  assert.equal((await s.store.count('span', hidden.id, {})).total_count, 0);
});

test('too much queued: 503 with Retry-After, and the retried exports all land', async (t) => {
  const s = await startServer(t, { otlpMaxPendingBytes: 1 });
  const headers = { 'Galileo-API-Key': s.key, project: 'test-project', logstream: 'default' };
  const bodies = Array.from({ length: 8 }, () => protobufRequest(spans(20)));
  const first = await Promise.all(bodies.map((b) => postOtlp(s.url, b, headers)));
  const refused = first.map((r, i) => [r, i] as const).filter(([r]) => r.status === 503);
  assert.ok(refused.length > 0, 'some exports overlapped and were refused');
  for (const [r] of refused) {
    assert.equal(r.headers.get('retry-after'), '1');
    assert.equal(decodeStatus(r.bytes).code, 14);
  }
  assert.ok(first.every((r) => r.status === 200 || r.status === 503));
  for (const [, i] of refused) assert.equal((await postOtlp(s.url, bodies[i]!, headers)).status, 200);
  const count = await s.call('POST', `/projects/${s.projectId}/spans/count`, { log_stream_id: s.logStreamId });
  assert.equal(count.body.total_count, 160);
});
