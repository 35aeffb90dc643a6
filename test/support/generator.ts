/**
 * Seeded, reproducible generator of realistic LLM trace sets, shaped like the bodies the official
 * client sends to `POST /projects/{id}/traces` (every span kind, its fields and metrics). Benchmarks
 * use it for 10M/100M-span sets and tests for small ones, so it is built for speed: one small PRNG,
 * precomputed corpus/hex/normal tables, no per-character work in JS. The tables are built once per
 * process.
 *
 * Determinism: everything derives from `opts.seed` plus fixed module tables, so the same options
 * give byte-identical JSON. Shared objects (tool specs, system prompts) must not be mutated.
 */

// ---------------------------------------------------------------------------------------------
// Public types (ingest shape)
// ---------------------------------------------------------------------------------------------

export interface GenerateOptions {
  /** PRNG seed; default 42. */
  seed?: number;
  /** Target number of span records (not counting trace/session records); the last trace may overshoot. */
  spans: number;
  /** Epoch ms of the first trace; default Date.UTC(2026, 0, 1). */
  startTime?: number;
  /** Share of spans that fail (status_code 500, error text as output); default 0.02. */
  errorRate?: number;
}

export interface GenerateBatchOptions extends GenerateOptions {
  /** Approximate span count per batch (batches are cut at trace boundaries). */
  batchSpans: number;
}

/** Exact totals, returned by the generators when they finish. */
export interface GenerateSummary {
  traces: number;
  spans: number;
  sessions: number;
}

export const GEN_SPAN_KINDS = ['agent', 'workflow', 'llm', 'retriever', 'tool', 'control'] as const;
export type GenSpanKind = (typeof GEN_SPAN_KINDS)[number];
export type GenAgentType = 'default' | 'planner' | 'react' | 'reflection' | 'router' | 'classifier' | 'supervisor' | 'judge';
export type GenRole = 'system' | 'user' | 'assistant' | 'tool';

export interface GenToolCall {
  id: string;
  function: { name: string; arguments: string };
}

export interface GenMessage {
  role: GenRole;
  content: string;
  tool_call_id?: string;
  tool_calls?: GenToolCall[];
}

export interface GenDocument {
  content: string;
  metadata: { source: string; score: number };
}

/** OpenAI-style function spec, as passed in an llm span's `tools`. */
export interface GenToolSpec {
  type: 'function';
  function: {
    name: string;
    description: string;
    parameters: {
      type: 'object';
      properties: Record<string, { type: 'string' | 'integer'; description: string }>;
      required: string[];
    };
  };
}

export interface GenControlResult {
  action: 'deny' | 'steer' | 'observe';
  matched: boolean;
  confidence: number | null;
  error_message?: string;
}

/** Fields common to every span kind; step_number is left to the server. */
interface GenStepBase {
  id: string;
  name: string;
  created_at: string;
  tags: string[];
  user_metadata: Record<string, string>;
  metrics: Record<string, number>;
  dataset_metadata: Record<string, string>;
  status_code?: number;
}

export interface GenAgentSpan extends GenStepBase {
  type: 'agent';
  input: string;
  output: string;
  agent_type: GenAgentType;
  spans: GenSpan[];
}

export interface GenWorkflowSpan extends GenStepBase {
  type: 'workflow';
  input: string;
  output: string;
  spans: GenSpan[];
}

export interface GenLlmSpan extends GenStepBase {
  type: 'llm';
  input: GenMessage[];
  output: GenMessage;
  model: string;
  temperature: number;
  tools?: GenToolSpec[];
  finish_reason: string;
}

export interface GenRetrieverSpan extends GenStepBase {
  type: 'retriever';
  input: string;
  output: GenDocument[];
}

export interface GenToolSpan extends GenStepBase {
  type: 'tool';
  input: string;
  output: string;
  tool_call_id: string;
}

export interface GenControlSpan extends GenStepBase {
  type: 'control';
  input: string;
  output: GenControlResult;
  control_id: number;
  agent_name: string;
  check_stage: 'pre' | 'post';
  applies_to: 'llm_call' | 'tool_call';
  evaluator_name: string;
}

export type GenSpan = GenAgentSpan | GenWorkflowSpan | GenLlmSpan | GenRetrieverSpan | GenToolSpan | GenControlSpan;

export interface GenTrace {
  type: 'trace';
  id: string;
  name: string;
  input: string;
  output: string;
  created_at: string;
  session_id: string;
  tags: string[];
  user_metadata: Record<string, string>;
  metrics: Record<string, number>;
  dataset_metadata: Record<string, string>;
  /** Set (500) only when the root span failed. */
  status_code?: number;
  spans: GenSpan[];
}

// ---------------------------------------------------------------------------------------------
// PRNG: sfc32 (fast, 128-bit state, passes PractRand) seeded through splitmix32
// ---------------------------------------------------------------------------------------------

const TWO_32 = 4294967296;

class Rng {
  private a = 0;
  private b = 0;
  private c = 0;
  private d = 0;

  constructor(seed: number) {
    // Fold seeds beyond 32 bits in so e.g. Date.now() seeds still differ.
    let s = (Math.floor(seed) >>> 0) ^ Math.imul(Math.floor(seed / TWO_32) | 0, 0x9e3779b1);
    const mix = (): number => {
      s = (s + 0x9e3779b9) | 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) | 0;
    };
    this.a = mix();
    this.b = mix();
    this.c = mix();
    this.d = mix();
    for (let i = 0; i < 12; i++) this.u32();
  }

  /** Uniform unsigned 32-bit integer. */
  u32(): number {
    const a = this.a;
    const b = this.b;
    const c = this.c;
    const t = (((a + b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = b ^ (b >>> 9);
    this.b = (c + (c << 3)) | 0;
    this.c = (((c << 21) | (c >>> 11)) + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  float(): number {
    return this.u32() / TWO_32;
  }

  /** Uniform integer in [0, n). */
  below(n: number): number {
    return Math.floor((this.u32() / TWO_32) * n);
  }

  /** Uniform integer in [lo, hi]. */
  range(lo: number, hi: number): number {
    return lo + this.below(hi - lo + 1);
  }

  chance(p: number): boolean {
    return this.u32() / TWO_32 < p;
  }

  pick<T>(arr: readonly T[]): T {
    return arr[Math.floor((this.u32() / TWO_32) * arr.length)] as T;
  }

  /** Standard normal via a quantile table: cheap, deterministic, tails bounded at ~±3.9σ. */
  normal(): number {
    return NORMAL_Q[this.u32() >>> 18] as number;
  }

  /** Lognormal with the given median. */
  lognormal(median: number, sigma: number): number {
    return median * Math.exp(sigma * this.normal());
  }

  /** Random v4 UUID, lowercase: nibbles -> ASCII through a lookup table into one scratch buffer (no crypto). */
  uuid(): string {
    const a = this.u32();
    const b = this.u32();
    const c = this.u32();
    const d = this.u32();
    putHex8(a, 0);
    HEX_BUF[8] = 45; // '-'
    putHex4(b >>> 16, 9);
    HEX_BUF[13] = 45;
    putHex4((b & 0x0fff) | 0x4000, 14); // version 4
    HEX_BUF[18] = 45;
    putHex4(((c >>> 16) & 0x3fff) | 0x8000, 19); // variant 10xx
    HEX_BUF[23] = 45;
    putHex4(c & 0xffff, 24);
    putHex8(d, 28);
    return HEX_BUF.toString('latin1', 0, 36);
  }

  /** 24 hex chars, for OpenAI-like `call_...` ids and request ids. */
  hex24(): string {
    const a = this.u32();
    const b = this.u32();
    const c = this.u32();
    putHex8(a, 0);
    putHex8(b, 8);
    putHex8(c, 16);
    return HEX_BUF.toString('latin1', 0, 24);
  }
}

// ---------------------------------------------------------------------------------------------
// Precomputed tables
// ---------------------------------------------------------------------------------------------

// Ids are written as ASCII into one scratch buffer and decoded once: about twice as fast as
// concatenating table strings, and the result is a flat string.
const HEX_CODES = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0));
const HEX_BUF = Buffer.alloc(36);
function putHex4(v: number, o: number): void {
  HEX_BUF[o] = HEX_CODES[(v >>> 12) & 15] as number;
  HEX_BUF[o + 1] = HEX_CODES[(v >>> 8) & 15] as number;
  HEX_BUF[o + 2] = HEX_CODES[(v >>> 4) & 15] as number;
  HEX_BUF[o + 3] = HEX_CODES[v & 15] as number;
}
function putHex8(v: number, o: number): void {
  putHex4(v >>> 16, o);
  putHex4(v & 0xffff, o + 4);
}

const PAD2: string[] = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
const PAD3: string[] = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));

