// One OTel span -> one tracelake span record (README "Sending OpenTelemetry" has the table). Pure:
// the record's id derives from the OTel trace and span ids alone, so the same span exported twice
// maps to the same record. Links (trace, parent, session, step) are the engine's to set. A span
// whose content tracelake cannot store (e.g. a message that is not a message) throws
// InvalidRequestError, and the caller rejects that span alone.
import type { Draft } from '../../record/record.js';
import { normalizeNode } from '../normalize-node.js';
import type { SpanInput } from '../../schemas/ingest.js';
import { spanType, type OtlpSpanType } from './kinds.js';
import { llmMessages, messagesAsText, valueMessages, type Message } from './messages.js';
import { MetadataBuilder, spanMetadata } from './metadata.js';
import type { OtelEvent, OtelSpan } from './model.js';
import { AttrReader, num, stringList, structured, text, unflatten } from './reader.js';

export interface MappedSpan {
  readonly otel: OtelSpan;
  readonly record: Draft;
  readonly type: OtlpSpanType;
  /** The external id of the span's session (session.id, gen_ai.conversation.id), if it names one. */
  readonly sessionExternalId: string | null;
  /** Trace-level text of the span's input and output (what the trace shows when this span is its root); computed when asked. */
  traceInput(): string;
  traceOutput(): string | null;
  /** Metadata values cut by the caps (reported as a warning). */
  readonly cut: number;
}

/** The trace record's id: the OTel trace id itself, written as a UUID. */
export function traceUuid(traceHex: string): string {
  return `${traceHex.slice(0, 8)}-${traceHex.slice(8, 12)}-${traceHex.slice(12, 16)}-${traceHex.slice(16, 20)}-${traceHex.slice(20, 32)}`;
}

/**
 * A span record's id: the OTel span id (8 bytes) followed by the last 8 bytes of its trace id, written
 * as a UUID, so the span id can be read off the record id. The trace id's low half is used because it
 * is random even in 64-bit trace ids padded with zeros.
 */
export function spanUuid(traceHex: string, spanHex: string): string {
  return `${spanHex.slice(0, 8)}-${spanHex.slice(8, 12)}-${spanHex.slice(12, 16)}-${traceHex.slice(16, 20)}-${traceHex.slice(20, 32)}`;
}

const nsToUs = (ns: bigint): number => Number(ns / 1000n);

