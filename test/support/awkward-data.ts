/**
 * A deliberately awkward data set for checking the filter language (test/query/filter-semantics.test.ts):
 * ingest bodies of traces with nested spans of every kind, plus helpers to log them into a store.
 *
 * Every record has an explicit id derived from a short human label (`uid('T01a1')`), so expected
 * ids can be written down by hand and failures can be printed as labels (`labelOf(id)`):
 *   S1..S6       sessions of the hand-made traces      R01..R14   sessions of the filler traces
 *   T01..T11     hand-made traces                      F01..F42   filler traces
 *   T01a, T01a1  spans: trace label + one letter per level below the trace, digits for the next one
 *
 * The hand-made traces (T..) carry the values the hand-written cases ask about; the seeded filler
 * traces (F..) carry the same kinds of awkwardness (nulls, empty strings, duplicate and case-only
 * tags, unicode, quotes, `%`, `_`, backslashes, JSON-looking text, extreme numbers, tied dates) but
 * from a vocabulary that does not overlap the values the positive hand-written cases look for.
 *
 * Things to know when reading cases against this data:
 * - Dates of the hand-made records are on 2026-03-01/02 (and T07 on 2026-02-28); fillers are on
 *   2026-02-09/10, so date cases can bound themselves to the hand-made day.
 * - Metric `quality` is present on some spans and only one trace (T02): trace-level filters on it
 *   read roll-ups (average). `num_input_tokens`/`num_output_tokens`/`cost` roll up by sum, `*_ns` by
 *   max. Fillers use `score` (never on traces), `num_output_tokens`, `wait_ns` and `big`.
 * - Extreme values are placed so that every roll-up sum is exact whatever the summation order (no
 *   group mixes values that cancel), so JS and DuckDB compute bit-identical roll-ups.
 * - Phase B (`logAwkward` after phase A) adds a trace to an existing session (T04 into S2), a child
 *   span under an existing leaf workflow through logSpans (T04a1 under T04a), and a whole trace
 *   created through logSpans (T11 in S6). `mode: 'mixed'` seals phase A before phase B is logged.
 */
import type { TraceStore } from '../../src/engine/trace-store.js';
import type { LogSpansRequest, LogTracesRequest } from '../../src/schemas/ingest.js';
import { prng } from './fuzz/rng.js';

// ------------------------------------------------------------------------------------- ids

const ID_PREFIX = '00000000-0000-4000-8000-';

/** A fixed UUID for a label of at most 6 ASCII characters: the label's bytes in hex, zero padded. */
export function uid(label: string): string {
  if (label.length === 0 || label.length > 6 || !/^[\x21-\x7e]+$/.test(label)) throw new Error(`bad label ${label}`);
  return ID_PREFIX + Buffer.from(label, 'latin1').toString('hex').padStart(12, '0');
}

/** The label behind an id made by `uid` (or the id itself when it is not one of ours). */
export function labelOf(id: string): string {
  if (!id.startsWith(ID_PREFIX)) return id;
  const hex = id.slice(ID_PREFIX.length).replace(/^(00)+/, '');
  return Buffer.from(hex, 'hex').toString('latin1');
}

// ------------------------------------------------------------------------------------- values

/** 10,000+ characters with a needle at the very end. */
export const LONG_WITH_NEEDLE = `${'lorem ipsum dolor '.repeat(560)}needle-at-end`;
export const LONG_ASCII = `${'x'.repeat(5000)}ÆØÅ`;
export const LONG_CJK = '日本語'.repeat(2000);
export const TWO_53 = 9007199254740992; // 2^53
export const CAFE_NFC = 'Caf\u00e9';
export const CAFE_NFD = 'Cafe\u0301';

type Node = Record<string, unknown>;

const msg = (role: string, content: string) => ({ role, content });

// ------------------------------------------------------------------------------------- hand-made traces

