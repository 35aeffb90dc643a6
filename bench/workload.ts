// The workload of the peer benchmark, defined once as data: the generated span set every
// peer loads, and each question with its semantic definition and one equivalent SQL formulation per
// peer. Peers answer with a count or with the ids of a first page; the harness compares answers
// across peers, so every page has a total order (ties broken by id).
//
// Shares quoted below were measured on the seeded generator (seed 7) at 1M spans; they hold at any
// size above ~100k because every choice in the generator is independent of the set's size.
import { flattenTraces } from '../src/ingest/flatten.js';
import type { Draft } from '../src/record/record.js';
import type { LogTracesRequest } from '../src/schemas/ingest.js';
import { generateBatches, type GenTrace } from '../test/support/generator.js';

// ---------------------------------------------------------------------------------------------
// The data
// ---------------------------------------------------------------------------------------------

/** One flattened span record: the exact fields tracelake stores (src/ingest/normalize-node.ts). */
export type SpanRow = Draft;

/** A batch as every peer receives it: the original traces (for peers that ingest through the
 * tracelake library) and their span records, flattened once by tracelake's own code. */
export interface SpanBatch {
  readonly traces: readonly GenTrace[];
  readonly rows: readonly SpanRow[];
}

export interface WorkloadOptions {
  spans: number;
  seed?: number;
  /** Spans per batch (cut at trace boundaries); default 5,000. */
  batchSpans?: number;
}

export const DEFAULT_SEED = 7;
const FLAT_CTX = { projectId: '00000000-0000-4000-8000-000000000001', runId: '00000000-0000-4000-8000-000000000002', receivedUs: 0 };

/**
 * Streams the span set in batches; the same options give the same records, so each peer can
 * regenerate the set instead of anything holding it all in memory (10M spans are ~12 GB as JSON).
 * Span records get the session id of their trace, as tracelake's engine sets it.
 */
export function* spanBatches(opts: WorkloadOptions): Generator<SpanBatch, void, undefined> {
  const it = generateBatches({ spans: opts.spans, batchSpans: opts.batchSpans ?? 5000, seed: opts.seed ?? DEFAULT_SEED });
  for (;;) {
    const r = it.next();
    if (r.done === true) return;
    const traces = r.value;
    const flat = flattenTraces({ traces } as unknown as LogTracesRequest, FLAT_CTX);
    const session = new Map<string, string>();
    for (const t of traces) session.set(t.id, t.session_id);
    for (const s of flat.spans) s.session_id = session.get(s.trace_id as string);
    yield { traces, rows: flat.spans };
  }
}

// ---------------------------------------------------------------------------------------------
// The questions
// ---------------------------------------------------------------------------------------------

/** The SQL dialects of the peers this module knows; the tracelake peer answers through its API. */
export type Dialect = 'sqlite' | 'postgres' | 'duckdb';
export type Param = string | number;

export interface Question {
  /** Stable key (results, tables, the tracelake peer's switch). */
  readonly id: string;
  readonly title: string;
  /** What the answer is: a count, or the ids of a first page in a total order. */
  readonly answer: 'count' | 'ids';
  /** Measured share of spans the filter selects (or the rows the answer covers). */
  readonly share: string;
  /**
   * Parameter values, `$1`, `$2`... in every dialect (`?1`, `?2` in SQLite). Run i of a question
   * uses variant i modulo their number; only the delete has several (each run deletes new rows).
   */
  readonly variants: readonly (readonly Param[])[];
  /** Deletes rows: asked after every other question, and each run gets a fresh variant. */
  readonly mutates?: boolean;
  /**
   * One formulation per dialect. For the delete, the `duckdb` entry is only the predicate of the rows
   * to delete: Parquet files are immutable, so the raw peer rewrites each file without them.
   */
  readonly sql: Readonly<Record<Dialect, string>>;
  /**
   * The same question as a tracelake API call (the hosted service's request shapes, run id left to
   * the caller), for the tracelake peer. Written ahead of the query engine: a suggestion to check
   * against it, not a tested formulation.
   */
  readonly api: (params: readonly Param[]) => ApiCall;
}

