// LLM input and output messages from the three ways OpenTelemetry instrumentations record them,
// as tracelake's messages ({role, content, tool_calls?, tool_call_id?}):
//  - GenAI semconv 1.37+: `gen_ai.system_instructions`, `gen_ai.input.messages`,
//    `gen_ai.output.messages` (JSON strings or structured values of {role, parts[]}), also on the
//    event `gen_ai.client.inference.operation.details`;
//  - GenAI semconv 1.28-1.36: span events `gen_ai.{system,user,assistant,tool}.message` and `gen_ai.choice`;
//  - OpenInference: `llm.input_messages.N.message.*`, `llm.output_messages.N.message.*`;
//  - OpenLLMetry's `gen_ai.prompt.N.*` / `gen_ai.completion.N.*`, and last `input.value` / `output.value`.
import type { OtelEvent } from './model.js';
import { structured, text, unflatten, type AttrReader } from './reader.js';

export interface Message {
  role: string;
  content: string | unknown[];
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
  name?: string;
}

const ROLES = new Set(['agent', 'assistant', 'developer', 'function', 'system', 'tool', 'user']);
const ROLE_ALIASES: Record<string, string> = {
  human: 'user',
  ai: 'assistant',
  model: 'assistant',
  bot: 'assistant',
  chatbot: 'assistant',
  ipython: 'tool',
};

export function role(r: unknown, fallback: string): string {
  if (typeof r !== 'string') return fallback;
  const l = r.toLowerCase();
  return ROLES.has(l) ? l : (ROLE_ALIASES[l] ?? fallback);
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));

function toolCall(id: unknown, name: unknown, args: unknown): NonNullable<Message['tool_calls']>[number] {
  return {
    id: str(id),
    type: 'function',
    function: { name: str(name), arguments: typeof args === 'string' ? args : args === undefined ? '' : JSON.stringify(args) },
  };
}

/** One GenAI message ({role, parts}) -> one or more tracelake messages (each tool response is its own). */
function fromGenAi(m: unknown, fallbackRole: string, out: Message[], finish: string[]): void {
  if (!isObj(m)) return;
  const r = role(m['role'], fallbackRole);
  const parts = Array.isArray(m['parts']) ? m['parts'] : m['content'] !== undefined ? [{ type: 'text', content: m['content'] }] : [];
  const texts: string[] = [];
  const calls: NonNullable<Message['tool_calls']> = [];
  const other: unknown[] = [];
  for (const p of parts) {
    if (!isObj(p)) continue;
    switch (p['type']) {
      case 'text':
        texts.push(str(p['content']));
        break;
      case 'tool_call':
        calls.push(toolCall(p['id'], p['name'], p['arguments']));
        break;
      case 'tool_call_response':
        out.push({ role: 'tool', content: str(p['response'] ?? p['result']), tool_call_id: str(p['id']) });
        break;
      default:
        other.push(p);
    }
  }
  if (typeof m['finish_reason'] === 'string') finish.push(m['finish_reason']);
  if (texts.length === 0 && calls.length === 0 && other.length === 0) return;
  const msg: Message = {
    role: r,
    content: other.length > 0 ? [...texts.map((t) => ({ type: 'text', text: t })), ...other] : texts.join('\n'),
  };
  if (calls.length > 0) msg.tool_calls = calls;
  if (typeof m['name'] === 'string') msg.name = m['name'];
  out.push(msg);
}

function genAiList(v: unknown, fallbackRole: string, finish: string[]): Message[] | undefined {
  const s = structured(v as never);
  if (!Array.isArray(s)) return undefined;
  const out: Message[] = [];
  for (const m of s) fromGenAi(m, fallbackRole, out, finish);
  return out;
}

/** gen_ai.system_instructions: a list of parts (or a plain string) -> one system message. */
function systemMessage(v: unknown): Message | undefined {
  const s = structured(v as never);
  if (typeof s === 'string') return { role: 'system', content: s };
  if (!Array.isArray(s)) return undefined;
  const out: Message[] = [];
  fromGenAi({ role: 'system', parts: s }, 'system', out, []);
  return out[0];
}

/** OpenInference / OpenAI-shaped message objects (content, tool_calls with function.{name, arguments}). */
function fromOpenAiLike(m: unknown, fallbackRole: string): Message | undefined {
  if (!isObj(m)) return undefined;
  const inner = isObj(m['message']) ? m['message'] : m;
  let content: Message['content'] = '';
  if (typeof inner['content'] === 'string') content = inner['content'];
  else if (Array.isArray(inner['content'])) content = inner['content'];
  else if (Array.isArray(inner['contents'])) {
    // OpenInference multimodal: contents.M.message_content.{type, text, image.image.url}
    content = inner['contents'].map((c) => (isObj(c) && isObj(c['message_content']) ? c['message_content'] : c));
  } else if (inner['content'] !== undefined && inner['content'] !== null) content = JSON.stringify(inner['content']);
  const msg: Message = { role: role(inner['role'], fallbackRole), content };
  const calls = inner['tool_calls'];
  if (Array.isArray(calls) && calls.length > 0) {
    msg.tool_calls = calls.map((c) => {
      const tc = isObj(c) && isObj(c['tool_call']) ? c['tool_call'] : isObj(c) ? c : {};
      const fn = isObj(tc['function']) ? tc['function'] : tc;
      return toolCall(tc['id'], fn['name'], fn['arguments']);
    });
  }
  if (typeof inner['tool_call_id'] === 'string') msg.tool_call_id = inner['tool_call_id'];
  else if (typeof inner['id'] === 'string' && msg.role === 'tool') msg.tool_call_id = inner['id'];
  if (typeof inner['name'] === 'string') msg.name = inner['name'];
  return msg;
}

