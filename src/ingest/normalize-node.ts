// One trace or span node as the client sent it -> the stored fields of its record. Kind rules the
// schema cannot express are checked here, naming the exact path. Quirks of the official clients are
// absorbed here too: `content` or `page_content` in documents, camelCase LLM metric keys, numeric or
// boolean metadata values, `duration_ns` beside the metrics.
import { invalid } from '../errors.js';
import type { SpanInput, TraceInput } from '../schemas/ingest.js';
import { requireTimestampUs } from './time.js';

export type Loc = (string | number)[];
export type Fields = Record<string, unknown>;

const MESSAGE_ROLES = new Set(['agent', 'assistant', 'developer', 'function', 'system', 'tool', 'user']);

/** camelCase spellings of the LLM metrics the clients know, as the batch path sends them. */
const METRIC_ALIASES: Record<string, string> = {
  durationNs: 'duration_ns',
  numInputTokens: 'num_input_tokens',
  numOutputTokens: 'num_output_tokens',
  numTotalTokens: 'num_total_tokens',
  timeToFirstTokenNs: 'time_to_first_token_ns',
  numImageInputTokens: 'num_image_input_tokens',
  numAudioInputTokens: 'num_audio_input_tokens',
  numAudioOutputTokens: 'num_audio_output_tokens',
  numImageOutputTokens: 'num_image_output_tokens',
  numReasoningTokens: 'num_reasoning_tokens',
  numCachedInputTokens: 'num_cached_input_tokens',
};

type Node = (SpanInput | TraceInput) & Record<string, unknown>;

/** Stored fields of a node, except links (id, trace, parent, session, step), which flatten.ts sets. */
export function normalizeNode(node: Node, kind: string, loc: Loc, defaultCreatedUs: number): Fields {
  const f: Fields = { type: kind };
  const extra: Fields = {};
  f['name'] = node.name ?? '';
  f['created_at'] = node.created_at == null ? defaultCreatedUs : requireTimestampUs(node.created_at, [...loc, 'created_at']);
  f['updated_at'] = f['created_at'];
  f['input'] = normalizeInput(kind, node.input, [...loc, 'input']);
  f['output'] = normalizeOutput(kind, node.output, [...loc, 'output']);
  if (node.tags != null) f['tags'] = node.tags;
  f['metrics'] = normalizeMetrics(node.metrics, node.duration_ns, extra);
  f['user_metadata'] = stringMap(node.user_metadata);
  f['dataset_metadata'] = stringMap(node.dataset_metadata);
  copyIf(f, node, ['status_code', 'external_id', 'error_message', 'progress_message']);
  for (const k of ['dataset_input', 'dataset_output'] as const) if (node[k] != null) f[k] = asText(node[k]);
  f['is_complete'] = node.is_complete ?? true;
  if (node.redacted_input !== undefined && node.redacted_input !== null) extra['redacted_input'] = node.redacted_input;
  if (node.redacted_output !== undefined && node.redacted_output !== null) extra['redacted_output'] = node.redacted_output;
  const s = node as SpanInput & Record<string, unknown>;
  switch (kind) {
    case 'agent':
      f['agent_type'] = s.agent_type ?? 'default';
      break;
    case 'llm':
      if (s.tools != null) f['tools'] = s.tools;
      copyIf(f, s, ['model', 'temperature', 'finish_reason']);
      if (s.events != null) extra['events'] = s.events;
      break;
    case 'tool': {
      const callId = s.tool_call_id ?? (typeof s['toolCallId'] === 'string' ? s['toolCallId'] : undefined);
      if (callId != null) f['tool_call_id'] = callId;
      break;
    }
    case 'control':
      copyIf(f, s, ['control_id', 'agent_name', 'check_stage', 'applies_to', 'evaluator_name', 'selector_path']);
      break;
    default:
      break;
  }
  if (Object.keys(extra).length > 0) f['extra'] = extra;
  return f;
}

function copyIf(target: Fields, source: Record<string, unknown>, keys: readonly string[]): void {
  for (const k of keys) if (source[k] !== undefined && source[k] !== null) target[k] = source[k];
}

function asText(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function stringMap(m: Record<string, unknown> | null | undefined): Record<string, string> | undefined {
  if (m == null) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(m)) {
    if (v === null || v === undefined) continue;
    out[k] = typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
  }
  return out;
}

function normalizeMetrics(m: Record<string, unknown> | null | undefined, durationNs: number | null | undefined, extra: Fields): Record<string, number> {
  const out: Record<string, number> = {};
  const odd: Record<string, unknown> = {};
  if (m != null) {
    for (const [rawKey, v] of Object.entries(m)) {
      const key = METRIC_ALIASES[rawKey] ?? rawKey;
      if (typeof v === 'number' && Number.isFinite(v)) out[key] = v;
      else if (v !== null && v !== undefined) odd[key] = v; // kept, but not a number column
    }
  }
  if (durationNs != null && out['duration_ns'] === undefined) out['duration_ns'] = durationNs;
  if (Object.keys(odd).length > 0) extra['metrics'] = odd;
  return out;
}

function normalizeInput(kind: string, v: unknown, loc: Loc): unknown {
  if (v === undefined || v === null) return kind === 'llm' ? [] : '';
  if (kind === 'llm') return messageList(v, loc);
  return v;
}

function normalizeOutput(kind: string, v: unknown, loc: Loc): unknown {
  if (v === undefined || v === null) return null;
  if (kind === 'llm') {
    if (typeof v === 'string') return v;
    if (Array.isArray(v)) return v.length === 1 ? message(v[0], [...loc, 0]) : messageList(v, loc);
    return message(v, loc);
  }
  if (kind === 'retriever') {
    if (!Array.isArray(v)) {
      if (typeof v === 'string') return v;
      throw invalid(loc, 'Input should be a list of documents ({content, metadata?})', v, 'list_type');
    }
    return v.map((d, i) => document(d, [...loc, i]));
  }
  return v;
}

function messageList(v: unknown, loc: Loc): unknown {
  if (typeof v === 'string') return v;
  if (!Array.isArray(v)) return [message(v, loc)];
  return v.map((m, i) => message(m, [...loc, i]));
}

function message(v: unknown, loc: Loc): unknown {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw invalid(loc, 'Input should be a message object {role, content}', v, 'model_type');
  }
  const m = v as Record<string, unknown>;
  if (typeof m['role'] !== 'string' || !MESSAGE_ROLES.has(m['role'])) {
    throw invalid([...loc, 'role'], `Input should be one of ${[...MESSAGE_ROLES].map((r) => `'${r}'`).join(', ')}`, m['role'], 'enum');
  }
  const c = m['content'];
  if (c !== undefined && c !== null && typeof c !== 'string' && !Array.isArray(c)) {
    throw invalid([...loc, 'content'], 'Input should be a string or a list of content parts', c, 'string_type');
  }
  return m;
}

function document(v: unknown, loc: Loc): unknown {
  if (typeof v === 'string') return { content: v, metadata: {} };
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw invalid(loc, 'Input should be a document {content, metadata?}', v, 'model_type');
  }
  const d = v as Record<string, unknown>;
  const content = d['content'] ?? d['page_content'];
  if (typeof content !== 'string') {
    throw invalid([...loc, 'content'], 'Field required: a document needs `content` (or `page_content`) as a string', content, 'missing');
  }
  const out: Record<string, unknown> = { content, metadata: d['metadata'] ?? {} };
  return out;
}
