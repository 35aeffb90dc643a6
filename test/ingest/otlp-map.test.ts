// Guarantees: OTel spans map to tracelake records as the README's table says: the kind rules in
// order, messages from each convention (GenAI 1.37+ attributes, 1.28-1.36 events, OpenInference,
// OpenLLMetry, input.value), tool and retriever fields, metrics, status, tags, session, and
// user_metadata that keeps every other attribute (capped, with a marker); protobuf and JSON decode
// to the same spans.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { batchFromJson } from '../../src/ingest/otlp/from-json.js';
import { mapSpan, spanUuid } from '../../src/ingest/otlp/map-span.js';
import { MAX_METADATA_TOTAL, MAX_METADATA_VALUE } from '../../src/ingest/otlp/metadata.js';
import { batchFromProtobuf } from '../../src/ingest/otlp/wire.js';
import { jsonRequest, protobufRequest, type Plain, type SpanSpec } from '../support/otlp.js';

const T = '0af7651916cd43dd8448eb211c80319c';
const S = 'b7ad6b7169203331';
const base = Date.UTC(2026, 4, 1, 12);

function spec(attributes: Record<string, Plain>, extra: Partial<SpanSpec> = {}): SpanSpec {
  return { traceId: T, spanId: S, name: 'span', startMs: base, endMs: base + 1500, attributes, ...extra };
}

function map(attributes: Record<string, Plain>, extra: Partial<SpanSpec> = {}) {
  const batch = batchFromJson(jsonRequest([spec(attributes, extra)]));
  assert.deepEqual(batch.rejected, []);
  return mapSpan(batch.spans[0]!, 0);
}

test('span kinds: explicit, OpenInference, gen_ai.operation.name, implied, else workflow', () => {
  const cases: [Record<string, Plain>, string][] = [
    [{ 'tracelake.span.type': 'retriever', 'openinference.span.kind': 'LLM' }, 'retriever'],
    [{ 'openinference.span.kind': 'EMBEDDING' }, 'llm'],
    [{ 'openinference.span.kind': 'RERANKER' }, 'retriever'],
    [{ 'openinference.span.kind': 'GUARDRAIL' }, 'workflow'],
    [{ 'openinference.span.kind': 'agent', 'gen_ai.operation.name': 'chat' }, 'agent'],
    [{ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.request.model': 'm' }, 'agent'],
    [{ 'gen_ai.operation.name': 'execute_tool' }, 'tool'],
    [{ 'gen_ai.operation.name': 'retrieval' }, 'retriever'],
    [{ 'gen_ai.operation.name': 'embeddings' }, 'llm'],
    [{ 'gen_ai.operation.name': 'invoke_workflow' }, 'workflow'],
    [{ 'gen_ai.tool.name': 'search' }, 'tool'],
    [{ 'db.operation': 'search' }, 'retriever'],
    [{ 'retrieval.documents.0.document.content': 'x' }, 'retriever'],
    [{ 'gen_ai.request.model': 'gpt-4o' }, 'llm'],
    [{ 'llm.input_messages.0.message.role': 'user' }, 'llm'],
    [{ 'http.request.method': 'GET' }, 'workflow'],
  ];
  for (const [attrs, type] of cases) assert.equal(map(attrs).type, type, JSON.stringify(attrs));
});

test('messages from GenAI 1.28-1.36 span events, with the answer from gen_ai.choice', () => {
  const m = map(
    { 'gen_ai.operation.name': 'chat' },
    {
      events: [
        { name: 'gen_ai.system.message', attributes: { content: 'be brief' } },
        { name: 'gen_ai.user.message', attributes: { content: 'hello' } },
        { name: 'gen_ai.choice', attributes: { index: 0, finish_reason: 'stop', message: { content: 'hi!' } } },
        { name: 'exception', attributes: { 'exception.message': 'kept in metadata' } },
      ],
    },
  );
  assert.deepEqual(m.record.input, [
    { role: 'system', content: 'be brief' },
    { role: 'user', content: 'hello' },
  ]);
  assert.deepEqual(m.record.output, { role: 'assistant', content: 'hi!' });
  assert.equal(m.record.finish_reason, 'stop');
  assert.deepEqual(JSON.parse(m.record.user_metadata!['otel.events']!), [
    { name: 'exception', offset_ns: 0, attributes: { 'exception.message': 'kept in metadata' } },
  ]);
});

test('messages from GenAI 1.37+ attributes: parts, tool calls and tool results, structured values', () => {
  const m = map({
    'gen_ai.operation.name': 'chat',
    'gen_ai.input.messages': [
      { role: 'user', parts: [{ type: 'text', content: 'weather?' }] },
      { role: 'assistant', parts: [{ type: 'tool_call', id: 'c1', name: 'wx', arguments: { city: 'Oslo' } }] },
      { role: 'tool', parts: [{ type: 'tool_call_response', id: 'c1', response: { c: 3 } }] },
      {
        role: 'user',
        parts: [
          { type: 'text', content: 'and this?' },
          { type: 'uri', modality: 'image', uri: 'https://x/y.png' },
        ],
      },
    ],
    'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: 'Cold.' }], finish_reason: 'stop' }]),
  });
  // (structured attribute values come back as null-prototype objects: compared as JSON)
  assert.deepEqual(JSON.parse(JSON.stringify(m.record.input)), [
    { role: 'user', content: 'weather?' },
    {
      role: 'assistant',
      content: '',
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'wx', arguments: '{"city":"Oslo"}' } }],
    },
    { role: 'tool', content: '{"c":3}', tool_call_id: 'c1' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'and this?' },
        { type: 'uri', modality: 'image', uri: 'https://x/y.png' },
      ],
    },
  ]);
  assert.deepEqual(m.record.output, { role: 'assistant', content: 'Cold.' });
  assert.equal(m.record.finish_reason, 'stop');
});

