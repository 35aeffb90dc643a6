// The tracelake span type of an OTel span, first rule that applies:
//  1. `tracelake.span.type` naming one of agent, workflow, llm, retriever, tool;
//  2. OpenInference `openinference.span.kind`;
//  3. GenAI `gen_ai.operation.name`;
//  4. attributes that imply a kind (a tool name or call id -> tool; retrieval query or documents ->
//     retriever; messages, a model or token counts of a model -> llm);
//  5. otherwise workflow (an HTTP handler, a database call, a chain step: a unit of work with children).
import type { AttrReader } from './reader.js';

export type OtlpSpanType = 'agent' | 'workflow' | 'llm' | 'retriever' | 'tool';

const EXPLICIT = new Set<string>(['agent', 'workflow', 'llm', 'retriever', 'tool']);

const OPENINFERENCE: Record<string, OtlpSpanType> = {
  LLM: 'llm',
  EMBEDDING: 'llm',
  RETRIEVER: 'retriever',
  RERANKER: 'retriever',
  TOOL: 'tool',
  AGENT: 'agent',
  CHAIN: 'workflow',
  GUARDRAIL: 'workflow',
  EVALUATOR: 'workflow',
  PROMPT: 'workflow',
  UNKNOWN: 'workflow',
};

const OPERATIONS: Record<string, OtlpSpanType> = {
  chat: 'llm',
  text_completion: 'llm',
  completion: 'llm',
  generate_content: 'llm',
  generate: 'llm',
  embeddings: 'llm',
  execute_tool: 'tool',
  retrieval: 'retriever',
  invoke_agent: 'agent',
  create_agent: 'agent',
  invoke_workflow: 'workflow',
  plan: 'workflow',
};

const TOOL_KEYS = ['gen_ai.tool.name', 'gen_ai.tool.call.id', 'tool.name', 'tool_call.function.name'];
const RETRIEVER_KEYS = ['gen_ai.retrieval.query.text', 'gen_ai.retrieval.documents'];
const LLM_KEYS = [
  'gen_ai.input.messages',
  'gen_ai.output.messages',
  'gen_ai.request.model',
  'gen_ai.response.model',
  'llm.model_name',
  'gen_ai.usage.input_tokens',
  'llm.token_count.prompt',
];

export function spanType(a: AttrReader): OtlpSpanType {
  const explicit = a.peek('tracelake.span.type');
  if (typeof explicit === 'string' && EXPLICIT.has(explicit.toLowerCase())) {
    a.take('tracelake.span.type');
    return explicit.toLowerCase() as OtlpSpanType;
  }
  const oi = a.peek('openinference.span.kind');
  if (typeof oi === 'string') {
    const t = OPENINFERENCE[oi.toUpperCase()];
    if (t) return t;
  }
  const op = a.peek('gen_ai.operation.name');
  if (typeof op === 'string') {
    const t = OPERATIONS[op.toLowerCase()];
    if (t) return t;
  }
  if (TOOL_KEYS.some((k) => a.has(k))) return 'tool';
  if (RETRIEVER_KEYS.some((k) => a.has(k)) || a.hasPrefix('retrieval.documents.') || a.peek('db.operation') === 'search')
    return 'retriever';
  if (LLM_KEYS.some((k) => a.has(k)) || a.hasPrefix('llm.input_messages.') || a.hasPrefix('gen_ai.prompt.')) return 'llm';
  return 'workflow';
}