/** Inverse standard-normal CDF (Acklam's rational approximation, |error| < 1.2e-9). */
function invNorm(p: number): number {
  const a0 = -3.969683028665376e1,
    a1 = 2.209460984245205e2,
    a2 = -2.759285104469687e2;
  const a3 = 1.38357751867269e2,
    a4 = -3.066479806614716e1,
    a5 = 2.506628277459239;
  const b0 = -5.447609879822406e1,
    b1 = 1.615858368580409e2,
    b2 = -1.556989798598866e2;
  const b3 = 6.680131188771972e1,
    b4 = -1.328068155288572e1;
  const c0 = -7.784894002430293e-3,
    c1 = -3.223964580411365e-1,
    c2 = -2.400758277161838;
  const c3 = -2.549732539343734,
    c4 = 4.374664141464968,
    c5 = 2.938163982698783;
  const d0 = 7.784695709041462e-3,
    d1 = 3.224671290700398e-1,
    d2 = 2.445134137142996,
    d3 = 3.754408661907416;
  const tail = (q: number): number =>
    (((((c0 * q + c1) * q + c2) * q + c3) * q + c4) * q + c5) / ((((d0 * q + d1) * q + d2) * q + d3) * q + 1);
  if (p < 0.02425) return tail(Math.sqrt(-2 * Math.log(p)));
  if (p > 1 - 0.02425) return -tail(Math.sqrt(-2 * Math.log(1 - p)));
  const q = p - 0.5;
  const r = q * q;
  return ((((((a0 * r + a1) * r + a2) * r + a3) * r + a4) * r + a5) * q) / (((((b0 * r + b1) * r + b2) * r + b3) * r + b4) * r + 1);
}

const NORMAL_Q = new Float64Array(16384);
for (let i = 0; i < NORMAL_Q.length; i++) NORMAL_Q[i] = invNorm((i + 0.5) / NORMAL_Q.length);

/** Expand [value, weight] pairs into a flat array so a weighted pick is one uniform index. */
function weighted<T>(pairs: ReadonlyArray<readonly [T, number]>): T[] {
  const out: T[] = [];
  for (const [v, w] of pairs) for (let i = 0; i < w; i++) out.push(v);
  return out;
}

// Plain vocabulary: everyday English plus the support / commerce / engineering / finance jargon
// LLM apps see. Roughly 1,100 words gives ~10 bits of entropy per word, so ZSTD sees text about
// as compressible as real prose rather than one repeated sentence.
const WORD_SOURCE = `
the of and to in is that for it as was with be by on not he this are or his from at which but have an they you
were her she there been one all we their has would when if so what up out about who them can more into some could
time than only other its then also two may like these over such our new most after first any where well because
through back much before good just between how both those each under many same while should never being here
around against often without however another thing people year years way day days work part number world life
hand place case point group problem fact information system data model models service services customer
customers order orders account accounts payment payments invoice invoices refund refunds shipping delivery
package tracking address product products price pricing plan plans subscription subscriptions discount coupon
cart checkout return returns warranty support ticket tickets agent agents request requests response responses
question questions answer answers issue issues error errors message messages email phone chat session sessions
user users team teams manager admin owner member members role roles permission permissions access token tokens
password login logout profile settings preference preferences notification notifications alert alerts report
reports dashboard metric metrics chart table tables column columns row rows query queries filter filters sort
search result results document documents page pages section sections paragraph summary summaries title
description note notes comment comments review reviews rating ratings feedback survey score scores
application applications server servers client clients database databases cache caches queue queues worker
workers job jobs task tasks pipeline pipelines deployment deployments release releases version versions build
builds test tests bug bugs fix fixes patch feature features branch commit commits repository code function
functions method methods class classes object objects array arrays string strings integer float boolean value
values key keys field fields schema schemas index indexes partition partitions shard shards replica replicas
cluster clusters node nodes region regions zone zones network latency throughput bandwidth request timeout
retry retries backoff limit limits quota quotas usage billing cost costs budget forecast revenue margin profit
loss balance transaction transactions transfer transfers deposit withdrawal interest rate rates loan loans
credit debit card cards bank banks fee fees tax taxes statement statements portfolio stock stocks bond bonds
fund funds asset assets risk risks compliance policy policies contract contracts agreement terms privacy
security incident incidents outage outages monitoring logging tracing trace traces span spans event events
embedding embeddings vector vectors retrieval retriever context prompt prompts completion completions
temperature sampling generation inference training evaluation benchmark dataset datasets label labels
classifier classification intent intents entity entities extraction sentiment translation summarization
hallucination grounding citation citations source sources chunk chunks passage passages relevance ranking
reranker tool tools call calls argument arguments parameter parameters output outputs input inputs step steps
plan planner reasoning reflection router routing supervisor judge guardrail guardrails moderation toxicity
safety correctness adherence completeness coherence fluency helpfulness accuracy precision recall
flight flights hotel hotels booking bookings reservation reservations ticketing itinerary airport airline
departure arrival gate seat baggage passport visa destination travel trip trips weekend morning afternoon
evening night today tomorrow yesterday week month quarter calendar meeting meetings schedule appointment
doctor patient clinic pharmacy prescription insurance claim claims coverage premium deductible provider
student course courses lesson lessons exam grade teacher school university library book books article
articles recipe ingredients kitchen restaurant menu reservation weather forecast temperature rain snow wind
city cities country countries street building office home store stores warehouse inventory stock supplier
suppliers vendor vendors shipment shipments carrier route routes truck driver driving map location distance
able above across actually add added adding additional after again ago ahead allow allowed almost along
already always among amount analysis analyze anyone anything appear apply approach appropriate approve
approved area ask asked asking assume attach attached attempt available average avoid aware based basic become
begin behavior below best better beyond big bit block blocked body bottom break bring broken browser bulk
button calculate cancel cancelled cannot capture careful carry certain change changed changes channel charge
charged check checked choose chosen clear clearly close closed common compare complete completed condition
configure confirm confirmed connect connection consider contact contain contains continue control convert
copy correct correctly could count create created creating current currently customize daily deal decide
default define delay delete deleted depend describe detail details detect determine different directly
disable disabled display done download draft drop due during early easy edit effect either else empty enable
enabled end ensure enter entire environment equal estimate even every exact example exceed exist existing
expect expected expire expired explain export extend external fail failed failure fast feel fetch few file
files final find finish fixed follow following format forward found free full further general get give given
go goal great happen happened help helpful high higher history hold however identify immediately impact
important include included including increase indicate initial inside instead integrate issue item items
keep kind know known large last late later latest least leave left less let level likely line link list live
load local long look lost low lower main maintain make manual mark match maximum mean measure merge might
minimum minor missing mode modify monthly move multiple name need needed next none normal notice now offer
old once open operation option optional options original outside overall own paid pass past pending per
perform period pick possible prefer prepare present previous primary print priority private process
processing provide public pull purchase push put quick quickly quite range reach read ready real reason
receive received recent recently record reduce refer regular related remain remove removed repeat replace
require required reset resolve resolved rest restart restore review right rule run running safe save saved
second see seem select send sent separate set setup share short show sign similar simple since single size
skip small soon specific start started state status still stop stopped store submit success successful
suggest support sure switch sync take target tell than thank thanks thing think third though three together
top total track transfer try turn type typical unable understand unique unknown until update updated upgrade
upload urgent use used useful using usually valid validate verify via view visible wait want warning watch
week whether whole within word words write written wrong yes yet zero
analytics architecture authentication authorization availability compatibility configuration
consistency dependency documentation implementation infrastructure integration investigation
localization optimization performance recommendation reliability scalability serialization
synchronization transformation troubleshooting verification visualization
`;