test('messages from OpenLLMetry prompt/completion attributes and from an OpenAI-shaped input.value', () => {
  const a = map({
    'gen_ai.request.model': 'm',
    'gen_ai.prompt.0.role': 'user',
    'gen_ai.prompt.0.content': 'q',
    'gen_ai.completion.0.role': 'assistant',
    'gen_ai.completion.0.content': 'a',
    'gen_ai.completion.0.finish_reason': 'length',
  });
  assert.deepEqual(a.record.input, [{ role: 'user', content: 'q' }]);
  assert.deepEqual(a.record.output, { role: 'assistant', content: 'a' });
  assert.equal(a.record.finish_reason, 'length');
  const b = map({
    'openinference.span.kind': 'LLM',
    'input.value': JSON.stringify({
      model: 'x',
      messages: [
        { role: 'developer', content: 'rules' },
        { role: 'human', content: 'hi' },
      ],
    }),
    'input.mime_type': 'application/json',
    'output.value': JSON.stringify({ choices: [{ message: { role: 'assistant', content: 'hello' } }] }),
  });
  assert.deepEqual(b.record.input, [
    { role: 'developer', content: 'rules' },
    { role: 'user', content: 'hi' },
  ]);
  assert.deepEqual(b.record.output, { role: 'assistant', content: 'hello' });
  const c = map({ 'openinference.span.kind': 'LLM', 'input.value': 'plain question', 'output.value': 'plain answer' });
  assert.deepEqual(
    [c.record.input, c.record.output, c.traceInput()],
    [[{ role: 'user', content: 'plain question' }], { role: 'assistant', content: 'plain answer' }, 'plain question'],
  );
});

test('GenAI retrieval documents and embeddings', () => {
  const r = map({
    'gen_ai.operation.name': 'retrieval',
    'gen_ai.retrieval.query.text': 'fjords',
    'gen_ai.retrieval.documents': JSON.stringify([{ id: 'd1', score: 0.5 }]),
  });
  assert.equal(r.record.input, 'fjords');
  assert.deepEqual(r.record.output, [{ content: '', metadata: { id: 'd1', score: 0.5 } }]);
  const e = map({
    'openinference.span.kind': 'EMBEDDING',
    'embedding.model_name': 'e5',
    'embedding.embeddings.0.embedding.text': 'a',
    'embedding.embeddings.0.embedding.vector': [0.1, 0.2],
  });
  assert.equal(e.record.model, 'e5');
  assert.deepEqual(e.record.input, [
    { role: 'user', content: 'a' },
    { role: 'system', content: '[tracelake: 1 embedding vector(s) not stored]' },
  ]);
});