/** Phase A, session S1: T01 and T02 in one request. */
function sessionS1(): Node[] {
  const T01: Node = {
    id: uid('T01'),
    name: 'Alpha',
    input: 'What is 100% of nothing?',
    output: 'Nothing at all.',
    created_at: '2026-03-01T00:00:00Z', // midnight UTC
    tags: ['red', 'red'], // duplicate tag
    external_id: 'ext-1',
    status_code: 200,
    session_id: uid('S1'),
    spans: [
      {
        type: 'agent',
        id: uid('T01a'),
        name: 'alpha',
        agent_type: 'planner',
        agent_name: 'Planner "P"',
        input: 'plan it',
        output: 'planned',
        created_at: '2026-03-01T00:00:00.000001Z',
        tags: ['Red'],
        // no metrics of its own: its `quality` is the roll-up of T01a1, T01a2 (0.5, 1) = 0.75
        spans: [
          {
            type: 'llm',
            id: uid('T01a1'),
            name: 'ALPHA',
            input: [msg('system', 'Be brief'), msg('user', 'Zoë asked about 東京タワー')],
            output: msg('assistant', 'A tower 🗼 in Tokyo'),
            model: 'gpt-4o',
            temperature: 0,
            finish_reason: 'stop',
            tools: [{ type: 'function', function: { name: 'lookup_tower' } }],
            metrics: { quality: 0.5, num_input_tokens: 10, num_output_tokens: 4, latency_ns: 5 },
            created_at: '2026-03-01T00:00:00.000002Z',
            tags: ['red', 'blue'],
          },
          {
            type: 'tool',
            id: uid('T01a2'),
            name: 'a_b',
            input: '{"a": 1}', // a JSON-looking string, stored as sent
            output: 'C:\\temp\\new',
            tool_call_id: 'call_1',
            metrics: { quality: 1, latency_ns: 7 },
            created_at: '2026-03-01T00:00:00.000003Z',
            tags: ['RED', 'blue', 'blue'],
            status_code: 200,
          },
          {
            type: 'control',
            id: uid('T01a3'),
            name: 'axb',
            input: 'check',
            output: { action: 'observe', matched: false },
            control_id: 7,
            agent_name: 'planner',
            check_stage: 'pre',
            applies_to: 'llm_call',
            evaluator_name: 'pii',
            selector_path: '$.output',
            created_at: '2026-03-01T00:00:00.000004Z',
            tags: [''], // one empty tag
            status_code: 0,
          },
        ],
      },
      {
        type: 'retriever',
        id: uid('T01b'),
        name: 'search',
        input: 'towers',
        output: [{ content: 'Tokyo Tower', metadata: { score: 0.9 } }, { page_content: 'Eiffel' }],
        metrics: { quality: 0.25 },
        created_at: '2026-03-01T00:00:00.001Z',
        tags: [],
      },
    ],
  };
  const T02: Node = {
    id: uid('T02'),
    name: 'alpha ', // trailing space
    input: 'Zoë',
    output: 'zoë',
    created_at: '2026-03-01T12:00:00.123456Z',
    tags: ['blue', 'red'],
    metrics: { quality: 0.875 }, // the only trace with its own quality: it wins over the roll-up
    external_id: '',
    session_id: uid('S1'),
    spans: [
      {
        type: 'llm',
        id: uid('T02a'),
        name: 'Zoë',
        input: [msg('user', 'héllo wörld')],
        output: msg('assistant', 'say "hi"'),
        model: 'GPT-4o',
        temperature: 0.7,
        finish_reason: 'length',
        metrics: { quality: 0.125, num_input_tokens: 20 },
        created_at: '2026-03-01T12:00:00.123457Z', // one microsecond after T02
        tags: ['blue'],
      },
      {
        type: 'tool',
        id: uid('T02b'),
        name: 'zoë',
        input: "O'Brien",
        output: '100% sure',
        tool_call_id: '',
        metrics: { latency_ns: 3 },
        created_at: '2026-03-01T12:00:00.123Z', // same millisecond as T02, 456 µs earlier
        status_code: 500,
        error_message: 'Boom',
      },
      {
        type: 'workflow',
        id: uid('T02c'),
        name: 'ZOË',
        input: 'back\\slash',
        output: '',
        created_at: '2026-03-01T17:30:00.123456+05:30', // = 12:00:00.123456Z, the same instant as T02
        progress_message: '50% done',
        spans: [
          {
            type: 'tool',
            id: uid('T02c1'),
            name: '100%',
            input: 'x',
            output: 'y',
            created_at: '2026-03-01T12:00:00.123456', // no zone: read as UTC, the same instant again
            metrics: { quality: 0 },
            error_message: 'boom',
          },
        ],
      },
    ],
  };
  return [T01, T02];
}