const EVENT_ROLES: Record<string, string> = {
  'gen_ai.system.message': 'system',
  'gen_ai.user.message': 'user',
  'gen_ai.assistant.message': 'assistant',
  'gen_ai.tool.message': 'tool',
};

/** The body of a 1.28-1.36 message event, recorded on a span event as attributes (or one JSON attribute). */
function eventBody(e: OtelEvent): Obj {
  const packed = structured(e.attributes.get('gen_ai.event.content') ?? e.attributes.get('event.body'));
  if (isObj(packed)) return packed;
  const o: Obj = Object.create(null) as Obj;
  for (const [k, v] of e.attributes) o[k] = structured(v);
  return o;
}

export interface MessageIO {
  input?: Message[];
  output?: Message[];
  /** Finish reasons the output messages named. */
  finish: string[];
}

/** Input and output messages of an llm span, from the first convention that has them. */
export function llmMessages(a: AttrReader, events: readonly OtelEvent[], usedEvents: Set<OtelEvent>): MessageIO {
  const finish: string[] = [];
  const io: MessageIO = { finish };
  // 1.37+: attributes on the span, or on the operation-details event.
  const details = events.find((e) => e.name === 'gen_ai.client.inference.operation.details');
  if (details) usedEvents.add(details);
  const sys = a.take('gen_ai.system_instructions') ?? details?.attributes.get('gen_ai.system_instructions');
  const input = genAiList(a.take('gen_ai.input.messages') ?? details?.attributes.get('gen_ai.input.messages'), 'user', finish);
  const output = genAiList(a.take('gen_ai.output.messages') ?? details?.attributes.get('gen_ai.output.messages'), 'assistant', finish);
  const system = sys === undefined ? undefined : systemMessage(sys);
  if (input) io.input = system ? [system, ...input] : input;
  else if (system) io.input = [system];
  if (output) io.output = output;
  // 1.28-1.36: one span event per message, and gen_ai.choice per answer.
  if (!io.input || !io.output) {
    const ins: Message[] = [];
    const outs: Message[] = [];
    for (const e of events) {
      const r = EVENT_ROLES[e.name];
      if (r === undefined && e.name !== 'gen_ai.choice') continue;
      usedEvents.add(e);
      const body = eventBody(e);
      if (r !== undefined) {
        const m = fromOpenAiLike(body, r);
        if (m) ins.push({ ...m, role: role(body['role'], r) });
      } else {
        if (typeof body['finish_reason'] === 'string') finish.push(body['finish_reason']);
        const m = fromOpenAiLike(isObj(body['message']) ? body['message'] : body, 'assistant');
        if (m) outs.push(m);
      }
    }
    if (!io.input && ins.length > 0) io.input = ins;
    if (!io.output && outs.length > 0) io.output = outs;
  }
  // OpenInference, then OpenLLMetry.
  io.input ??= flattened(a, 'llm.input_messages.', 'user') ?? flattened(a, 'gen_ai.prompt.', 'user');
  io.output ??= flattened(a, 'llm.output_messages.', 'assistant') ?? flattened(a, 'gen_ai.completion.', 'assistant', finish);
  // input.value / output.value: an OpenAI-style request or response body, or plain text.
  if (!io.input) {
    const v = a.take('input.value', 'gen_ai.prompt');
    if (v !== undefined) io.input = valueMessages(v, 'user');
  }
  if (!io.output) {
    const v = a.take('output.value', 'gen_ai.completion');
    if (v !== undefined) io.output = valueMessages(v, 'assistant');
  }
  return io;
}

function flattened(a: AttrReader, prefix: string, fallbackRole: string, finish?: string[]): Message[] | undefined {
  const entries = a.takePrefix(prefix);
  if (!entries) return undefined;
  const out: Message[] = [];
  for (const item of unflatten(entries)) {
    if (finish && isObj(item) && typeof item['finish_reason'] === 'string') finish.push(item['finish_reason']);
    const m = fromOpenAiLike(item, fallbackRole);
    if (m) out.push(m);
  }
  return out.length > 0 ? out : undefined;
}

/** input.value / output.value -> messages: {messages: [...]}, [...], {choices: [{message}]}, or text. */
export function valueMessages(v: unknown, fallbackRole: string): Message[] {
  const s = structured(v as never);
  const list = Array.isArray(s)
    ? s
    : isObj(s) && Array.isArray(s['messages'])
      ? s['messages']
      : isObj(s) && Array.isArray(s['choices'])
        ? s['choices']
        : null;
  if (list) {
    const out = list
      .map((m) => fromOpenAiLike(m, fallbackRole))
      .filter((m): m is Message => m !== undefined && (m.content !== '' || m.tool_calls !== undefined));
    if (out.length > 0) return out;
  }
  return [{ role: fallbackRole, content: text(v) ?? '' }];
}

/** Messages as one text (for spans other than llm, and for the trace): a lone message's text, else JSON. */
export function messagesAsText(ms: readonly Message[]): string {
  if (ms.length === 1 && typeof ms[0]!.content === 'string' && !ms[0]!.tool_calls) return ms[0]!.content;
  return JSON.stringify(ms);
}