// Tokens that exercise unicode, JSON escaping and punctuation (see the corpora below for rates).
const SPECIAL_TOKENS: readonly string[] = [
  'café',
  'naïve',
  'résumé',
  'façade',
  'jalapeño',
  'Zürich',
  'München',
  'São Paulo',
  'Kraków',
  'Ångström',
  'déjà vu',
  'crème brûlée',
  '東京',
  '大阪',
  'データ',
  '検索結果',
  '你好',
  '谢谢你',
  'Привет',
  'спасибо',
  'γεια σου',
  'مرحبا',
  'שלום',
  'नमस्ते',
  '😀',
  '👍',
  '🚀',
  '✅',
  '⚠️',
  '→',
  '—',
  '…',
  '€42',
  '£19.99',
  '¥3000',
  '±0.5',
  '21°C',
  '≈',
  '≠',
  '“quoted”',
  '«bien»',
  'Ω',
  '5 µs',
  '(see above)',
  '"exact"',
  "it's",
  "don't",
  "won't",
  'e.g.',
  'i.e.',
  'R&D',
  'Q&A',
  '#general',
  '@support',
  '<b>bold</b>',
  'src/index.ts',
  'user@example.com',
  'https://docs.example.com/guide',
  '`config.yaml`',
  '[1]',
  '{id}',
  'C:\\Users\\demo',
  'a/b testing',
  '50/50',
  '100%',
  'v2.3.1',
  'ISO-8601',
  'UTF-8',
  'JSON',
  'HTTP 404',
  'SKU-7731',
  'O(n log n)',
  '3×',
  'x²',
  'A–Z',
];

const WORDS: string[] = [...new Set(WORD_SOURCE.split(/\s+/).filter((w) => w.length > 0))];
const NW = WORDS.length;

const QUESTION_STARTS: readonly string[] = [
  'How do I',
  'How can I',
  'What is the',
  'What are the',
  'Why does my',
  'Why is the',
  'Can you',
  'Could you',
  'Please explain',
  'Is it possible to',
  'When will my',
  'Where can I find',
  'Which',
  'Help me',
  'Summarize the',
  'Compare the',
  'Write a short note about',
  'List the',
  'Explain how the',
  'I need to',
];

const MODELS: readonly string[] = weighted([
  ['gpt-4o', 6],
  ['gpt-4o-mini', 8],
  ['gpt-4.1', 3],
  ['claude-3-5-sonnet-20241022', 5],
  ['claude-3-5-haiku-20241022', 3],
  ['gemini-1.5-pro', 2],
  ['llama-3.1-70b-instruct', 2],
  ['mistral-large-latest', 1],
] as const);
/** USD per 1k input / output tokens, to derive trace `cost`. */
const MODEL_PRICE: Readonly<Record<string, readonly [number, number]>> = {
  'gpt-4o': [0.0025, 0.01],
  'gpt-4o-mini': [0.00015, 0.0006],
  'gpt-4.1': [0.002, 0.008],
  'claude-3-5-sonnet-20241022': [0.003, 0.015],
  'claude-3-5-haiku-20241022': [0.0008, 0.004],
  'gemini-1.5-pro': [0.00125, 0.005],
  'llama-3.1-70b-instruct': [0.0009, 0.0009],
  'mistral-large-latest': [0.002, 0.006],
};
const TEMPERATURES: readonly number[] = [0, 0, 0.1, 0.2, 0.3, 0.5, 0.7, 0.7, 1];
const FINISH_REASONS: readonly string[] = weighted([
  ['stop', 90],
  ['length', 6],
  ['content_filter', 1],
] as const);

const AGENT_TYPES: readonly GenAgentType[] = weighted([
  ['default', 8],
  ['react', 5],
  ['planner', 3],
  ['router', 2],
  ['supervisor', 2],
  ['reflection', 1],
  ['classifier', 1],
  ['judge', 1],
] as const);

const TRACE_NAMES: readonly string[] = [
  'chat',
  'support_conversation',
  'answer_question',
  'rag_query',
  'summarize_document',
  'classify_ticket',
  'draft_email',
  'travel_assistant',
  'code_review',
  'extract_invoice',
  'research_task',
  'sql_assistant',
];
const WORKFLOW_NAMES: readonly string[] = [
  'rag_pipeline',
  'handle_request',
  'answer_question',
  'ingest_context',
  'post_process',
  'summarize_chunks',
  'route_and_answer',
  'validate_output',
  'retrieve_and_rank',
  'compose_reply',
];
const AGENT_NAMES: readonly string[] = [
  'support_agent',
  'research_agent',
  'planner_agent',
  'booking_agent',
  'billing_agent',
  'sql_agent',
  'triage_agent',
  'writer_agent',
  'critic_agent',
  'orchestrator',
];
const LLM_NAMES: readonly string[] = [
  'chat_completion',
  'openai.chat.completions',
  'anthropic.messages',
  'generate_answer',
  'summarize',
  'classify_intent',
  'rewrite_query',
  'extract_entities',
  'plan_next_step',
  'grade_answer',
];
const RETRIEVER_NAMES: readonly string[] = ['vector_search', 'bm25_search', 'hybrid_search', 'kb_lookup', 'rerank', 'faq_retriever'];
const EVALUATOR_NAMES: readonly string[] = ['pii_detector', 'prompt_injection', 'toxicity_guard', 'topic_filter', 'jailbreak_check'];
const DOC_SOURCE_KINDS: readonly string[] = ['kb/', 'https://docs.example.com/', 's3://corpus/', 'confluence://SUP/', 'notion://wiki/'];