/** Phase A, session S2: T03. */
function sessionS2(): Node[] {
  return [
    {
      id: uid('T03'),
      name: CAFE_NFC,
      input: LONG_WITH_NEEDLE,
      output: 'ok',
      created_at: '2026-03-01T23:59:59.999999Z', // the last microsecond before midnight
      tags: ['Red'],
      is_complete: false,
      session_id: uid('S2'),
      spans: [
        {
          type: 'agent',
          id: uid('T03a'),
          name: CAFE_NFD, // looks the same, is not the same string
          agent_type: 'react',
          agent_name: 'Αθήνα',
          input: 'Αθήνα',
          output: 'ΑΘΗΝΑ',
          created_at: '2026-03-02T00:00:00Z', // midnight UTC
          metrics: { quality: 0.75 }, // its own value wins over the roll-up of its child
          spans: [
            {
              type: 'llm',
              id: uid('T03a1'),
              name: 'café',
              input: [msg('user', 'Αθήνα or ΑΘΗΝΑ?')],
              output: msg('assistant', 'both'),
              temperature: 1e-300,
              metrics: { num_input_tokens: 0, num_output_tokens: 0, quality: 0.25 },
              created_at: '2026-03-02T00:00:00.000000Z', // same instant as T03a
              tags: ['', ''],
            },
          ],
        },
        {
          type: 'retriever',
          id: uid('T03b'),
          name: 'CAFÉ',
          input: '%',
          output: [],
          created_at: '2026-03-02T05:30:00+05:30', // = 2026-03-02T00:00:00Z
          metrics: { latency_ns: TWO_53 },
        },
        {
          type: 'tool',
          id: uid('T03c'),
          name: '_',
          input: '_',
          output: '\\',
          created_at: '2026-03-01T23:59:59.999999Z',
          tags: ['blue', 'Blue'],
          metrics: { quality: 0.5 },
        },
      ],
    },
  ];
}

/** Phase A, session S3: T05 and T06 (numbers). */
function sessionS3(): Node[] {
  return [
    {
      id: uid('T05'),
      name: 'numbers',
      input: 'n',
      created_at: '2026-03-01T01:00:00Z',
      metrics: { extreme: 1e300 },
      session_id: uid('S3'),
      spans: [
        {
          type: 'tool',
          id: uid('T05a'),
          name: 'n1',
          input: 'a',
          metrics: { extreme: TWO_53, cost: 0.5 },
          status_code: -1,
          created_at: '2026-03-01T01:00:00.001Z',
        },
        {
          type: 'tool',
          id: uid('T05b'),
          name: 'n2',
          input: 'b',
          metrics: { extreme: TWO_53 - 1, cost: 0.25 },
          status_code: 2147483647,
          created_at: '2026-03-01T01:00:00.002Z',
        },
        {
          type: 'control',
          id: uid('T05c'),
          name: 'n3',
          input: 'c',
          metrics: { extreme: 1e-300 },
          control_id: 0,
          check_stage: 'post',
          applies_to: 'tool_call',
          created_at: '2026-03-01T01:00:00.003Z',
        },
      ],
    },
    {
      id: uid('T06'),
      name: 'numbers', // same name and created_at as T05: ties for sorting
      input: 'n',
      created_at: '2026-03-01T01:00:00Z',
      session_id: uid('S3'),
      spans: [
        {
          type: 'llm',
          id: uid('T06a'),
          name: 'n4',
          input: [msg('user', 'zero')],
          output: msg('assistant', 'nil'),
          temperature: 2,
          metrics: { extreme: 0, cost: 0 },
          created_at: '2026-03-01T01:00:00.004Z',
        },
        {
          type: 'tool',
          id: uid('T06b'),
          name: 'n5',
          input: 'e',
          metrics: { extreme: -TWO_53 },
          status_code: 404,
          created_at: '2026-03-01T01:00:00.005Z',
        },
      ],
    },
  ];
}