export function mapSpan(s: OtelSpan, receivedUs: number): MappedSpan {
  const a = new AttrReader(s.attributes);
  const type = spanType(a);
  const usedEvents = new Set<OtelEvent>();
  const node: Record<string, unknown> = { type, name: s.name };
  // Trace-level texts, computed only for roots (turning messages into text costs a JSON.stringify).
  let inputText: () => string = () => '';
  let outputText: () => string | null = () => null;
  switch (type) {
    case 'llm': {
      const io = llmMessages(a, s.events, usedEvents);
      const emb = io.input ? undefined : embeddingTexts(a);
      const input: Message[] = io.input ?? emb ?? [];
      node['input'] = input;
      inputText = () => (input.length > 0 ? messagesAsText(input) : '');
      const output = io.output;
      if (output) {
        node['output'] = output.length === 1 ? output[0] : output;
        outputText = () => messagesAsText(output);
      }
      node['model'] = text(
        a.take(
          'gen_ai.response.model',
          'gen_ai.request.model',
          'llm.response.model_name',
          'llm.request.model_name',
          'llm.model_name',
          'embedding.model_name',
        ),
      );
      node['temperature'] = num(a.take('gen_ai.request.temperature')) ?? invocationTemperature(a);
      const reasons = stringList(a.take('gen_ai.response.finish_reasons', 'llm.finish_reason'));
      node['finish_reason'] = reasons?.[0] ?? io.finish[0];
      node['tools'] = toolDefinitions(a);
      break;
    }
    case 'tool': {
      const input = a.take('gen_ai.tool.call.arguments', 'input.value');
      const output = a.take('gen_ai.tool.call.result', 'output.value');
      node['input'] = text(input) ?? '';
      if (output !== undefined) node['output'] = text(output);
      node['tool_call_id'] = text(a.take('gen_ai.tool.call.id', 'tool_call.id', 'tool.id'));
      if (node['name'] === '') node['name'] = text(a.peek('gen_ai.tool.name') ?? a.peek('tool.name')) ?? '';
      const [i, o] = [node['input'] as string, (node['output'] as string | undefined) ?? null];
      inputText = () => i;
      outputText = () => o;
      break;
    }
    case 'retriever': {
      const query = a.take('gen_ai.retrieval.query.text', 'input.value');
      node['input'] = text(query) ?? '';
      const docs = retrievedDocuments(a);
      if (docs !== undefined) node['output'] = docs;
      const q = node['input'] as string;
      inputText = () => q;
      outputText = () => (docs === undefined ? null : typeof docs === 'string' ? docs : JSON.stringify(docs));
      break;
    }
    default: {
      // agent, workflow: their input and output as text (OpenInference values, or GenAI messages).
      const inV = a.take('input.value');
      const outV = a.take('output.value');
      const inM = inV === undefined ? a.take('gen_ai.input.messages') : undefined;
      const outM = outV === undefined ? a.take('gen_ai.output.messages') : undefined;
      const i = inV !== undefined ? (text(inV) ?? '') : inM !== undefined ? messagesAsText(valueMessages(inM, 'user')) : '';
      const o = outV !== undefined ? (text(outV) ?? null) : outM !== undefined ? messagesAsText(valueMessages(outM, 'assistant')) : null;
      node['input'] = i;
      if (o !== null) node['output'] = o;
      inputText = () => i;
      outputText = () => o;
      if (type === 'agent') node['agent_type'] = 'default';
      break;
    }
  }
  node['metrics'] = metrics(a, s);
  const tags = stringList(a.take('tag.tags', 'tracelake.tags'));
  if (tags) node['tags'] = tags;
  if (s.statusCode === 2) {
    const http = num(a.peek('http.response.status_code') ?? a.peek('http.status_code'));
    node['status_code'] = http !== undefined && http >= 400 && http <= 599 ? http : 500;
    node['error_message'] = s.statusMessage || exceptionMessage(s.events) || text(a.peek('error.type')) || 'error';
  } else if (s.statusCode === 1) {
    node['status_code'] = 200;
  }
  const session =
    text(a.take('session.id', 'gen_ai.conversation.id')) ?? text(s.resource.attributes.get('session.id') ?? undefined) ?? null;
  const md = new MetadataBuilder();
  if (s.startNs === 0n) md.set('otel.start_time', 'missing: the time tracelake received the span was used');
  spanMetadata(md, s, a, usedEvents);
  const { map, cut } = md.finish();
  node['user_metadata'] = map;
  const startUs = s.startNs > 0n ? nsToUs(s.startNs) : receivedUs;
  const record = normalizeNode(node as SpanInput & Record<string, unknown>, spanUuid(s.traceId, s.spanId), type, ['span'], startUs);
  return { otel: s, record, type, sessionExternalId: session, traceInput: inputText, traceOutput: outputText, cut };
}