const TAGS: readonly string[] = [
  'prod',
  'staging',
  'beta',
  'rag',
  'agent',
  'v2',
  'experiment-a',
  'experiment-b',
  'premium',
  'mobile',
  'web',
  'eval',
  'regression',
  'canary',
  'cached',
  'long-context',
];
const ENVS: readonly string[] = weighted([
  ['production', 16],
  ['staging', 3],
  ['development', 1],
] as const);
const REGIONS: readonly string[] = ['us-east-1', 'us-west-2', 'eu-west-1', 'eu-central-1', 'ap-southeast-2', 'ap-northeast-1'];
const SPAN_META_KEYS: readonly (readonly [string, readonly string[]])[] = [
  ['attempt', ['1', '1', '1', '2', '3']],
  ['cache', ['hit', 'miss', 'miss']],
  ['component', ['retrieval', 'generation', 'tools', 'orchestration']],
  ['framework', ['langchain', 'llamaindex', 'custom', 'openai-agents']],
  ['prompt_version', ['v1', 'v2', 'v3', 'v3-beta']],
];

// Session length 1-8 traces, skewed short like real conversations.
const SESSION_LENGTHS: readonly number[] = weighted([
  [1, 30],
  [2, 20],
  [3, 15],
  [4, 12],
  [5, 9],
  [6, 6],
  [7, 4],
  [8, 4],
] as const);

const ERROR_TEMPLATES: readonly string[] = [
  'RateLimitError: Rate limit reached for requests per minute (429). Please retry after 20s.',
  'TimeoutError: upstream did not respond within 30000 ms',
  'ConnectionResetError: [Errno 104] Connection reset by peer',
  'ValidationError: 1 validation error for ToolInput\nquery\n  field required (type=value_error.missing)',
  'InternalServerError: The server had an error while processing your request. Sorry about that!',
  'ContextLengthExceededError: maximum context length is 128000 tokens, however you requested 131072 tokens',
  'KeyError: \'results\'\n  File "agent/tools.py", line 88, in run\n    return payload["results"][0]',
  'ServiceUnavailable: 503 Service Unavailable from vector store (shard 3 is rebalancing)',
  'PermissionDenied: the API key does not have access to this resource',
];

// Tool catalog; argument kinds drive how `input` JSON is filled.
type ArgKind = 'text' | 'int' | 'city' | 'id' | 'url' | 'date' | 'lang' | 'symbol';
interface ToolDef {
  name: string;
  description: string;
  args: ReadonlyArray<readonly [string, ArgKind, string]>;
}
const TOOL_DEFS: readonly ToolDef[] = [
  {
    name: 'search_web',
    description: 'Search the public web and return the top results.',
    args: [
      ['query', 'text', 'Search terms'],
      ['max_results', 'int', 'How many results to return'],
    ],
  },
  {
    name: 'get_weather',
    description: 'Get the current weather for a city.',
    args: [
      ['city', 'city', 'City name'],
      ['unit', 'text', 'celsius or fahrenheit'],
    ],
  },
  { name: 'lookup_order', description: 'Look up an order by id and return its status.', args: [['order_id', 'id', 'Order identifier']] },
  {
    name: 'run_sql',
    description: 'Run a read-only SQL query against the analytics warehouse.',
    args: [
      ['query', 'text', 'SQL statement'],
      ['limit', 'int', 'Row limit'],
    ],
  },
  {
    name: 'send_email',
    description: 'Send an email on behalf of the user.',
    args: [
      ['to', 'text', 'Recipient'],
      ['subject', 'text', 'Subject line'],
      ['body', 'text', 'Message body'],
    ],
  },
  { name: 'calculator', description: 'Evaluate an arithmetic expression.', args: [['expression', 'text', 'Expression to evaluate']] },
  { name: 'fetch_url', description: 'Download a web page and return its text.', args: [['url', 'url', 'Absolute URL']] },
  {
    name: 'create_ticket',
    description: 'Open a support ticket.',
    args: [
      ['title', 'text', 'Short title'],
      ['priority', 'int', '1 (urgent) to 4 (low)'],
      ['description', 'text', 'Details'],
    ],
  },
  { name: 'get_stock_price', description: 'Return the latest price for a ticker symbol.', args: [['symbol', 'symbol', 'Ticker symbol']] },
  {
    name: 'book_flight',
    description: 'Book a flight between two cities on a date.',
    args: [
      ['origin', 'city', 'Departure city'],
      ['destination', 'city', 'Arrival city'],
      ['date', 'date', 'ISO date'],
    ],
  },
  { name: 'read_file', description: 'Read a file from the workspace.', args: [['path', 'url', 'Workspace path']] },
  {
    name: 'translate_text',
    description: 'Translate text into another language.',
    args: [
      ['text', 'text', 'Text to translate'],
      ['target_language', 'lang', 'ISO 639-1 code'],
    ],
  },
];
const TOOL_SPECS: readonly GenToolSpec[] = TOOL_DEFS.map((t) => ({
  type: 'function',
  function: {
    name: t.name,
    description: t.description,
    parameters: {
      type: 'object',
      properties: Object.fromEntries(t.args.map(([k, kind, d]) => [k, { type: kind === 'int' ? 'integer' : 'string', description: d }])),
      required: [t.args[0]?.[0] ?? 'input'],
    },
  },
}));
const CITIES: readonly string[] = [
  'Paris',
  'Zürich',
  'São Paulo',
  'Tokyo',
  'New York',
  'Berlin',
  'Kraków',
  'Nairobi',
  'Toronto',
  'Sydney',
  'Mumbai',
  'Austin',
];
const LANGS: readonly string[] = ['fr', 'de', 'es', 'ja', 'zh', 'pt', 'it', 'ko'];
const SYMBOLS: readonly string[] = ['AAPL', 'MSFT', 'NVDA', 'GOOG', 'AMZN', 'TSLA', 'SAP', 'ASML'];

// ---------------------------------------------------------------------------------------------
// Text
// ---------------------------------------------------------------------------------------------

// Text is cut from corpora of seeded prose built once per process from the word list with fixed
// seeds. A span's text is a few corpus slices of 120-400 bytes taken at random sentence starts:
// V8 slices are O(1) views, so a 1 KB text costs a handful of PRNG draws instead of ~150 word
// picks (word-by-word assembly was the generator's bottleneck). The main corpus (8 M chars) is much
// larger than a 1 MB Parquet page, so slices inside one page rarely overlap and ZSTD sees about
// the redundancy of the underlying prose (~4.5x on whole records), not repeated sentences.
//
// The main corpus keeps to Latin-1 (accents, °, £, ±...) so most strings stay one-byte in V8, as
// in a mostly-English app; ~4% of segments come from a smaller multilingual corpus (CJK, Cyrillic,
// emoji, typographic quotes) so wide strings and multi-byte UTF-8 are exercised too.
const SEGMENT_MIN = 120;
const SEGMENT_SPREAD = 280; // segment length in [SEGMENT_MIN, SEGMENT_MIN + SEGMENT_SPREAD)