/** Phase A, session S4: T07 (negative extremes, the day before). */
function sessionS4(): Node[] {
  return [
    {
      id: uid('T07'),
      name: 'negatives',
      input: 'neg',
      created_at: '2026-02-28T23:59:59.999Z',
      metrics: { extreme: -1e300 },
      session_id: uid('S4'),
      spans: [
        { type: 'tool', id: uid('T07a'), name: 'n6', input: 'f', metrics: { extreme: -1e-300 }, created_at: '2026-03-01T00:00:00.000Z' },
      ],
    },
  ];
}

/** Phase A, session S5: T08 and T09 (ties and sort order of unusual characters). */
function sessionS5(): Node[] {
  const at = '2026-03-01T03:00:00Z';
  const tie = (letter: string, name: string, rank: number | null): Node => ({
    type: 'tool',
    id: uid(`T08${letter}`),
    name,
    input: `tie ${letter}`,
    created_at: at,
    ...(rank === null ? {} : { metrics: { rank } }),
  });
  return [
    {
      id: uid('T08'),
      name: 'tie',
      input: 'ties',
      created_at: at,
      session_id: uid('S5'),
      spans: [tie('a', 'tie', 2), tie('b', 'tie', 1), tie('c', 'Tie', 2), tie('d', 'tie', null), tie('e', 'TIE', 1)],
    },
    {
      id: uid('T09'),
      name: 'Ｆｕｌｌ', // fullwidth letters (U+FF26...): sort after CJK, before emoji in code-point order
      input: 'wide',
      created_at: at,
      session_id: uid('S5'),
      spans: [
        {
          type: 'llm',
          id: uid('T09a'),
          name: '🎉 party',
          input: [msg('user', 'emoji 🎉 party')],
          output: msg('assistant', '🎉'),
          created_at: at,
          metrics: { rank: 3 },
        },
        { type: 'tool', id: uid('T09b'), name: 'Ｆｕｌｌ', input: 'fw', created_at: at, metrics: { rank: 3 } },
        // A metric name with a dot, a space, a slash and non-ASCII.
        { type: 'tool', id: uid('T09c'), name: '東京', input: 'cjk', created_at: at, metrics: { 'odd.name ä/x': 2 } },
      ],
    },
  ];
}

/** Phase A, session S6: T10 (JSON-looking text, quotes, SQL, long strings). */
function sessionS6(): Node[] {
  return [
    {
      id: uid('T10'),
      name: '{"name": "x"}',
      input: '{"role":"user","content":"hi"}', // a string that looks like a message
      output: '[1, 2, 3]',
      created_at: '2026-03-01T04:00:00Z',
      session_id: uid('S6'),
      dataset_input: 'ds-in',
      dataset_output: '',
      spans: [
        {
          type: 'llm',
          id: uid('T10a'),
          name: 'json',
          input: [msg('user', 'hi')], // its stored text is a list, so never equal to T10's input
          output: msg('assistant', 'hello'),
          model: '',
          finish_reason: '',
          created_at: '2026-03-01T04:00:00.001Z',
        },
        {
          type: 'tool',
          id: uid('T10b'),
          name: "it's",
          input: 'say "hi"',
          output: 'line1\nline2\ttab',
          created_at: '2026-03-01T04:00:00.002Z',
          external_id: 'EXT-1',
        },
        { type: 'tool', id: uid('T10c'), name: 'LONG', input: LONG_ASCII, output: LONG_CJK, created_at: '2026-03-01T04:00:00.003Z' },
        {
          type: 'tool',
          id: uid('T10d'),
          name: 'SELECT * FROM r; --',
          input: "'; DROP TABLE r; --",
          output: 'null',
          created_at: '2026-03-01T04:00:00.004Z',
        },
      ],
    },
  ];
}

