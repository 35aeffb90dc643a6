// One trace or span node as the client sent it -> the stored fields of its record. Kind rules the
// schema cannot express are checked here, naming the exact path. Quirks of the official clients are
// absorbed here too: `content` or `page_content` in documents, camelCase LLM metric keys, numeric or
// boolean metadata values, `duration_ns` beside the metrics, and the field names of galileo before
// 1.25 (`created_at_ns`, `userMetadata`, token counts beside the metrics; see LEGACY_LLM_METRICS).
//
// This runs once per span on the ingest hot path: one object literal per record (a stable shape that
// JSON.stringify serialises fast), and error paths (`loc` arrays) are only built when something fails.
import { invalid } from '../errors.js';
import type { SpanInput, TraceInput } from '../schemas/ingest.js';
import type { Draft } from '../record/record.js';
import { requireTimestampUs } from '../record/time.js';

export type Loc = (string | number)[];

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

/** Token counts galileo before 1.25 sends on the llm span itself, and the metrics they are. */
const LEGACY_LLM_METRICS: readonly (readonly [string, string])[] = [
  ['input_tokens', 'num_input_tokens'],
  ['output_tokens', 'num_output_tokens'],
  ['total_tokens', 'num_total_tokens'],
  ['time_to_first_token_ns', 'time_to_first_token_ns'],
];

type Node = (SpanInput | TraceInput) & Record<string, unknown>;

const opt = <T>(v: T | null | undefined): T | undefined => (v === null ? undefined : v);

/**
 * A record with every field present (undefined when absent: one object shape for every record built
 * here), links left for the caller; seq, project and run are placeholders until it is written.
 */
export function emptyRecord(id: string, type: string, createdUs: number): Draft {
  return {
    seq: 0,
    id,
    type,
    project_id: '',
    run_id: '',
    session_id: undefined,
    trace_id: undefined,
    parent_id: undefined,
    step_number: undefined,
    name: '',
    input: '',
    output: null,
    created_at: createdUs,
    updated_at: createdUs,
    tags: undefined,
    metrics: undefined,
    user_metadata: undefined,
    dataset_metadata: undefined,
    status_code: undefined,
    external_id: undefined,
    dataset_input: undefined,
    dataset_output: undefined,
    is_complete: true,
    has_children: false,
    // Shown as "" when absent, so stored as "": filters see what search shows.
    progress_message: '',
    error_message: '',
    agent_type: undefined,
    agent_name: undefined,
    tools: undefined,
    model: undefined,
    temperature: undefined,
    finish_reason: undefined,
    tool_call_id: undefined,
    control_id: undefined,
    check_stage: undefined,
    applies_to: undefined,
    evaluator_name: undefined,
    selector_path: undefined,
    previous_session_id: undefined,
    extra: undefined,
  };
}

/** Stored fields of a node, except links (trace, parent, session, step), which flatten.ts sets. */
export function normalizeNode(node: Node, id: string, kind: string, loc: Loc, defaultCreatedUs: number): Draft {
  const created =
    node.created_at != null
      ? requireTimestampUs(node.created_at, [...loc, 'created_at'])
      : (legacyCreatedUs(node, loc) ?? defaultCreatedUs);
  const f = emptyRecord(id, kind, created);
  f.name = node.name ?? '';
  f.input = normalizeInput(kind, node.input, loc);
  f.output = normalizeOutput(kind, node.output, loc);
  f.tags = opt(node.tags);
  let extra: Record<string, unknown> | undefined;
  const metrics = node.metrics;
  if (metrics != null || node.duration_ns != null) {
    const m: Record<string, number> = {};
    if (metrics != null) {
      for (const rawKey in metrics) {
        const v = metrics[rawKey];
        const key = METRIC_ALIASES[rawKey] ?? rawKey;
        if (typeof v === 'number' && Number.isFinite(v)) m[key] = v;
        else if (v !== null && v !== undefined) {
          // Kept, but not as a number column.
          extra ??= {};
          const odd = (extra['metrics'] ??= {}) as Record<string, unknown>;
          odd[key] = v;
        }
      }
    }
    if (node.duration_ns != null && m['duration_ns'] === undefined) m['duration_ns'] = node.duration_ns;
    f.metrics = m;
  }
  if (kind === 'llm') {
    for (const [legacy, key] of LEGACY_LLM_METRICS) {
      const v = node[legacy];
      if (typeof v === 'number' && Number.isFinite(v) && f.metrics?.[key] === undefined) (f.metrics ??= {})[key] = v;
    }
  }
  const camelMetadata = node.user_metadata == null ? node['userMetadata'] : undefined;
  f.user_metadata = stringMap(
    camelMetadata != null && typeof camelMetadata === 'object' && !Array.isArray(camelMetadata)
      ? (camelMetadata as Record<string, unknown>)
      : node.user_metadata,
  );
  f.dataset_metadata = stringMap(node.dataset_metadata);
  f.status_code = opt(node.status_code);
  f.external_id = opt(node.external_id);
  f.error_message = node.error_message ?? '';
  f.progress_message = node.progress_message ?? '';
  if (node.dataset_input != null) f.dataset_input = asText(node.dataset_input);
  if (node.dataset_output != null) f.dataset_output = asText(node.dataset_output);
  if (node.is_complete != null) f.is_complete = node.is_complete;
  if (node.redacted_input != null) (extra ??= {})['redacted_input'] = node.redacted_input;
  if (node.redacted_output != null) (extra ??= {})['redacted_output'] = node.redacted_output;
  const s = node as SpanInput & Record<string, unknown>;
  switch (kind) {
    case 'agent':
      f.agent_type = s.agent_type ?? 'default';
      break;
    case 'llm':
      f.tools = opt(s.tools);
      f.model = opt(s.model);
      f.temperature = opt(s.temperature);
      f.finish_reason = opt(s.finish_reason);
      if (s.events != null) (extra ??= {})['events'] = s.events;
      break;
    case 'tool': {
      const camel = s['toolCallId'];
      f.tool_call_id = opt(s.tool_call_id) ?? (typeof camel === 'string' ? camel : undefined);
      break;
    }
    case 'control':
      f.control_id = opt(s.control_id);
      f.agent_name = opt(s.agent_name);
      f.check_stage = opt(s.check_stage);
      f.applies_to = opt(s.applies_to);
      f.evaluator_name = opt(s.evaluator_name);
      f.selector_path = opt(s.selector_path);
      break;
    default:
      break;
  }
  f.extra = extra;
  return f;
}