interface Corpus {
  text: string;
  starts: Int32Array;
  /** Slices start before these bounds so a segment (plus the scan to the next space) stays inside. */
  safeSentences: number;
  safeChars: number;
}

function buildCorpus(chars: number, seed: number, specials: readonly string[], specialEvery: number, ends: readonly string[]): Corpus {
  const rng = new Rng(seed);
  const caps = WORDS.map((w) => w.charAt(0).toUpperCase() + w.slice(1));
  // Mostly spaces; newlines make paragraphs (and JSON escapes).
  const seps = [' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', '\n', '\n\n', '\n\n'];
  const pieces: string[] = [];
  const starts: number[] = [];
  const words: string[] = [];
  let pos = 0;
  while (pos < chars) {
    starts.push(pos);
    const n = 4 + (rng.u32() % 17);
    words.length = 0;
    for (let k = 0; k < n; k++) {
      const r = rng.u32();
      const deco = r >>> 26; // numbers 1/64, specials 1/specialEvery, else a word
      let w: string;
      if (deco === 0) w = numberToken(r);
      else if (rng.u32() % specialEvery === 0) w = specials[((r & 0xffff) * specials.length) >>> 16] as string;
      else {
        const i = ((r & 0xffff) * NW) >>> 16;
        w = (k === 0 ? caps[i] : WORDS[i]) as string;
      }
      if (k < n - 1 && ((r >>> 16) & 15) === 0) w += ',';
      words.push(w);
    }
    const r = rng.u32();
    const sentence = words.join(' ') + (ends[(r & 0xffff) % ends.length] as string);
    const sep = seps[(r >>> 16) & 15] as string;
    pieces.push(sentence, sep);
    pos += sentence.length + sep.length;
  }
  const text = pieces.join('');
  const safeSentences = starts.findIndex((p) => p > text.length - 4 * (SEGMENT_MIN + SEGMENT_SPREAD));
  return { text, starts: Int32Array.from(starts), safeSentences, safeChars: starts[safeSentences] as number };
}

const isLatin1 = (w: string): boolean => [...w].every((c) => c.charCodeAt(0) < 256);
const MAIN_CORPUS = buildCorpus(1 << 23, 0xc0ffee, SPECIAL_TOKENS.filter(isLatin1), 64, [
  '.',
  '.',
  '.',
  '.',
  '.',
  '.',
  '.',
  '?',
  '?',
  '!',
  ':',
]);
const WIDE_CORPUS = buildCorpus(1 << 20, 0xbeef, SPECIAL_TOKENS, 6, ['.', '.', '.', '?', '!', '…', '。', '！']);

/**
 * About `bytes` of prose ending in `last`. Segments start at sentence starts (the first one at a
 * random word when `capitalizeFirst` is false) and end at a word boundary.
 */
function prose(rng: Rng, bytes: number, capitalizeFirst = true, last = '.'): string {
  let out = '';
  let need = Math.max(bytes, 1);
  let piece = '';
  for (let first = true; need > 0; first = false) {
    const r = rng.u32();
    const c = (r & 31) === 0 ? WIDE_CORPUS : MAIN_CORPUS;
    const text = c.text;
    const seg = need < SEGMENT_MIN + SEGMENT_SPREAD ? Math.ceil(need) : SEGMENT_MIN + (((r >>> 23) * SEGMENT_SPREAD) >>> 9);
    const start =
      first && !capitalizeFirst
        ? text.indexOf(' ', Math.floor((rng.u32() / TWO_32) * c.safeChars)) + 1
        : (c.starts[Math.floor((rng.u32() / TWO_32) * c.safeSentences)] as number);
    let stop = text.indexOf(' ', start + seg); // seg >= 1, so the slice holds at least one word
    const tail = text.charCodeAt(stop - 1);
    if (tail === 44 || tail === 58) stop--; // drop a trailing ',' or ':' so the sentence closes cleanly
    if (!first) out += isClosed(piece) ? ' ' : '. ';
    piece = text.slice(start, stop);
    out += piece;
    need -= stop - start + 1;
  }
  return isClosed(piece) && last === '.' ? out : out + last;
}

/** Whether a slice already ends a sentence ('.', '?', '!', '…', '。', '！'). */
function isClosed(piece: string): boolean {
  const c = piece.charCodeAt(piece.length - 1);
  return c === 46 || c === 63 || c === 33 || c === 8230 || c === 0x3002 || c === 0xff01;
}

function numberToken(r: number): string {
  switch ((r >>> 16) & 3) {
    case 0:
      return String((r >>> 18) & 1023);
    case 1:
      return `$${(r >>> 20) & 4095}.${PAD2[(r >>> 8) % 100] as string}`;
    case 2:
      return `#${(r >>> 6) & 0xfffff}`;
    default:
      return `${(r >>> 24) % 100}%`;
  }
}

function question(rng: Rng, bytes: number): string {
  return `${rng.pick(QUESTION_STARTS)} ${prose(rng, bytes, false, '?')}`;
}

/** Two distinct tags. */
function twoTags(rng: Rng): string[] {
  const i = rng.below(TAGS.length);
  const j = (i + 1 + rng.below(TAGS.length - 1)) % TAGS.length;
  return [TAGS[i] as string, TAGS[j] as string];
}

function slug(rng: Rng): string {
  return `${rng.pick(WORDS)}-${rng.pick(WORDS)}-${rng.below(10000)}`;
}

// Fixed system prompts (an app reuses a handful verbatim), built once from a fixed seed.
const SYSTEM_PROMPTS: readonly string[] = (() => {
  const rng = new Rng(0x5eed);
  const roles = [
    'helpful customer support assistant for an online store',
    'travel booking assistant',
    'senior software engineer reviewing code',
    'financial analyst assistant',
    'research assistant that cites its sources',
    'SQL expert for an analytics warehouse',
    'friendly tutor for university students',
    'concise summarization engine',
    'intent classifier',
    'careful medical information assistant',
  ];
  return Array.from(
    { length: 24 },
    (_, i) =>
      'You are a ' +
      roles[i % roles.length] +
      '. ' +
      prose(rng, rng.lognormal(90, 0.5)) +
      '\n\nRules:\n- ' +
      prose(rng, 40) +
      '\n- ' +
      prose(rng, 40) +
      '\n- Answer in the language of the user.',
  );
})();

// ---------------------------------------------------------------------------------------------
// Time
// ---------------------------------------------------------------------------------------------

const DAY_MS = 86_400_000;
let isoDay = NaN;
let isoDayPrefix = '';

/** ISO 8601 with milliseconds and Z, via a per-day cached prefix (no Date per span). */
function iso(msFloat: number): string {
  const ms = Math.floor(msFloat);
  const day = Math.floor(ms / DAY_MS);
  if (day !== isoDay) {
    isoDay = day;
    isoDayPrefix = new Date(day * DAY_MS).toISOString().slice(0, 11);
  }
  let rem = ms - day * DAY_MS;
  const h = Math.floor(rem / 3_600_000);
  rem -= h * 3_600_000;
  const m = Math.floor(rem / 60_000);
  rem -= m * 60_000;
  const s = Math.floor(rem / 1000);
  return `${isoDayPrefix + PAD2[h]}:${PAD2[m]}:${PAD2[s]}.${PAD3[rem - s * 1000]}Z`;
}