/** Phase B: T04 into the existing session S2 (a separate request). */
function traceT04(): Node {
  return {
    id: uid('T04'),
    name: 'Ω',
    input: 'JSON {"k": [1, 2]}',
    output: '{"role": "assistant"}',
    created_at: '2026-03-01T06:00:00Z',
    tags: ['red'],
    session_id: uid('S2'),
    spans: [
      { type: 'workflow', id: uid('T04a'), name: 'wf', input: '', created_at: '2026-03-01T06:00:00Z' }, // a leaf until phase B adds T04a1
      {
        type: 'llm',
        id: uid('T04b'),
        name: 'llm-empty',
        input: [],
        output: msg('assistant', ''),
        created_at: '2026-03-01T06:00:00.5Z',
        metrics: { quality: -0.5 },
      },
    ],
  };
}

/** Phase B, through logSpans: a child under the leaf workflow T04a. */
function spansUnderT04a(): Omit<LogSpansRequest, 'log_stream_id'> {
  return {
    trace_id: uid('T04'),
    parent_id: uid('T04a'),
    spans: [
      { type: 'tool', id: uid('T04a1'), name: 'late', input: 'late child', metrics: { quality: 1 }, created_at: '2026-03-01T06:00:01Z' },
    ] as any,
  };
}

/** Phase B, through logSpans: trace T11 does not exist yet, so logSpans creates it (in session S6). */
function spansCreatingT11(): Omit<LogSpansRequest, 'log_stream_id'> {
  return {
    trace_id: uid('T11'),
    parent_id: uid('T11'),
    session_id: uid('S6'),
    spans: [
      {
        type: 'agent',
        id: uid('T11a'),
        name: 'late agent',
        agent_type: 'judge',
        input: 'judge',
        created_at: '2026-03-01T05:00:00Z',
        spans: [
          {
            type: 'llm',
            id: uid('T11a1'),
            name: 'late llm',
            input: [msg('user', 'late')],
            output: msg('assistant', 'ok'),
            metrics: { quality: 0.5, num_input_tokens: 5 },
            created_at: '2026-03-01T05:00:00.25Z',
          },
        ],
      },
    ] as any,
  };
}

// ------------------------------------------------------------------------------------- filler traces

const F_NAMES = [
  'plain',
  'Plain',
  'PLAIN',
  '',
  'x_y',
  'xzy',
  '50%',
  '5000',
  "it''s",
  'quo"te',
  'bs\\x',
  '{"k": "v"}',
  'ñandú',
  'ÑANDÚ',
  '北京',
  '😀 smile',
  'ωmega',
  'ΩMEGA',
  ' lead',
  'trail ',
  'null',
  'NULL',
  'true',
];
const F_TEXT = [
  ...F_NAMES,
  'hello world',
  'Hello World',
  'multi\nline',
  'tab\there',
  'y'.repeat(3000),
  '%_%',
  '\\%',
  'a"b',
  "a'b",
  '{"a": [1, {"b": null}]}',
  '[]',
  '{}',
  'ünïcödé',
  'ÜNÏCÖDÉ',
  '中文字符',
  '🙂🙃',
  'Ελληνικά',
  'ΕΛΛΗΝΙΚΆ',
];
const F_CONTENT = [
  'hello world',
  'Hello World',
  'plain words',
  'PLAIN WORDS',
  'ünïcödé text',
  'x_y and 50%',
  'quote "inside"',
  'back\\slash',
  '中文字符',
  '😀 smile',
  'Ελληνικά',
  '',
  'ñandú',
];
const F_TAGS = ['green', 'Green', 'GREEN', '', 'g_1', 'g%1', 'ünï', 'ÜNÏ', '绿', '🍏', 'dup'];
const F_EXTERNAL = [null, null, null, '', 'e1', 'E1', 'é1'];
const F_ERROR = ['', '', 'fail', 'FAIL', 'Fail: "x"'];
const F_PROGRESS = ['', 'step 1', 'Step 1'];
const F_DATASET = [null, null, '', 'ds', 'DS %'];
const F_STATUS = [null, null, 0, 200, 404, 500, -1];
const F_TEMPERATURE = [null, 0, 0.5, 1, 1e-300, 2];
const F_MODEL = [null, 'gpt-4o-mini', 'GPT-4O-MINI', 'claude', ''];
const F_FINISH = [null, 'stop', 'STOP', 'tool_calls', ''];
const F_AGENT_TYPE = ['default', 'planner', 'react', 'reflection', 'router', 'classifier', 'supervisor', 'judge'];
const F_AGENT_NAME = [null, 'ag', 'AG', ''];
const F_TOOL_CALL = [null, '', 'call_x', 'CALL_X', 'call%'];
const F_CONTROL_ID = [null, 0, 1, -5, 2147483647];
const F_EVALUATOR = [null, 'pii', 'PII', ''];
const F_SELECTOR = [null, '$.x', '$["y"]'];
const F_SCORE = [0, 0.25, 0.5, 0.75, 1, -0.5];
const F_BIG = [1e300, 1e-300, TWO_53, -TWO_53, 0, 1e-5];
/** Instants with ties across zones and formats (08:00:00Z written four ways), microseconds apart. */
const F_INSTANTS = [
  '2026-02-10T08:00:00Z',
  '2026-02-10T08:00:00.000Z',
  '2026-02-10T13:30:00+05:30',
  '2026-02-10T08:00:00',
  '2026-02-10T08:00:00.000001Z',
  '2026-02-10T07:59:59.999999Z',
  '2026-02-10T08:00:00.5Z',
  '2026-02-10T00:00:00Z',
  '2026-02-09T23:59:59.999999Z',
];