/** galileo before 1.25 names the creation time `created_at_ns` (an ISO string, or nanoseconds). */
function legacyCreatedUs(node: Node, loc: Loc): number | undefined {
  const v = node['created_at_ns'];
  if (typeof v === 'string') return requireTimestampUs(v, [...loc, 'created_at_ns']);
  if (typeof v === 'number' && Number.isFinite(v)) return Math.round(v / 1000);
  return undefined;
}

function asText(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function stringMap(m: Record<string, unknown> | null | undefined): Record<string, string> | undefined {
  if (m == null) return undefined;
  let out: Record<string, string> | undefined;
  for (const k in m) {
    const v = m[k];
    if (typeof v === 'string') continue;
    // Only copy when a value needs converting (numbers, booleans, objects); nulls are dropped.
    out ??= {};
    break;
  }
  if (!out) return m as Record<string, string>;
  for (const k in m) {
    const v = m[k];
    if (v === null || v === undefined) continue;
    out[k] = typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
  }
  return out;
}

function normalizeInput(kind: string, v: unknown, loc: Loc): unknown {
  if (v === undefined || v === null) return kind === 'llm' ? [] : '';
  if (kind === 'llm') return messageList(v, loc, 'input');
  return v;
}

function normalizeOutput(kind: string, v: unknown, loc: Loc): unknown {
  if (v === undefined || v === null) return null;
  if (kind === 'llm') {
    if (typeof v === 'string') return v;
    if (Array.isArray(v)) return v.length === 1 ? checkMessage(v[0], loc, 'output', 0) : messageList(v, loc, 'output');
    return checkMessage(v, loc, 'output', null);
  }
  if (kind === 'retriever') {
    if (typeof v === 'string') return v;
    if (!Array.isArray(v)) throw invalid([...loc, 'output'], 'Input should be a list of documents ({content, metadata?})', v, 'list_type');
    let out: unknown[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const d = document(v[i], loc, i);
      if (d !== v[i]) (out ??= v.slice())[i] = d;
    }
    return out ?? v;
  }
  return v;
}

function messageList(v: unknown, loc: Loc, field: string): unknown {
  if (typeof v === 'string') return v;
  if (!Array.isArray(v)) return [checkMessage(v, loc, field, null)];
  for (let i = 0; i < v.length; i++) checkMessage(v[i], loc, field, i);
  return v;
}

function checkMessage(v: unknown, loc: Loc, field: string, index: number | null): unknown {
  const at = () => (index === null ? [...loc, field] : [...loc, field, index]);
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw invalid(at(), 'Input should be a message object {role, content}', v, 'model_type');
  const m = v as Record<string, unknown>;
  if (typeof m['role'] !== 'string' || !MESSAGE_ROLES.has(m['role'])) {
    throw invalid([...at(), 'role'], `Input should be one of ${[...MESSAGE_ROLES].map((r) => `'${r}'`).join(', ')}`, m['role'], 'enum');
  }
  const c = m['content'];
  if (c !== undefined && c !== null && typeof c !== 'string' && !Array.isArray(c)) {
    throw invalid([...at(), 'content'], 'Input should be a string or a list of content parts', c, 'string_type');
  }
  return m;
}

/** Documents come back with `content`; clients send `content` or `page_content`. Unchanged when already right. */
function document(v: unknown, loc: Loc, i: number): unknown {
  if (typeof v === 'string') return { content: v, metadata: {} };
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw invalid([...loc, 'output', i], 'Input should be a document {content, metadata?}', v, 'model_type');
  const d = v as Record<string, unknown>;
  if (typeof d['content'] === 'string' && d['metadata'] !== undefined && d['page_content'] === undefined) return d;
  const content = d['content'] ?? d['page_content'];
  if (typeof content !== 'string') {
    throw invalid(
      [...loc, 'output', i, 'content'],
      'Field required: a document needs `content` (or `page_content`) as a string',
      content,
      'missing',
    );
  }
  return { content, metadata: d['metadata'] ?? {} };
}