export interface ApiCall {
  /** Which records the call addresses: /projects/{id}/spans/... or /projects/{id}/traces/... */
  readonly level: 'spans' | 'traces';
  readonly op: 'count' | 'partial_search' | 'delete' | 'available_columns';
  readonly body: Record<string, unknown>;
}

const leaf = (filter: Record<string, unknown>) => ({ filter });

/** Page size of every first-page question. */
export const PAGE = 100;

// Schemas the SQL below addresses (each peer module creates its own):
//   sqlite:   spans(id TEXT PK, trace_id, parent_id, session_id, type, name, created_at INTEGER µs,
//             status_code, model, attributes TEXT JSON {input, output, tags, metrics, user_metadata, ...})
//   postgres: the same columns with uuid ids, timestamptz and attributes JSONB
//   duckdb:   `spans`, a view over tracelake's span segments (src/record/record-columns.ts)
//
// Semantics shared by all: a record without a metric, or without tags, never satisfies a leaf on it
// (SQL NULL); text matching is case-insensitive substring matching over the stored text of `input`
// (the JSON text of a message list for llm spans, the string itself otherwise); NULL metric values
// sort last; every order ends with the id so pages are deterministic. (PostgreSQL orders by
// `spans.id`, the uuid column: a bare `id` would name the text alias and defeat the indexes.)