interface FillerCtx {
  r: () => number;
  label: string; // trace label
  bigLeft: boolean; // may this trace's session still get a `big` value
  bigUsed: () => void;
}

function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)] as T;
}

function fillerTime(r: () => number): string {
  if (r() < 0.5) return pick(r, F_INSTANTS);
  const ms = Date.UTC(2026, 1, 10, 8) + Math.floor(r() * 3_600_000);
  const us = Math.floor(r() * 1000);
  return `${new Date(ms).toISOString().replace('Z', '') + String(us).padStart(3, '0')}Z`;
}

function fillerTags(r: () => number): string[] | null | undefined {
  const x = r();
  if (x < 0.1) return undefined;
  if (x < 0.15) return null;
  const n = Math.floor(r() * 5);
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(pick(r, F_TAGS));
  if (n > 0 && r() < 0.3) out.push(out[0]!); // duplicate
  return out;
}

function fillerCommon(ctx: FillerCtx, id: string, kind: string, leaf: boolean): Node {
  const { r } = ctx;
  const n: Node = { id, name: pick(r, F_NAMES), created_at: fillerTime(r) };
  const tags = fillerTags(r);
  if (tags !== undefined) n['tags'] = tags;
  const ext = pick(r, F_EXTERNAL);
  if (ext !== null) n['external_id'] = ext;
  n['error_message'] = pick(r, F_ERROR);
  if (r() < 0.5) n['progress_message'] = pick(r, F_PROGRESS);
  const dsi = pick(r, F_DATASET);
  if (dsi !== null) n['dataset_input'] = dsi;
  const dso = pick(r, F_DATASET);
  if (dso !== null) n['dataset_output'] = dso;
  const status = pick(r, F_STATUS);
  if (status !== null) n['status_code'] = status;
  if (r() < 0.2) n['is_complete'] = r() < 0.5;
  const metrics: Record<string, number | string> = {};
  if (kind !== 'trace' && r() < (leaf ? 0.7 : 0.3)) metrics['score'] = pick(r, F_SCORE);
  if (r() < (kind === 'trace' ? 0.3 : 0.5)) metrics['wait_ns'] = Math.floor(r() * 1_000_000);
  if (kind === 'llm' && r() < 0.8) metrics['num_output_tokens'] = Math.floor(r() * 1000);
  if (ctx.bigLeft && r() < 0.25) {
    metrics['big'] = pick(r, F_BIG);
    ctx.bigUsed();
  }
  if (r() < 0.05) metrics['note'] = 'not a number'; // a non-numeric metric: no value for number filters
  if (Object.keys(metrics).length > 0 || r() < 0.5) n['metrics'] = metrics;
  return n;
}