const nsOf = (ms: number): number => Math.round(ms * 1e6);
const round4 = (x: number): number => Math.round(x * 1e4) / 1e4;

// ---------------------------------------------------------------------------------------------
// Trace factory
// ---------------------------------------------------------------------------------------------

// Span text budget: a lognormal body plus a rare "huge" component (RAG contexts, long documents),
// tuned so spans average ~1 KB of JSON with ~1% above 8 KB.
const BODY_MEDIAN = 140;
const BODY_SIGMA = 0.85;
const HUGE_P = 0.015;
const HUGE_MEDIAN = 11000;
const HUGE_SIGMA = 0.45;

const CONTROL_P = 0.006; // per child slot; yields ~0.5% of spans
const NESTED_P = 0.17; // child slot becomes a nested agent/workflow (depth < 3)

interface SessionState {
  id: string;
  remaining: number;
  env: string;
  userId: string;
  region: string;
  appVersion: string;
  tags: string[];
  model: string;
}

interface TraceCtx {
  question: string;
  model: string;
  systemPrompt: string;
  env: string;
  /** Accumulated by llm spans for the trace's optional `cost` metric. */
  cost: number;
}

class TraceFactory {
  private readonly rng: Rng;
  private readonly errorRate: number;
  private clock: number;
  private session: SessionState | null = null;
  /** End time (ms) of the last span built; avoids allocating {span, end} pairs. */
  private lastEnd = 0;
  /** Spans in the trace being built. */
  private count = 0;
  /** Running totals; `lastSpans` is the span count of the trace `next()` just returned. */
  readonly summary: GenerateSummary = { traces: 0, spans: 0, sessions: 0 };
  lastSpans = 0;

  constructor(opts: GenerateOptions) {
    this.rng = new Rng(opts.seed ?? 42);
    this.errorRate = opts.errorRate ?? 0.02;
    this.clock = opts.startTime ?? Date.UTC(2026, 0, 1);
    if (!Number.isFinite(this.clock)) throw new RangeError('startTime must be a finite epoch ms');
    if (!(this.errorRate >= 0 && this.errorRate <= 1)) throw new RangeError('errorRate must be within [0, 1]');
  }

  /** Next trace in time order (opening a new session when the current one is used up). */
  next(): GenTrace {
    const rng = this.rng;
    let s = this.session;
    if (s === null || s.remaining === 0) {
      s = this.newSession();
      this.session = s;
      this.summary.sessions++;
    }
    s.remaining--;
    if (this.summary.traces > 0) this.clock += 100 + rng.below(800); // traces some hundreds of ms apart
    const start = this.clock;
    this.count = 0;

    const ctx: TraceCtx = {
      question: question(rng, rng.lognormal(110, 0.6)),
      model: rng.chance(0.8) ? s.model : rng.pick(MODELS),
      systemPrompt: SYSTEM_PROMPTS[rng.below(6) + rng.below(4) * 6] as string,
      env: s.env,
      cost: 0,
    };

    // Usually one workflow/agent root; sometimes a flat retriever+llm or a lone llm call.
    const spans: GenSpan[] = [];
    const shape = rng.float();
    let t = start + rng.range(0, 4);
    let output: string;
    let failed = false;
    if (shape < 0.86) {
      const root = this.container(rng.chance(0.55) ? 'workflow' : 'agent', t, 1, ctx);
      spans.push(root);
      output = root.output;
      failed = root.status_code === 500;
    } else if (shape < 0.95) {
      spans.push(this.retriever(t, ctx));
      t = this.lastEnd + rng.range(1, 10);
      const llm = this.llm(t, ctx, null);
      spans.push(llm);
      output = llm.output.content;
      failed = llm.status_code === 500;
    } else {
      const llm = this.llm(t, ctx, null);
      spans.push(llm);
      output = llm.output.content;
      failed = llm.status_code === 500;
    }
    const end = this.lastEnd + rng.range(0, 3);

    const metrics: Record<string, number> = { duration_ns: nsOf(end - start) };
    if (rng.chance(0.4)) metrics['cost'] = Math.round(ctx.cost * 1e6) / 1e6;
    if (rng.chance(0.3)) metrics['latency_ms'] = Math.round(end - start);

    const userMetadata: Record<string, string> = { env: s.env, user_id: s.userId, region: s.region };
    if (rng.chance(0.5)) userMetadata['app_version'] = s.appVersion;
    const tags = s.tags.slice();
    if (rng.chance(0.2)) {
      const extra = rng.pick(TAGS);
      if (!tags.includes(extra)) tags.push(extra);
    }
    const datasetMetadata: Record<string, string> = {};
    if (rng.chance(0.03)) {
      datasetMetadata['dataset'] = 'golden-qa-v3';
      datasetMetadata['row_id'] = String(rng.below(5000));
    }

    const trace: GenTrace = {
      type: 'trace',
      id: rng.uuid(),
      name: rng.pick(TRACE_NAMES),
      input: ctx.question,
      output,
      created_at: iso(start),
      session_id: s.id,
      tags,
      user_metadata: userMetadata,
      metrics,
      dataset_metadata: datasetMetadata,
      spans,
    };
    if (failed) trace.status_code = 500;
    this.lastSpans = this.count;
    this.summary.traces++;
    this.summary.spans += this.count;
    return trace;
  }

  private newSession(): SessionState {
    const rng = this.rng;
    const nTags = rng.below(5);
    const tags = nTags < 2 ? [] : nTags < 4 ? [rng.pick(TAGS)] : twoTags(rng);
    return {
      id: rng.uuid(),
      remaining: rng.pick(SESSION_LENGTHS),
      env: rng.pick(ENVS),
      userId: `user_${rng.below(50_000)}`,
      region: rng.pick(REGIONS),
      appVersion: `1.${rng.below(12)}.${rng.below(20)}`,
      tags,
      model: rng.pick(MODELS),
    };
  }

  // ---- shared span pieces ----

  private budget(): number {
    const rng = this.rng;
    return rng.chance(HUGE_P) ? rng.lognormal(HUGE_MEDIAN, HUGE_SIGMA) : rng.lognormal(BODY_MEDIAN, BODY_SIGMA);
  }

  private spanTags(): string[] {
    const rng = this.rng;
    const r = rng.below(10);
    if (r < 6) return [];
    if (r < 9) return [rng.pick(TAGS)];
    return twoTags(rng);
  }

  private spanMetadata(ctx: TraceCtx): Record<string, string> {
    const rng = this.rng;
    const r = rng.below(10);
    if (r < 7) return {};
    const md: Record<string, string> = {};
    if (r === 9) md['env'] = ctx.env;
    const [k, vals] = rng.pick(SPAN_META_KEYS);
    md[k] = rng.pick(vals);
    return md;
  }

  private errorText(): string {
    return `${this.rng.pick(ERROR_TEMPLATES)} (request_id=req_${this.rng.hex24()})`;
  }

  // ---- span kinds ----