function metrics(a: AttrReader, s: OtelSpan): Record<string, number> {
  const m: Record<string, number> = {};
  if (s.startNs > 0n && s.endNs >= s.startNs) m['duration_ns'] = Number(s.endNs - s.startNs);
  const put = (key: string, ...attrs: string[]) => {
    const v = num(a.take(...attrs));
    if (v !== undefined) m[key] = v;
  };
  put('num_input_tokens', 'gen_ai.usage.input_tokens', 'llm.token_count.prompt', 'gen_ai.usage.prompt_tokens');
  put('num_output_tokens', 'gen_ai.usage.output_tokens', 'llm.token_count.completion', 'gen_ai.usage.completion_tokens');
  put('num_total_tokens', 'llm.token_count.total', 'gen_ai.usage.total_tokens');
  put(
    'num_cached_input_tokens',
    'gen_ai.usage.cache_read.input_tokens',
    'llm.token_count.prompt_details.cache_read',
    'gen_ai.usage.cache_read_input_tokens',
  );
  put('num_reasoning_tokens', 'gen_ai.usage.reasoning.output_tokens', 'llm.token_count.completion_details.reasoning');
  if (m['num_total_tokens'] === undefined && (m['num_input_tokens'] !== undefined || m['num_output_tokens'] !== undefined)) {
    m['num_total_tokens'] = (m['num_input_tokens'] ?? 0) + (m['num_output_tokens'] ?? 0);
  }
  const ttft = num(a.take('gen_ai.response.time_to_first_chunk', 'gen_ai.server.time_to_first_token'));
  if (ttft !== undefined) m['time_to_first_token_ns'] = Math.round(ttft * 1e9);
  return m;
}

function invocationTemperature(a: AttrReader): number | undefined {
  const p = structured(a.peek('llm.invocation_parameters'));
  return typeof p === 'object' && p !== null && !Array.isArray(p) ? num((p as Record<string, never>)['temperature']) : undefined;
}

function toolDefinitions(a: AttrReader): unknown[] | undefined {
  const defs = structured(a.take('gen_ai.tool.definitions'));
  if (Array.isArray(defs)) return defs;
  const oi = a.takePrefix('llm.tools.');
  if (!oi) return undefined;
  return unflatten(oi).map((t) => {
    const schema = (t as { tool?: { json_schema?: unknown } })?.tool?.json_schema;
    return structured(schema as never) ?? t;
  });
}

/** Documents of a retriever span: GenAI `gen_ai.retrieval.documents`, OpenInference `retrieval.documents.N.document.*`, or output.value. */
function retrievedDocuments(a: AttrReader): { content: string; metadata: Record<string, unknown> }[] | string | undefined {
  const genai = structured(a.take('gen_ai.retrieval.documents'));
  const oi = genai === undefined ? a.takePrefix('retrieval.documents.') : undefined;
  const list = Array.isArray(genai) ? genai : oi ? unflatten(oi).map((d) => (d as { document?: unknown })?.document ?? d) : undefined;
  if (list) {
    return list.map((d) => {
      if (typeof d !== 'object' || d === null) return { content: text(d) ?? '', metadata: {} };
      const { content, metadata, ...rest } = d as Record<string, unknown>;
      const md = structured(metadata as never);
      return {
        content: text(content) ?? '',
        metadata: {
          ...rest,
          ...(typeof md === 'object' && md !== null ? (md as Record<string, unknown>) : md !== undefined ? { metadata: md } : {}),
        },
      };
    });
  }
  const out = a.take('output.value');
  return out === undefined ? undefined : (text(out) ?? undefined);
}

/** Embedding spans: the embedded texts as user messages; vectors are left out (named in metadata). */
function embeddingTexts(a: AttrReader): Message[] | undefined {
  const entries = a.takePrefix('embedding.embeddings.');
  if (!entries) return undefined;
  const items = unflatten(entries) as { embedding?: { text?: unknown; vector?: unknown[] } }[];
  const vectors = items.filter((i) => Array.isArray(i?.embedding?.vector)).length;
  const out = items.filter((i) => i?.embedding?.text !== undefined).map((i) => ({ role: 'user', content: text(i.embedding!.text) ?? '' }));
  if (vectors > 0) out.push({ role: 'system', content: `[tracelake: ${vectors} embedding vector(s) not stored]` });
  return out.length > 0 ? out : undefined;
}

function exceptionMessage(events: readonly OtelEvent[]): string {
  for (const e of events) {
    if (e.name !== 'exception') continue;
    const m = e.attributes.get('exception.message') ?? e.attributes.get('exception.type');
    if (typeof m === 'string' && m !== '') return m;
  }
  return '';
}