function fillerSpan(ctx: FillerCtx, label: string, depth: number): Node {
  const { r } = ctx;
  const kinds =
    depth < 3 ? ['agent', 'workflow', 'llm', 'llm', 'retriever', 'tool', 'tool', 'control'] : ['llm', 'retriever', 'tool', 'control'];
  const kind = pick(r, kinds);
  const container = kind === 'agent' || kind === 'workflow';
  const n: Node = { type: kind, ...fillerCommon(ctx, uid(label), kind, !container) };
  const text = () => pick(r, F_TEXT);
  switch (kind) {
    case 'agent':
      n['agent_type'] = pick(r, F_AGENT_TYPE);
      if (r() < 0.7) n['agent_name'] = pick(r, F_AGENT_NAME);
      break;
    case 'llm': {
      const msgs = [];
      const k = Math.floor(r() * 3);
      for (let i = 0; i < k; i++) msgs.push(msg(pick(r, ['system', 'user', 'assistant']), pick(r, F_CONTENT)));
      n['input'] = msgs;
      if (r() < 0.8) n['output'] = msg('assistant', pick(r, F_CONTENT));
      const model = pick(r, F_MODEL);
      if (model !== null) n['model'] = model;
      const temp = pick(r, F_TEMPERATURE);
      if (temp !== null) n['temperature'] = temp;
      const fin = pick(r, F_FINISH);
      if (fin !== null) n['finish_reason'] = fin;
      if (r() < 0.3) n['tools'] = [{ type: 'function', function: { name: pick(r, ['get_weather', 'Get_Weather', 'search_50%']) } }];
      break;
    }
    case 'retriever': {
      const docs = [];
      const k = Math.floor(r() * 3);
      for (let i = 0; i < k; i++)
        docs.push(r() < 0.5 ? { content: pick(r, F_CONTENT), metadata: { source: 'kb' } } : { page_content: pick(r, F_CONTENT) });
      n['output'] = docs;
      break;
    }
    case 'tool': {
      const tc = pick(r, F_TOOL_CALL);
      if (tc !== null) n['tool_call_id'] = tc;
      break;
    }
    case 'control': {
      const cid = pick(r, F_CONTROL_ID);
      if (cid !== null) n['control_id'] = cid;
      if (r() < 0.7) n['check_stage'] = pick(r, ['pre', 'post']);
      if (r() < 0.7) n['applies_to'] = pick(r, ['llm_call', 'tool_call']);
      const ev = pick(r, F_EVALUATOR);
      if (ev !== null) n['evaluator_name'] = ev;
      const sel = pick(r, F_SELECTOR);
      if (sel !== null) n['selector_path'] = sel;
      if (r() < 0.5) n['agent_name'] = pick(r, ['ag', 'AG', '']);
      if (r() < 0.5) n['output'] = { action: pick(r, ['deny', 'observe']), matched: r() < 0.5 };
      break;
    }
  }
  if (kind !== 'llm') {
    const x = r();
    if (x < 0.1) n['input'] = null;
    else if (x < 0.2) n['input'] = { k: pick(r, F_CONTENT), n: 1 };
    else if (x > 0.3) n['input'] = text();
    if (!('output' in n) && r() < 0.7) n['output'] = r() < 0.1 ? null : text();
  }
  if (container) {
    const k = 1 + Math.floor(r() * 3);
    n['spans'] = Array.from({ length: k }, (_, i) =>
      fillerSpan(ctx, `${label}${depth % 2 === 1 ? String(i + 1) : String.fromCharCode(97 + i)}`, depth + 1),
    );
  }
  return n;
}