  private container(kind: 'agent' | 'workflow', start: number, depth: number, ctx: TraceCtx): GenAgentSpan | GenWorkflowSpan {
    const rng = this.rng;
    this.count++;
    const id = rng.uuid();
    const name = rng.pick(kind === 'agent' ? AGENT_NAMES : WORKFLOW_NAMES);
    const input = depth === 1 || rng.chance(0.5) ? ctx.question : prose(rng, rng.lognormal(120, 0.7));
    // Root spans have 2-12 children (skewed low); nested ones 1-5.
    const u = rng.float();
    const n = depth === 1 ? 2 + Math.floor(11 * u * u) : 1 + Math.floor(5 * u);
    const children: GenSpan[] = [];
    let t = start + rng.range(1, 20);
    for (let i = 0; i < n; i++) {
      const r = rng.float();
      if (r < CONTROL_P) {
        children.push(this.control(t, ctx));
      } else if (depth < 3 && r < CONTROL_P + NESTED_P) {
        children.push(this.container(rng.chance(0.5) ? 'workflow' : 'agent', t, depth + 1, ctx));
      } else {
        const k = rng.below(20);
        if (k < 10) {
          // An llm call that requests a tool is followed by that tool's span.
          const wantsTool = i < n - 1 && k < 4;
          const call = wantsTool ? this.toolCall() : null;
          const llm = this.llm(t, ctx, call);
          children.push(llm);
          if (call !== null && llm.status_code !== 500) {
            t = this.lastEnd + rng.range(0, 5);
            children.push(this.tool(t, ctx, call));
            i++;
          }
        } else if (k < 15) {
          children.push(this.tool(t, ctx, null));
        } else {
          children.push(this.retriever(t, ctx));
        }
      }
      t = this.lastEnd + rng.range(0, 15);
    }
    const end = t + rng.range(0, 10);
    this.lastEnd = end;

    const failed = rng.chance(this.errorRate);
    const output = failed ? this.errorText() : prose(rng, this.budget() * 0.6);
    const metrics: Record<string, number> = { duration_ns: nsOf(end - start) };
    if (kind === 'agent' && rng.chance(0.1)) metrics['agent_efficiency'] = round4(rng.float());
    const createdAt = iso(start);
    const userMetadata = this.spanMetadata(ctx);
    const tags = this.spanTags();
    // Two literals rather than a spread of shared fields: spreads are slow on this hot path.
    const span: GenAgentSpan | GenWorkflowSpan =
      kind === 'agent'
        ? {
            type: 'agent',
            input,
            output,
            name,
            created_at: createdAt,
            user_metadata: userMetadata,
            tags,
            metrics,
            dataset_metadata: {},
            id,
            agent_type: rng.pick(AGENT_TYPES),
            spans: children,
          }
        : {
            type: 'workflow',
            input,
            output,
            name,
            created_at: createdAt,
            user_metadata: userMetadata,
            tags,
            metrics,
            dataset_metadata: {},
            id,
            spans: children,
          };
    if (failed) span.status_code = 500;
    return span;
  }

  private toolCall(): GenToolCall {
    const rng = this.rng;
    const def = rng.pick(TOOL_DEFS);
    const args: Record<string, string | number> = {};
    for (const [k, kind] of def.args) {
      switch (kind) {
        case 'text':
          args[k] = prose(rng, rng.lognormal(40, 0.6), false, '');
          break;
        case 'int':
          args[k] = rng.range(1, 20);
          break;
        case 'city':
          args[k] = rng.pick(CITIES);
          break;
        case 'id':
          args[k] = `ord_${rng.hex24().slice(0, 10)}`;
          break;
        case 'url':
          args[k] = rng.pick(DOC_SOURCE_KINDS) + slug(rng);
          break;
        case 'date':
          args[k] = iso(this.clock + rng.below(90) * DAY_MS).slice(0, 10);
          break;
        case 'lang':
          args[k] = rng.pick(LANGS);
          break;
        case 'symbol':
          args[k] = rng.pick(SYMBOLS);
          break;
      }
    }
    return { id: `call_${rng.hex24()}`, function: { name: def.name, arguments: JSON.stringify(args) } };
  }

  private llm(start: number, ctx: TraceCtx, call: GenToolCall | null): GenLlmSpan {
    const rng = this.rng;
    this.count++;
    const id = rng.uuid();
    const budget = this.budget();
    const messages: GenMessage[] = [{ role: 'system', content: ctx.systemPrompt }];
    // Earlier turns of the conversation, sometimes with a tool result.
    if (rng.chance(0.25)) {
      const turns = rng.range(1, 3);
      for (let i = 0; i < turns; i++) {
        messages.push({ role: 'user', content: question(rng, rng.lognormal(60, 0.5)) });
        messages.push({ role: 'assistant', content: prose(rng, rng.lognormal(120, 0.6)) });
      }
      if (rng.chance(0.3))
        messages.push({ role: 'tool', content: prose(rng, rng.lognormal(80, 0.6)), tool_call_id: `call_${rng.hex24()}` });
    }
    // Large budgets become RAG prompts: retrieved context inlined in the user turn.
    const user = budget > 1500 ? `Context:\n${prose(rng, budget * 0.55)}\n\nQuestion: ${ctx.question}` : ctx.question;
    messages.push({ role: 'user', content: user });

    const failed = rng.chance(this.errorRate);
    let content: string;
    let finish: string;
    if (failed) {
      content = this.errorText();
      finish = 'error';
    } else if (call !== null) {
      content = rng.chance(0.5) ? '' : prose(rng, rng.lognormal(60, 0.5));
      finish = 'tool_calls';
    } else {
      content = prose(rng, budget > 1500 ? budget * 0.45 : budget * 0.9);
      finish = rng.pick(FINISH_REASONS);
    }
    const output: GenMessage = { role: 'assistant', content };
    if (call !== null && !failed) output.tool_calls = [call];

    let inChars = 0;
    for (const m of messages) inChars += m.content.length;
    const inTokens = Math.ceil(inChars / 4);
    const outTokens = Math.max(1, Math.ceil(content.length / 4) + (call !== null ? 20 : 0));
    const ttft = rng.lognormal(350, 0.5);
    const durMs = ttft + (outTokens * 1000) / (40 + rng.below(80));
    const metrics: Record<string, number> = {
      duration_ns: nsOf(durMs),
      num_input_tokens: inTokens,
      num_output_tokens: outTokens,
      num_total_tokens: inTokens + outTokens,
      time_to_first_token_ns: nsOf(ttft),
    };
    if (rng.chance(0.05)) metrics['num_cached_input_tokens'] = Math.floor(inTokens * rng.float());
    if (rng.chance(0.3)) {
      const u = rng.float();
      metrics['correctness'] = round4(1 - u * u * u);
      metrics['context_adherence'] = round4(1 - rng.float() * rng.float());
      metrics['toxicity'] = round4(rng.float() ** 4 * 0.4);
    }
    const model = rng.chance(0.9) ? ctx.model : rng.pick(MODELS);
    const price = MODEL_PRICE[model];
    if (price !== undefined) ctx.cost += (inTokens * price[0] + outTokens * price[1]) / 1000;

    const span: GenLlmSpan = {
      type: 'llm',
      input: messages,
      output,
      name: rng.pick(LLM_NAMES),
      created_at: iso(start),
      user_metadata: this.spanMetadata(ctx),
      tags: this.spanTags(),
      metrics,
      dataset_metadata: {},
      id,
      model,
      temperature: rng.pick(TEMPERATURES),
      finish_reason: finish,
    };
    if (call !== null || rng.chance(0.08)) span.tools = this.toolList(call);
    if (failed) span.status_code = 500;
    this.lastEnd = start + durMs;
    return span;
  }

