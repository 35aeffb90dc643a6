// The generator's traces as OTLP exports, so the ingest benchmark can send the same spans to
// POST /v1/traces (protobuf) that it sends to POST /projects/{id}/traces (JSON). Each span becomes
// an OTel span with the attributes an instrumentation would set: GenAI 1.37+ for llm and tool spans
// (messages, model, tokens, tool call), OpenInference for the others (input.value/output.value,
// retrieval.documents.N.*); user_metadata and the other metrics become plain attributes. Top-level
// spans have no parent (they hang under the trace, as in the JSON body), so both routes store the
// same number of span records per trace.
import { encodeExportRequest } from '../src/ingest/otlp/wire.js';
import type { GenMessage, GenSpan, GenTrace } from '../test/support/generator.js';
import { anyValue, type Plain } from '../test/support/otlp.js';

const kv = (key: string, v: Plain) => ({ key, value: anyValue(v) });

function parts(m: GenMessage): Record<string, unknown> {
  const p: Record<string, unknown>[] = [];
  if (m.content)
    p.push(
      m.role === 'tool'
        ? { type: 'tool_call_response', id: m.tool_call_id ?? '', response: m.content }
        : { type: 'text', content: m.content },
    );
  for (const c of m.tool_calls ?? []) p.push({ type: 'tool_call', id: c.id, name: c.function.name, arguments: c.function.arguments });
  return { role: m.role, parts: p };
}

const hex = (uuid: string) => uuid.replace(/-/g, '');
const nanos = (iso: string, plusNs = 0) => (BigInt(Date.parse(iso)) * 1_000_000n + BigInt(plusNs)).toString();

function attributesOf(s: GenSpan, sessionId: string): ReturnType<typeof kv>[] {
  const a: ReturnType<typeof kv>[] = [kv('session.id', sessionId)];
  if (s.tags.length > 0) a.push(kv('tag.tags', s.tags));
  for (const [k, v] of Object.entries(s.user_metadata)) a.push(kv(k, v));
  const m = s.metrics;
  switch (s.type) {
    case 'llm':
      a.push(kv('gen_ai.operation.name', 'chat'), kv('gen_ai.request.model', s.model), kv('gen_ai.request.temperature', s.temperature));
      a.push(
        kv('gen_ai.input.messages', JSON.stringify(s.input.map(parts))),
        kv('gen_ai.output.messages', JSON.stringify([parts(s.output)])),
      );
      a.push(kv('gen_ai.response.finish_reasons', [s.finish_reason]));
      if (s.tools) a.push(kv('gen_ai.tool.definitions', JSON.stringify(s.tools)));
      if (m['num_input_tokens'] !== undefined) a.push(kv('gen_ai.usage.input_tokens', m['num_input_tokens']));
      if (m['num_output_tokens'] !== undefined) a.push(kv('gen_ai.usage.output_tokens', m['num_output_tokens']));
      break;
    case 'tool':
      a.push(
        kv('gen_ai.operation.name', 'execute_tool'),
        kv('gen_ai.tool.call.id', s.tool_call_id),
        kv('gen_ai.tool.call.arguments', s.input),
        kv('gen_ai.tool.call.result', s.output),
      );
      break;
    case 'retriever':
      a.push(kv('openinference.span.kind', 'RETRIEVER'), kv('input.value', s.input));
      s.output.forEach((d, i) => {
        a.push(
          kv(`retrieval.documents.${i}.document.content`, d.content),
          kv(`retrieval.documents.${i}.document.metadata`, JSON.stringify(d.metadata)),
        );
      });
      break;
    case 'agent':
      a.push(kv('openinference.span.kind', 'AGENT'), kv('input.value', s.input), kv('output.value', s.output));
      break;
    default:
      a.push(
        kv('openinference.span.kind', 'CHAIN'),
        kv('input.value', s.input),
        kv('output.value', typeof s.output === 'string' ? s.output : JSON.stringify(s.output)),
      );
  }
  for (const [k, v] of Object.entries(m))
    if (k !== 'duration_ns' && k !== 'num_input_tokens' && k !== 'num_output_tokens' && k !== 'num_total_tokens')
      a.push(kv(`metric.${k}`, v));
  return a;
}

function addSpans(
  out: Record<string, unknown>[],
  spans: readonly GenSpan[],
  traceId: Buffer,
  parent: Buffer | null,
  sessionId: string,
): void {
  for (const s of spans) {
    const spanId = Buffer.from(hex(s.id).slice(0, 16), 'hex');
    const duration = s.metrics['duration_ns'] ?? 0;
    out.push({
      traceId,
      spanId,
      parentSpanId: parent ?? Buffer.alloc(0),
      name: s.name,
      kind: s.type === 'llm' ? 3 : 1,
      startTimeUnixNano: nanos(s.created_at),
      endTimeUnixNano: nanos(s.created_at, duration),
      attributes: attributesOf(s, sessionId),
      status: s.status_code !== undefined && s.status_code >= 400 ? { code: 2, message: 'failed' } : { code: 0 },
    });
    if ('spans' in s && s.spans.length > 0) addSpans(out, s.spans, traceId, spanId, sessionId);
  }
}

/** One batch of generated traces as an ExportTraceServiceRequest in protobuf. */
export function otlpBody(batch: readonly GenTrace[]): Uint8Array {
  const spans: Record<string, unknown>[] = [];
  for (const t of batch) addSpans(spans, t.spans, Buffer.from(hex(t.id), 'hex'), null, t.session_id);
  return encodeExportRequest({
    resourceSpans: [
      {
        resource: { attributes: [kv('service.name', 'bench')] },
        scopeSpans: [{ scope: { name: 'tracelake-bench', version: '1' }, spans }],
      },
    ],
  });
}