/** Filler traces F01..F42 in sessions R01..R14 (three per session), from a fixed seed. */
function fillerSessions(): { sessionLabel: string; traces: Node[] }[] {
  const r = prng(20260301);
  const out: { sessionLabel: string; traces: Node[] }[] = [];
  for (let s = 0; s < 14; s++) {
    const sessionLabel = `R${String(s + 1).padStart(2, '0')}`;
    let bigLeft = true; // at most one `big` value per session keeps every roll-up exact
    const traces: Node[] = [];
    for (let t = 0; t < 3; t++) {
      const label = `F${String(s * 3 + t + 1).padStart(2, '0')}`;
      const ctx: FillerCtx = {
        r,
        label,
        bigLeft,
        bigUsed: () => {
          bigLeft = false;
          ctx.bigLeft = false;
        },
      };
      const trace: Node = { ...fillerCommon(ctx, uid(label), 'trace', false), session_id: uid(sessionLabel) };
      trace['input'] = pick(r, F_TEXT);
      if (r() < 0.8) trace['output'] = pick(r, F_TEXT);
      const k = 1 + Math.floor(r() * 4);
      trace['spans'] = Array.from({ length: k }, (_, i) => fillerSpan(ctx, `${label}${String.fromCharCode(97 + i)}`, 1));
      traces.push(trace);
    }
    out.push({ sessionLabel, traces });
  }
  return out;
}

// ------------------------------------------------------------------------------------- logging

export type LoadMode = 'memory' | 'sealed' | 'mixed';

/** The requests, in order: phase A (one logTraces per session), then phase B. */
export function awkwardRequests(): {
  phaseA: Omit<LogTracesRequest, 'log_stream_id'>[];
  phaseB: ({ traces: Omit<LogTracesRequest, 'log_stream_id'> } | { spans: Omit<LogSpansRequest, 'log_stream_id'> })[];
} {
  const phaseA: Omit<LogTracesRequest, 'log_stream_id'>[] = [
    sessionS1(),
    sessionS2(),
    sessionS3(),
    sessionS4(),
    sessionS5(),
    sessionS6(),
  ].map((traces) => ({ traces: traces as any }));
  for (const { traces } of fillerSessions()) phaseA.push({ traces: traces as any });
  return {
    phaseA,
    phaseB: [{ traces: { traces: [traceT04()] as any } }, { spans: spansUnderT04a() }, { spans: spansCreatingT11() }],
  };
}

/**
 * Logs the whole set into a run. `memory`: nothing sealed; `sealed`: everything sealed into Parquet
 * afterwards; `mixed`: phase A sealed, phase B (which rewrites sealed parents) in memory.
 */
export async function logAwkward(store: TraceStore, projectId: string, runId: string, mode: LoadMode): Promise<void> {
  const { phaseA, phaseB } = awkwardRequests();
  for (const body of phaseA) await store.logTraces(projectId, { log_stream_id: runId, ...body });
  if (mode === 'mixed') await store.flush();
  for (const step of phaseB) {
    if ('traces' in step) await store.logTraces(projectId, { log_stream_id: runId, ...step.traces });
    else await store.records.logSpans(projectId, { log_stream_id: runId, ...step.spans });
  }
  if (mode === 'sealed') await store.flush();
}

/** Every label the data set creates, by level (what an unfiltered search must return). */
export function awkwardLabels(): { span: string[]; trace: string[]; session: string[] } {
  const span: string[] = [];
  const trace: string[] = [];
  const session = new Set<string>();
  const walk = (nodes: Node[] | undefined) => {
    for (const n of nodes ?? []) {
      span.push(labelOf(n['id'] as string));
      walk(n['spans'] as Node[] | undefined);
    }
  };
  const { phaseA, phaseB } = awkwardRequests();
  const traces = [...phaseA.flatMap((b) => b.traces as unknown as Node[])];
  for (const step of phaseB) {
    if ('traces' in step) traces.push(...(step.traces.traces as unknown as Node[]));
    else {
      walk(step.spans.spans as unknown as Node[]);
      if (step.spans.trace_id === step.spans.parent_id) {
        trace.push(labelOf(step.spans.trace_id));
        if (step.spans.session_id) session.add(labelOf(step.spans.session_id));
      }
    }
  }
  for (const t of traces) {
    trace.push(labelOf(t['id'] as string));
    session.add(labelOf(t['session_id'] as string));
    walk(t['spans'] as Node[]);
  }
  return { span: span.sort(), trace: trace.sort(), session: [...session].sort() };
}