  private toolList(call: GenToolCall | null): GenToolSpec[] {
    const rng = this.rng;
    const n = rng.range(1, 3);
    const out: GenToolSpec[] = [];
    if (call !== null) {
      const spec = TOOL_SPECS.find((s) => s.function.name === call.function.name);
      if (spec !== undefined) out.push(spec);
    }
    while (out.length < n) {
      const spec = rng.pick(TOOL_SPECS);
      if (!out.includes(spec)) out.push(spec);
    }
    return out;
  }

  private tool(start: number, ctx: TraceCtx, call: GenToolCall | null): GenToolSpan {
    const rng = this.rng;
    this.count++;
    const id = rng.uuid();
    const c = call ?? this.toolCall();
    const failed = rng.chance(this.errorRate);
    let output: string;
    if (failed) output = this.errorText();
    else if (rng.chance(0.3)) output = `{"status":"ok","result":${JSON.stringify(prose(rng, this.budget()))}}`;
    else output = prose(rng, this.budget());
    const durMs = rng.lognormal(80, 1.0);
    const metrics: Record<string, number> = { duration_ns: nsOf(durMs) };
    const span: GenToolSpan = {
      type: 'tool',
      input: c.function.arguments,
      output,
      name: c.function.name,
      created_at: iso(start),
      user_metadata: this.spanMetadata(ctx),
      tags: this.spanTags(),
      metrics,
      dataset_metadata: {},
      id,
      tool_call_id: c.id,
    };
    if (failed) span.status_code = 500;
    this.lastEnd = start + durMs;
    return span;
  }

  private retriever(start: number, ctx: TraceCtx): GenRetrieverSpan {
    const rng = this.rng;
    this.count++;
    const id = rng.uuid();
    const query = rng.chance(0.5) ? ctx.question : prose(rng, rng.lognormal(60, 0.5), true, '');
    const failed = rng.chance(this.errorRate);
    const docs: GenDocument[] = [];
    if (!failed) {
      const k = rng.range(2, 6);
      const per = this.budget() / k;
      let score = 0.6 + rng.float() * 0.39;
      for (let i = 0; i < k; i++) {
        docs.push({
          content: prose(rng, per * (0.5 + rng.float())),
          metadata: { source: `${rng.pick(DOC_SOURCE_KINDS) + slug(rng)}.md`, score: round4(score) },
        });
        score -= rng.float() * 0.08;
      }
    }
    const durMs = rng.lognormal(120, 0.6);
    const metrics: Record<string, number> = { duration_ns: nsOf(durMs) };
    if (rng.chance(0.2)) metrics['context_relevance'] = round4(rng.float());
    const span: GenRetrieverSpan = {
      type: 'retriever',
      input: query,
      output: docs,
      name: rng.pick(RETRIEVER_NAMES),
      created_at: iso(start),
      user_metadata: this.spanMetadata(ctx),
      tags: this.spanTags(),
      metrics,
      dataset_metadata: {},
      id,
    };
    // The error text has no slot in a document list; it travels in user_metadata instead.
    if (failed) {
      span.status_code = 500;
      span.user_metadata['error_message'] = this.errorText();
    }
    this.lastEnd = start + durMs;
    return span;
  }

  private control(start: number, ctx: TraceCtx): GenControlSpan {
    const rng = this.rng;
    this.count++;
    const id = rng.uuid();
    const failed = rng.chance(this.errorRate);
    const matched = rng.chance(0.15);
    const output: GenControlResult = {
      action: matched ? (rng.chance(0.5) ? 'deny' : 'steer') : 'observe',
      matched,
      confidence: round4(matched ? 0.7 + rng.float() * 0.3 : rng.float() * 0.4),
    };
    if (failed) output.error_message = this.errorText();
    const durMs = rng.lognormal(15, 0.5);
    const span: GenControlSpan = {
      type: 'control',
      input: rng.chance(0.5) ? ctx.question : prose(rng, rng.lognormal(150, 0.6)),
      output,
      name: 'control_check',
      created_at: iso(start),
      user_metadata: this.spanMetadata(ctx),
      tags: this.spanTags(),
      metrics: { duration_ns: nsOf(durMs) },
      dataset_metadata: {},
      id,
      control_id: rng.range(1, 40),
      agent_name: rng.pick(AGENT_NAMES),
      check_stage: rng.chance(0.5) ? 'pre' : 'post',
      applies_to: rng.chance(0.6) ? 'llm_call' : 'tool_call',
      evaluator_name: rng.pick(EVALUATOR_NAMES),
    };
    if (failed) span.status_code = 500;
    this.lastEnd = start + durMs;
    return span;
  }
}

// ---------------------------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------------------------

function checkTarget(spans: number): number {
  if (!Number.isFinite(spans) || spans < 0) throw new RangeError('spans must be a finite number >= 0');
  return spans;
}

/**
 * Yields traces in time order until at least `opts.spans` span records were produced (the last
 * trace may overshoot). The generator's return value holds the exact totals.
 */
export function* generateTraces(opts: GenerateOptions): Generator<GenTrace, GenerateSummary, undefined> {
  const target = checkTarget(opts.spans);
  const f = new TraceFactory(opts);
  while (f.summary.spans < target) yield f.next();
  return { ...f.summary };
}

/**
 * Same trace stream as `generateTraces`, grouped into arrays of about `batchSpans` spans: a batch
 * is closed at the trace boundary nearest to `batchSpans` (a single larger trace is its own batch).
 */
export function* generateBatches(opts: GenerateBatchOptions): Generator<GenTrace[], GenerateSummary, undefined> {
  const target = checkTarget(opts.spans);
  if (!(opts.batchSpans >= 1)) throw new RangeError('batchSpans must be >= 1');
  const f = new TraceFactory(opts);
  let batch: GenTrace[] = [];
  let inBatch = 0;
  while (f.summary.spans < target) {
    const trace = f.next();
    const n = f.lastSpans;
    // Close first if adding this trace would overshoot by more than the batch now falls short.
    if (batch.length > 0 && inBatch + n - opts.batchSpans > opts.batchSpans - inBatch) {
      yield batch;
      batch = [];
      inBatch = 0;
    }
    batch.push(trace);
    inBatch += n;
    if (inBatch >= opts.batchSpans) {
      yield batch;
      batch = [];
      inBatch = 0;
    }
  }
  if (batch.length > 0) yield batch;
  return { ...f.summary };
}

/** Convenience for tests: the whole set in memory plus exact totals. */
export function generateTraceSet(opts: GenerateOptions): { traces: GenTrace[]; summary: GenerateSummary } {
  const traces: GenTrace[] = [];
  const it = generateTraces(opts);
  for (;;) {
    const r = it.next();
    if (r.done === true) return { traces, summary: r.value };
    traces.push(r.value);
  }
}

/** Number of span records in a trace tree (the trace record itself not counted). */
export function countSpans(trace: GenTrace): number {
  return countList(trace.spans);
}

function countList(spans: readonly GenSpan[]): number {
  let n = spans.length;
  for (const s of spans) if (s.type === 'agent' || s.type === 'workflow') n += countList(s.spans);
  return n;
}