export const QUESTIONS: readonly Question[] = [
  {
    // (type = 'llm' AND metrics.num_input_tokens > 150) OR tags contains 'beta'
    id: 'count-tree',
    title: 'count, three-leaf filter tree',
    answer: 'count',
    share: "13.8% (llm with >150 input tokens 11.0%, tag 'beta' 3.1%)",
    variants: [['llm', 150, 'beta']],
    api: ([type, tokens, tag]) => ({
      level: 'spans',
      op: 'count',
      body: {
        filter_tree: {
          or: [
            {
              and: [
                leaf({ type: 'text', column_id: 'type', operator: 'eq', value: type }),
                leaf({ type: 'number', column_id: 'metrics/num_input_tokens', operator: 'gt', value: tokens }),
              ],
            },
            leaf({ type: 'collection', column_id: 'tags', operator: 'contains', value: tag }),
          ],
        },
      },
    }),
    sql: {
      sqlite: `SELECT count(*) AS n FROM spans
        WHERE (type = ?1 AND json_extract(attributes, '$.metrics.num_input_tokens') > ?2)
           OR EXISTS (SELECT 1 FROM json_each(attributes, '$.tags') WHERE value = ?3)`,
      postgres: `SELECT count(*) AS n FROM spans
        WHERE (type = $1 AND (attributes->'metrics'->>'num_input_tokens')::float8 > $2)
           OR attributes->'tags' ? $3`,
      duckdb: `SELECT count(*) AS n FROM spans
        WHERE (type = $1 AND metrics['num_input_tokens'] > $2) OR list_contains(tags, $3)`,
    },
  },
  {
    // model = 'gpt-4o' AND status_code = 500; newest first, ties by id
    id: 'page-filtered',
    title: 'first page, filtered (model and status)',
    answer: 'ids',
    share: '0.15% (gpt-4o 7.3% of spans, status 500 2%)',
    variants: [['gpt-4o', 500]],
    api: ([model, status]) => ({
      level: 'spans',
      op: 'partial_search',
      body: {
        filters: [
          { type: 'text', column_id: 'model', operator: 'eq', value: model },
          { type: 'number', column_id: 'status_code', operator: 'eq', value: status },
        ],
        pagination: { starting_token: 0, limit: PAGE },
        select_columns: { column_ids: ['id'] },
      },
    }),
    sql: {
      sqlite: `SELECT id FROM spans WHERE model = ?1 AND status_code = ?2 ORDER BY created_at DESC, id DESC LIMIT ${PAGE}`,
      postgres: `SELECT id::text AS id FROM spans WHERE model = $1 AND status_code = $2 ORDER BY created_at DESC, spans.id DESC LIMIT ${PAGE}`,
      duckdb: `SELECT id FROM spans WHERE model = $1 AND status_code = $2 ORDER BY created_at DESC, id DESC LIMIT ${PAGE}`,
    },
  },
  {
    // llm spans by metrics/correctness descending (spans without it last), ties by id descending.
    // Restricted to llm spans: in tracelake a parent span without its own value takes the roll-up of
    // its descendants', which no peer's SQL computes; leaf spans have only their own values.
    id: 'page-sorted-metric',
    title: 'first page of llm spans, sorted by metrics/correctness',
    answer: 'ids',
    share: '30% of llm spans have the metric; ~1% tie at 1.0, so the page is decided by id',
    variants: [['llm']],
    api: ([type]) => ({
      level: 'spans',
      op: 'partial_search',
      body: {
        filters: [{ type: 'text', column_id: 'type', operator: 'eq', value: type }],
        sort: { column_id: 'metrics/correctness', ascending: false },
        pagination: { starting_token: 0, limit: PAGE },
        select_columns: { column_ids: ['id'] },
      },
    }),
    sql: {
      // SQLite orders NULL below every value, so DESC already puts spans without the metric last.
      // The metric is a literal in every dialect so an expression index on it can serve the order.
      sqlite: `SELECT id FROM spans WHERE type = ?1 ORDER BY json_extract(attributes, '$.metrics.correctness') DESC, id DESC LIMIT ${PAGE}`,
      postgres:
        "SELECT id::text AS id FROM spans WHERE type = $1 ORDER BY (attributes->'metrics'->>'correctness')::float8 DESC NULLS LAST, " +
        `spans.id DESC LIMIT ${PAGE}`,
      duckdb: `SELECT id FROM spans WHERE type = $1 ORDER BY metrics['correctness'] DESC NULLS LAST, id DESC LIMIT ${PAGE}`,
    },
  },
  {
    // input contains 'warranty', case-insensitively: how many
    id: 'text-count',
    title: "text search on input ('warranty', any case): count",
    answer: 'count',
    share: "3.5% (half of them only as 'Warranty')",
    variants: [['%warranty%']],
    api: ([pattern]) => ({
      level: 'spans',
      op: 'count',
      body: {
        filters: [
          { type: 'text', column_id: 'input', operator: 'contains', value: String(pattern).replaceAll('%', ''), case_sensitive: false },
        ],
      },
    }),
    sql: {
      // SQLite's LIKE ignores ASCII case (the word is ASCII).
      sqlite: `SELECT count(*) AS n FROM spans WHERE json_extract(attributes, '$.input') LIKE ?1`,
      postgres: `SELECT count(*) AS n FROM spans WHERE attributes->>'input' ILIKE $1`,
      duckdb: `SELECT count(*) AS n FROM spans WHERE input ILIKE $1`,
    },
  },
  {
    // the same filter: first page, newest first, ties by id
    id: 'text-page',
    title: "text search on input ('warranty', any case): first page",
    answer: 'ids',
    share: '3.5%',
    variants: [['%warranty%']],
    api: ([pattern]) => ({
      level: 'spans',
      op: 'partial_search',
      body: {
        filters: [
          { type: 'text', column_id: 'input', operator: 'contains', value: String(pattern).replaceAll('%', ''), case_sensitive: false },
        ],
        pagination: { starting_token: 0, limit: PAGE },
        select_columns: { column_ids: ['id'] },
      },
    }),
    sql: {
      sqlite: `SELECT id FROM spans WHERE json_extract(attributes, '$.input') LIKE ?1 ORDER BY created_at DESC, id DESC LIMIT ${PAGE}`,
      postgres: `SELECT id::text AS id FROM spans WHERE attributes->>'input' ILIKE $1 ORDER BY created_at DESC, spans.id DESC LIMIT ${PAGE}`,
      duckdb: `SELECT id FROM spans WHERE input ILIKE $1 ORDER BY created_at DESC, id DESC LIMIT ${PAGE}`,
    },
  },
  {
    // per trace: the sum of metrics.num_total_tokens over its spans (tracelake's default roll-up for
    // token counts); the 100 traces with the highest sum, ties by trace id descending
    id: 'rollup-trace',
    title: 'roll-up: total num_total_tokens per trace, top 100 traces',
    answer: 'ids',
    share: '34% of spans (the llm spans) carry the metric; ~96% of traces have one',
    variants: [[]],
    // Traces get metrics/num_total_tokens by roll-up (sum of their spans'; generated traces have
    // none of their own). Traces without it must sort after every trace with it, ties by id descending.
    api: () => ({
      level: 'traces',
      op: 'partial_search',
      body: {
        sort: { column_id: 'metrics/num_total_tokens', ascending: false },
        pagination: { starting_token: 0, limit: PAGE },
        select_columns: { column_ids: ['id'] },
      },
    }),
    sql: {
      sqlite: `SELECT trace_id AS id FROM spans WHERE json_extract(attributes, '$.metrics.num_total_tokens') IS NOT NULL
        GROUP BY trace_id ORDER BY sum(json_extract(attributes, '$.metrics.num_total_tokens')) DESC, trace_id DESC LIMIT ${PAGE}`,
      postgres: `SELECT trace_id::text AS id FROM spans WHERE attributes->'metrics' ? 'num_total_tokens'
        GROUP BY trace_id ORDER BY sum((attributes->'metrics'->>'num_total_tokens')::float8) DESC, trace_id DESC LIMIT ${PAGE}`,
      duckdb: `SELECT trace_id AS id FROM spans WHERE metrics['num_total_tokens'] IS NOT NULL
        GROUP BY trace_id ORDER BY sum(metrics['num_total_tokens']) DESC, trace_id DESC LIMIT ${PAGE}`,
    },
  },
  {
    // available_columns: which metric columns the run has, discovered from the data (the part of
    // available_columns that costs a scan; the standard columns are a constant table). Answer: the
    // metric names in byte order.
    id: 'metric-columns',
    title: 'available columns: metric names in the run',
    answer: 'ids',
    share: 'every span (the names of every metric logged)',
    variants: [[]],
    api: () => ({ level: 'spans', op: 'available_columns', body: {} }),
    sql: {
      sqlite: `SELECT DISTINCT j.key AS id FROM spans, json_each(spans.attributes, '$.metrics') AS j ORDER BY id`,
      postgres: `SELECT DISTINCT k AS id FROM spans, jsonb_object_keys(attributes->'metrics') AS k ORDER BY id`,
      duckdb: `SELECT DISTINCT k AS id FROM (SELECT unnest(map_keys(metrics)) AS k FROM spans) ORDER BY id`,
    },
  },
  {
    // delete llm spans carrying tag T (a different T on every run); answer: how many went. llm spans
    // have no children, so this is the same set whether or not a delete takes descendants along.
    id: 'delete-filter',
    title: 'delete by filter (llm spans with one tag), 1%',
    answer: 'count',
    share: '~1.05% per run (a new tag each run)',
    mutates: true,
    variants: [
      ['llm', 'canary'],
      ['llm', 'eval'],
      ['llm', 'staging'],
      ['llm', 'rag'],
      ['llm', 'v2'],
      ['llm', 'prod'],
      ['llm', 'agent'],
    ],
    api: ([type, tag]) => ({
      level: 'spans',
      op: 'delete',
      body: {
        filters: [
          { type: 'text', column_id: 'type', operator: 'eq', value: type },
          { type: 'collection', column_id: 'tags', operator: 'contains', value: tag },
        ],
      },
    }),
    sql: {
      sqlite: `DELETE FROM spans WHERE type = ?1 AND EXISTS (SELECT 1 FROM json_each(attributes, '$.tags') WHERE value = ?2)`,
      postgres: `DELETE FROM spans WHERE type = $1 AND attributes->'tags' ? $2`,
      duckdb: `type = $1 AND list_contains(tags, $2)`,
    },
  },
];

export function questionById(id: string): Question {
  const q = QUESTIONS.find((x) => x.id === id);
  if (!q) throw new Error(`unknown question ${id}`);
  return q;
}