test('metrics, status, tags, session, ids', () => {
  const m = map(
    {
      'gen_ai.operation.name': 'chat',
      'gen_ai.usage.prompt_tokens': '7',
      'llm.token_count.completion': 3,
      'session.id': 's-1',
      'tag.tags': '["a","b"]',
      'error.type': 'Timeout',
    },
    { status: { code: 2 } },
  );
  assert.deepEqual(m.record.metrics, { duration_ns: 1_500_000_000, num_input_tokens: 7, num_output_tokens: 3, num_total_tokens: 10 });
  assert.equal(m.record.status_code, 500);
  assert.equal(m.record.error_message, 'Timeout');
  assert.deepEqual(m.record.tags, ['a', 'b']);
  assert.equal(m.sessionExternalId, 's-1');
  assert.equal(m.record.id, spanUuid(T, S));
  assert.equal(m.record.id, 'b7ad6b71-6920-3331-8448-eb211c80319c', 'the span id, then the low half of the trace id');
  assert.equal(m.record.created_at, base * 1000);
  const conv = map({ 'gen_ai.conversation.id': 'c-9', 'tag.tags': 'x, y' }, { status: { code: 1 } });
  assert.equal(conv.sessionExternalId, 'c-9');
  assert.equal(conv.record.status_code, 200);
  assert.deepEqual(conv.record.tags, ['x', 'y']);
});

test('user_metadata keeps every other attribute, stringified, and marks what the caps cut', () => {
  const many: Record<string, Plain> = {
    big: 'x'.repeat(MAX_METADATA_VALUE + 10),
    n: 1.5,
    flag: true,
    list: [1, 'a'],
    obj: { k: 'v' },
    __proto__x: 'ok',
  };
  for (let i = 0; i < 12; i++) many[`filler.${i}`] = 'y'.repeat(MAX_METADATA_VALUE - 100);
  const m = map(many);
  const md = m.record.user_metadata!;
  assert.equal(md['n'], '1.5');
  assert.equal(md['flag'], 'true');
  assert.equal(md['list'], '[1,"a"]');
  assert.equal(md['obj'], '{"k":"v"}');
  assert.match(md['big']!, /…\[truncated by tracelake: 8202 characters\]$/);
  assert.match(md['otel.truncated']!, /attribute\(s\) over the 65536-character metadata cap were left out: filler\./);
  assert.ok(Object.values(md).join('').length <= MAX_METADATA_TOTAL + 1000);
  assert.ok(m.cut > 0);
  // Scope attributes too.
  const req = jsonRequest([spec({})]) as { resourceSpans: { scopeSpans: { scope: Record<string, unknown> }[] }[] };
  req.resourceSpans[0]!.scopeSpans[0]!.scope['attributes'] = [{ key: 'lib.flag', value: { boolValue: true } }];
  assert.equal(mapSpan(batchFromJson(req).spans[0]!, 0).record.user_metadata!['otel.scope.lib.flag'], 'true');
});

test('protobuf and JSON decode to the same spans; bad ids are refused one by one', () => {
  const spans: SpanSpec[] = [
    spec(
      { a: 1, b: [true, 'x'], c: { d: 2.5 } },
      { events: [{ name: 'e', timeMs: base + 1, attributes: { k: 'v' } }], status: { code: 2, message: 'boom' }, kind: 3 },
    ),
    spec({}, { spanId: 'c7ad6b7169203331', parentSpanId: S }),
  ];
  const fromJson = batchFromJson(jsonRequest(spans));
  const fromProto = batchFromProtobuf(protobufRequest(spans));
  const plain = (b: typeof fromJson) =>
    JSON.stringify(b.spans, (_k, v) => (typeof v === 'bigint' ? v.toString() : v instanceof Map ? Object.fromEntries(v) : v));
  assert.equal(plain(fromProto), plain(fromJson));
  assert.equal(fromJson.spans[1]!.parentSpanId, S);
  // JSON leniency: uppercase hex and base64 ids are read; all-zero and malformed ones are refused alone.
  const odd = batchFromJson({
    resourceSpans: [
      {
        scopeSpans: [
          {
            spans: [
              { traceId: T.toUpperCase(), spanId: Buffer.from(S, 'hex').toString('base64'), name: 'ok' },
              { traceId: '0'.repeat(32), spanId: S },
              { traceId: T, spanId: 'xyz' },
              'not a span',
            ],
          },
        ],
      },
    ],
  });
  assert.deepEqual(
    odd.spans.map((s) => [s.traceId, s.spanId]),
    [[T, S]],
  );
  assert.equal(odd.rejected.length, 3);
  // An invalid UTF-8 byte in a string does not fail the batch: it reads as U+FFFD.
  const bytes = Buffer.from(protobufRequest([spec({ note: 'caf\u00e9 ok' })]));
  const at = bytes.indexOf(Buffer.from('caf\u00e9'));
  bytes[at + 3] = 0xff;
  assert.equal(batchFromProtobuf(bytes).spans[0]!.attributes.get('note'), 'caf\ufffd\ufffd ok');
  assert.throws(() => batchFromJson([]), /JSON object/);
  assert.throws(() => batchFromProtobuf(new Uint8Array([0x0a, 0x05, 0x01])), /not a protobuf/);
});
