// Guarantees: the real OpenTelemetry JS SDK (sdk-trace-base 2.12.1 with exporter-trace-otlp-proto
// and -http 0.223.1), sending GenAI- and OpenInference-attributed spans to a real `tracelake serve` on
// loopback, produces records that read back through the v2 API field by field: kinds, parent links,
// model, tokens, messages, tool arguments, documents, status, session, metadata. Children arrive
// before their parents (each span is exported when it ends), a retried export is stored once, gzip
// works, a malformed body is a 400, and one bad span in a good batch is refused alone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { context, trace, SpanKind, SpanStatusCode, type Span, type Tracer } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OpenInferenceSpanKind, SemanticConventions as OI } from '@arizeai/openinference-semantic-conventions';
import { jsonRequest, postOtlp, spanHex, traceHex } from '../support/otlp.js';
import { decodeResponse, decodeStatus } from '../support/otlp-proto.js';
import { startTracelake, type Tracelake } from './support/harness.js';

const uuidOf = (hex: string) => `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;

function exporters(s: Tracelake, headers: Record<string, string>) {
  const h = { 'Galileo-API-Key': s.key, ...headers };
  return {
    proto: new ProtoExporter({ url: `${s.url}/v1/traces`, headers: h, compression: 'gzip' as never }),
    json: new JsonExporter({ url: `${s.url}/otel/traces`, headers: h }),
  };
}

function provider(exporter: SpanExporter, resource: Record<string, string> = { 'service.name': 'otel-e2e' }) {
  const memory = new InMemorySpanExporter();
  const p = new BasicTracerProvider({
    resource: resourceFromAttributes(resource),
    spanProcessors: [new SimpleSpanProcessor(exporter), new SimpleSpanProcessor(memory)],
  });
  return { tracer: p.getTracer('tracelake-e2e', '1.0.0'), provider: p, memory };
}

const exportOnce = (exporter: SpanExporter, spans: ReadableSpan[]) =>
  new Promise<{ code: number; error?: Error }>((resolve) => exporter.export(spans, (r) => resolve(r as { code: number; error?: Error })));

const child = (tracer: Tracer, parent: Span, name: string, attributes: Record<string, unknown>, kind = SpanKind.INTERNAL): Span =>
  tracer.startSpan(name, { kind, attributes: attributes as never }, trace.setSpan(context.active(), parent));

async function spansOf(s: Tracelake, projectId: string, logStreamId: string, traceId: string): Promise<Record<string, any>[]> {
  const r = await s.call('POST', `/v2/projects/${projectId}/spans/search`, {
    log_stream_id: logStreamId,
    limit: 100,
    filters: [{ type: 'id', column_id: 'trace_id', operator: 'eq', value: traceId }],
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.records;
}

async function target(s: Tracelake, project: string, stream: string): Promise<{ projectId: string; logStreamId: string }> {
  const p = await s.call('GET', `/projects?project_name=${project}`);
  const projectId = p.body[0].id;
  const ls = await s.call('GET', `/projects/${projectId}/log_streams`);
  return { projectId, logStreamId: ls.body.find((x: { name: string }) => x.name === stream).id };
}

test('the OpenTelemetry JS SDK against tracelake serve', async (t) => {
  const s = await startTracelake(t);

  await t.test('an agent trace in GenAI and OpenInference conventions over protobuf + gzip, children first', async () => {
    const { proto } = exporters(s, { project: 'otel-e2e', logstream: 'sdk' });
    const { tracer, provider: p, memory } = provider(proto);
    const root = tracer.startSpan('support-agent', {
      attributes: {
        [OI.OPENINFERENCE_SPAN_KIND]: OpenInferenceSpanKind.AGENT,
        [OI.INPUT_VALUE]: 'What is the weather in Paris?',
        [OI.OUTPUT_VALUE]: 'It is 21 degrees in Paris.',
        [OI.SESSION_ID]: 'conversation-42',
        [OI.TAG_TAGS]: ['prod', 'otel'],
        [OI.METADATA]: JSON.stringify({ tenant: 'acme', tier: 2 }),
        'app.request_id': 'req-9',
      },
    });
    const llm = child(
      tracer,
      root,
      'chat gpt-4o',
      {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.response.model': 'gpt-4o-2024-08-06',
        'gen_ai.request.temperature': 0.2,
        'gen_ai.usage.input_tokens': 120,
        'gen_ai.usage.output_tokens': 30,
        'gen_ai.usage.cache_read.input_tokens': 20,
        'gen_ai.usage.reasoning.output_tokens': 5,
        'gen_ai.response.time_to_first_chunk': 0.25,
        'gen_ai.response.finish_reasons': ['tool_calls'],
        'gen_ai.system_instructions': JSON.stringify([{ type: 'text', content: 'You are a weather bot.' }]),
        'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'What is the weather in Paris?' }] }]),
        'gen_ai.output.messages': JSON.stringify([
          {
            role: 'assistant',
            parts: [{ type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }],
            finish_reason: 'tool_calls',
          },
        ]),
        'gen_ai.request.seed': 7,
      },
      SpanKind.CLIENT,
    );
    llm.end();
    const tool = child(tracer, root, 'execute_tool get_weather', {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'get_weather',
      'gen_ai.tool.call.id': 'call_1',
      'gen_ai.tool.call.arguments': JSON.stringify({ city: 'Paris' }),
      'gen_ai.tool.call.result': JSON.stringify({ celsius: 21 }),
    });
    tool.end();
    const retriever = child(tracer, root, 'search docs', {
      [OI.OPENINFERENCE_SPAN_KIND]: OpenInferenceSpanKind.RETRIEVER,
      [OI.INPUT_VALUE]: 'Paris climate',
      'retrieval.documents.0.document.id': 'doc-1',
      'retrieval.documents.0.document.content': 'Paris has a temperate climate.',
      'retrieval.documents.0.document.score': 0.91,
      'retrieval.documents.0.document.metadata': JSON.stringify({ source: 'wiki' }),
      'retrieval.documents.1.document.id': 'doc-2',
      'retrieval.documents.1.document.content': 'Summers are warm.',
      'retrieval.documents.1.document.score': 0.75,
    });
    retriever.end();
    const failing = child(tracer, root, 'ChatOpenAI', {
      [OI.OPENINFERENCE_SPAN_KIND]: OpenInferenceSpanKind.LLM,
      [OI.LLM_MODEL_NAME]: 'gpt-4o-mini',
      'llm.input_messages.0.message.role': 'system',
      'llm.input_messages.0.message.content': 'Summarise.',
      'llm.input_messages.1.message.role': 'user',
      'llm.input_messages.1.message.content': 'It is 21 degrees.',
      'llm.output_messages.0.message.role': 'assistant',
      'llm.output_messages.0.message.content': 'Warm.',
      [OI.LLM_TOKEN_COUNT_PROMPT]: 40,
      [OI.LLM_TOKEN_COUNT_COMPLETION]: 2,
      [OI.LLM_TOKEN_COUNT_TOTAL]: 42,
      'http.response.status_code': 429,
    });
    failing.setStatus({ code: SpanStatusCode.ERROR, message: 'rate limited' });
    failing.end();
    root.end();
    await p.forceFlush();
    const ended = memory.getFinishedSpans();
    assert.equal(ended.length, 5);
    const traceId = uuidOf(root.spanContext().traceId);
    const { projectId, logStreamId } = await target(s, 'otel-e2e', 'sdk');
    const spans = await spansOf(s, projectId, logStreamId, traceId);
    assert.equal(spans.length, 5);
    const byName = Object.fromEntries(spans.map((x) => [x.name, x]));
    const agent = byName['support-agent'];
    // kinds and parent links (the root came last, in its own request, after its children)
    assert.deepEqual(Object.fromEntries(spans.map((x) => [x.name, x.type])), {
      'support-agent': 'agent',
      'chat gpt-4o': 'llm',
      'execute_tool get_weather': 'tool',
      'search docs': 'retriever',
      ChatOpenAI: 'llm',
    });
    assert.equal(agent.parent_id, traceId);
    for (const n of ['chat gpt-4o', 'execute_tool get_weather', 'search docs', 'ChatOpenAI'])
      assert.equal(byName[n].parent_id, agent.id, n);
    assert.equal(agent.has_children, true);
    // model, tokens, time to first token, duration
    const chat = byName['chat gpt-4o'];
    assert.equal(chat.model, 'gpt-4o-2024-08-06');
    assert.equal(chat.temperature, 0.2);
    assert.equal(chat.finish_reason, 'tool_calls');
    assert.equal(chat.metrics.num_input_tokens, 120);
    assert.equal(chat.metrics.num_output_tokens, 30);
    assert.equal(chat.metrics.num_total_tokens, 150);
    assert.equal(chat.metrics.num_cached_input_tokens, 20);
    assert.equal(chat.metrics.num_reasoning_tokens, 5);
    assert.equal(chat.metrics.time_to_first_token_ns, 250_000_000);
    assert.ok(chat.metrics.duration_ns >= 0);
    // messages: system instructions first, then the conversation; the answer is a tool call
    assert.deepEqual(chat.input, [
      { role: 'system', content: 'You are a weather bot.' },
      { role: 'user', content: 'What is the weather in Paris?' },
    ]);
    assert.deepEqual(chat.output, {
      role: 'assistant',
      content: '',
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
    });
    // tool arguments and result
    const tl = byName['execute_tool get_weather'];
    assert.equal(tl.input, '{"city":"Paris"}');
    assert.equal(tl.output, '{"celsius":21}');
    assert.equal(tl.tool_call_id, 'call_1');
    // retriever query and documents
    const rt = byName['search docs'];
    assert.equal(rt.input, 'Paris climate');
    assert.deepEqual(rt.output, [
      { content: 'Paris has a temperate climate.', metadata: { id: 'doc-1', score: 0.91, source: 'wiki' } },
      { content: 'Summers are warm.', metadata: { id: 'doc-2', score: 0.75 } },
    ]);
    // OpenInference llm: flattened messages, model, tokens; ERROR status with its message
    const oi = byName['ChatOpenAI'];
    assert.equal(oi.model, 'gpt-4o-mini');
    assert.deepEqual(oi.input, [
      { role: 'system', content: 'Summarise.' },
      { role: 'user', content: 'It is 21 degrees.' },
    ]);
    assert.deepEqual(oi.output, { role: 'assistant', content: 'Warm.' });
    assert.deepEqual([oi.metrics.num_input_tokens, oi.metrics.num_output_tokens, oi.metrics.num_total_tokens], [40, 2, 42]);
    assert.equal(oi.status_code, 429);
    assert.equal(oi.error_message, 'rate limited');
    assert.equal(agent.status_code, null);
    // tags and metadata: OpenInference metadata merged, other attributes stringified, OTel facts under otel.*
    assert.deepEqual(agent.tags, ['prod', 'otel']);
    assert.equal(agent.user_metadata.tenant, 'acme');
    assert.equal(agent.user_metadata.tier, '2');
    assert.equal(agent.user_metadata['app.request_id'], 'req-9');
    assert.equal(agent.user_metadata['openinference.span.kind'], 'AGENT');
    assert.equal(agent.user_metadata['service.name'], 'otel-e2e');
    assert.equal(agent.user_metadata['otel.span_id'], root.spanContext().spanId);
    assert.equal(chat.user_metadata['gen_ai.provider.name'], 'openai');
    assert.equal(chat.user_metadata['gen_ai.request.seed'], '7');
    assert.equal(chat.user_metadata['otel.span_kind'], 'client');
    assert.equal(chat.user_metadata['otel.parent_span_id'], root.spanContext().spanId);
    // the trace record: name, input, output and times from the root span; one session by external id
    const tr = await s.call('GET', `/projects/${projectId}/traces/${traceId}`);
    assert.equal(tr.status, 200);
    assert.equal(tr.body.name, 'support-agent');
    assert.equal(tr.body.input, 'What is the weather in Paris?');
    assert.equal(tr.body.output, 'It is 21 degrees in Paris.');
    assert.equal(tr.body.created_at, agent.created_at);
    assert.equal(tr.body.metrics.duration_ns, agent.metrics.duration_ns);
    assert.equal(tr.body.user_metadata['resource.service.name'], 'otel-e2e');
    assert.equal(tr.body.spans.length, 1);
    assert.equal(tr.body.spans[0].spans.length, 4);
    const sessions = await s.call('POST', `/projects/${projectId}/sessions/search`, {
      log_stream_id: logStreamId,
      filters: [{ type: 'text', column_id: 'external_id', operator: 'eq', value: 'conversation-42' }],
    });
    assert.equal(sessions.body.records.length, 1);
    // the root alone named the session (it came last): the trace moved there from its own, which is gone
    assert.equal((await s.call('POST', `/projects/${projectId}/sessions/count`, { log_stream_id: logStreamId })).body.total_count, 1);
    assert.equal(tr.body.session_id, sessions.body.records[0].id);
    for (const x of spans) assert.equal(x.session_id, tr.body.session_id);

    // a second trace of the same conversation, over JSON to /otel/traces: the same session
    const { json } = exporters(s, { project: 'otel-e2e', logstream: 'sdk' });
    const second = provider(json);
    const r2 = second.tracer.startSpan('follow-up', {
      attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.conversation.id': 'conversation-42', 'gen_ai.request.model': 'gpt-4o' },
    });
    r2.end();
    await second.provider.forceFlush();
    const t2 = await s.call('GET', `/projects/${projectId}/traces/${uuidOf(r2.spanContext().traceId)}`);
    assert.equal(t2.status, 200, JSON.stringify(t2.body));
    assert.equal(t2.body.session_id, tr.body.session_id);
    assert.equal(t2.body.spans[0].type, 'llm');

    // retrying an export: every span of the first trace again, twice; nothing is stored twice
    for (let i = 0; i < 2; i++) assert.equal((await exportOnce(proto, ended)).code, 0);
    assert.equal((await spansOf(s, projectId, logStreamId, traceId)).length, 5);
    const count = await s.call('POST', `/projects/${projectId}/traces/count`, { log_stream_id: logStreamId });
    assert.equal(count.body.total_count, 2);
    await second.provider.shutdown();
    await p.shutdown();
  });

  await t.test('a parent that never arrives leaves its children under the trace; the project comes from the resource', async () => {
    const { json } = exporters(s, {});
    const { tracer, provider: p } = provider(json, {
      'service.name': 'svc',
      'tracelake.project.name': 'from-resource',
      'tracelake.log_stream.name': 'res-stream',
    });
    const lost = tracer.startSpan('never exported'); // not ended: never exported
    const orphan = child(tracer, lost, 'tool call', { 'tool.name': 'lookup', [OI.INPUT_VALUE]: 'x', [OI.OUTPUT_VALUE]: 'y' });
    orphan.end();
    await p.forceFlush();
    const { projectId, logStreamId } = await target(s, 'from-resource', 'res-stream');
    const traceId = uuidOf(orphan.spanContext().traceId);
    const spans = await spansOf(s, projectId, logStreamId, traceId);
    assert.equal(spans.length, 1);
    assert.equal(spans[0]!.type, 'tool');
    assert.equal(spans[0]!.parent_id, traceId);
    assert.equal(spans[0]!.user_metadata['otel.parent_span_id'], lost.spanContext().spanId);
    const tr = await s.call('GET', `/projects/${projectId}/traces/${traceId}`);
    assert.deepEqual(
      tr.body.spans.map((x: { name: string }) => x.name),
      ['tool call'],
    );
    await p.shutdown();
  });

  await t.test('a malformed body is a 400 in the request encoding; one bad span in a good batch is refused alone', async () => {
    const headers = { 'Galileo-API-Key': s.key, project: 'otel-e2e', logstream: 'raw' };
    const garbage = await postOtlp(s.url, new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]), headers);
    assert.equal(garbage.status, 400);
    assert.match(garbage.headers.get('content-type') ?? '', /application\/x-protobuf/);
    assert.match(decodeStatus(garbage.bytes).message ?? '', /not a protobuf ExportTraceServiceRequest/);
    const badGzip = await fetch(`${s.url}/v1/traces`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: 'not gzip',
    });
    assert.equal(badGzip.status, 400);
    assert.match(((await badGzip.json()) as { message: string }).message, /not valid gzip/);
    const t1 = traceHex();
    const good = {
      traceId: t1,
      spanId: spanHex(),
      name: 'good',
      startMs: Date.now() - 10,
      endMs: Date.now(),
      attributes: { 'gen_ai.operation.name': 'chat' },
    };
    const body = jsonRequest([good, { ...good, spanId: spanHex(), name: 'good child', parentSpanId: good.spanId }]) as {
      resourceSpans: { scopeSpans: { spans: Record<string, unknown>[] }[] }[];
    };
    body.resourceSpans[0]!.scopeSpans[0]!.spans.push({ traceId: 'not-hex', spanId: spanHex(), name: 'bad' });
    const res = await postOtlp(s.url, JSON.stringify(body), headers, { gzip: true });
    assert.equal(res.status, 200);
    const answer = JSON.parse(res.bytes.toString()) as { partialSuccess: { rejectedSpans: string; errorMessage: string } };
    assert.equal(answer.partialSuccess.rejectedSpans, '1');
    assert.match(answer.partialSuccess.errorMessage, /traceId/);
    const { projectId, logStreamId } = await target(s, 'otel-e2e', 'raw');
    assert.deepEqual((await spansOf(s, projectId, logStreamId, uuidOf(t1))).map((x) => x.name).sort(), ['good', 'good child']);
    // an empty export succeeds, answered in protobuf with partial_success unset
    const okProto = await postOtlp(s.url, new Uint8Array(0), headers);
    assert.equal(okProto.status, 200);
    assert.deepEqual(decodeResponse(okProto.bytes), {});
  });
});
