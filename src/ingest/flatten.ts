// Trees of traces and spans -> flat records linked by trace_id, parent_id and session_id, numbered
// by step_number in depth-first order, with has_children set. No I/O, no clock (the caller passes the
// receive time): the same request with the same id seed always flattens to the same records.
import { invalid, PayloadTooLargeError } from '../errors.js';
import type { LogSpansRequest, LogTracesRequest, SpanInput, TraceInput } from '../schemas/ingest.js';
import { idSeed, uuidFromHash } from './ids.js';
import { markMintedFresh, type Draft } from '../record/record.js';
import { normalizeNode, type Loc } from './normalize-node.js';

/** Deepest span nesting accepted (a deeper tree is almost certainly a client bug). */
export const MAX_SPAN_DEPTH = 128;

export interface FlattenContext {
  readonly projectId: string;
  readonly runId: string;
  /** Receive time (epoch µs): the created_at of records that carry none. */
  readonly receivedUs: number;
  /** Most spans one request may carry (default DEFAULT_MAX_SPANS). */
  readonly maxSpans?: number;
  /** Seed of the ids of nodes without one and without an ancestor that has one (ids.ts idSeed; default random). */
  readonly idSeed?: string;
}

/** Most spans (at any depth) accepted in one request; more answers 413. */
export const DEFAULT_MAX_SPANS = 100_000;

export interface FlatTrace {
  readonly record: Draft;
  /** Session id sent by the client (trace field or request field), if any. */
  readonly sessionId: string | null;
}

export interface FlatTraces {
  readonly traces: FlatTrace[];
  /** Span records of every trace, already linked (session_id is set by the caller). */
  readonly spans: Draft[];
}

/**
 * Ids for nodes that came without one: derived from the nearest ancestor that has a client id and the
 * node's position under it (so re-sending a trace, even with changed content, updates the same
 * records), or, with no such ancestor, from the request's seed and the node's position (a random seed
 * makes every request new records; an idempotency key's seed makes its retries mint the same ids).
 */
class IdSource {
  readonly #seed: string;
  /** The seed is random (no idempotency key): ids minted from it alone exist nowhere yet. */
  readonly #fresh: boolean;
  readonly maxSpans: number;
  constructor(private readonly ctx: FlattenContext) {
    this.maxSpans = ctx.maxSpans ?? DEFAULT_MAX_SPANS;
    this.#seed = ctx.idSeed ?? idSeed(null);
    this.#fresh = ctx.idSeed === undefined;
  }
  /** Whether idFor minted this node's id from the random seed (call with the same arguments). */
  fresh(given: string | null | undefined, anchor: string | null): boolean {
    return this.#fresh && !given && anchor === null;
  }
  idFor(given: string | null | undefined, path: () => string, anchor: string | null): string {
    if (given) return given.toLowerCase();
    if (anchor !== null) return uuidFromHash(this.ctx.projectId, this.ctx.runId, 'under', anchor, path());
    return uuidFromHash(this.ctx.projectId, this.ctx.runId, this.#seed, path());
  }
}

export function flattenTraces(body: LogTracesRequest, ctx: FlattenContext): FlatTraces {
  const ids = new IdSource(ctx);
  const traces: FlatTrace[] = [];
  const spans: Draft[] = [];
  body.traces.forEach((t, i) => {
    const loc: Loc = ['body', 'traces', i];
    const record = normalizeNode(
      t as TraceInput & Record<string, unknown>,
      ids.idFor(t.id, () => `t${i}`, null),
      'trace',
      loc,
      ctx.receivedUs,
    );
    if (ids.fresh(t.id, null)) markMintedFresh(record);
    const children = t.spans ?? [];
    record.trace_id = record.id;
    record.has_children = children.length > 0;
    if (body.is_complete === false && t.is_complete == null) record.is_complete = false;
    const sessionId = (t.session_id ?? body.session_id ?? null)?.toLowerCase() ?? null;
    traces.push({ record, sessionId });
    const anchor = t.id ? record.id : null;
    walk(children, record.id, record.id, record.created_at, loc, anchor ? '' : `t${i}`, anchor, 1, ids, { next: 1 }, spans);
  });
  return { traces, spans };
}

/** Spans of one Log spans request, hung under `parent_id` in trace `trace_id`; steps start at `firstStep`. */
export function flattenSpans(body: LogSpansRequest, ctx: FlattenContext, firstStep: number): Draft[] {
  const ids = new IdSource(ctx);
  const out: Draft[] = [];
  const parentId = body.parent_id.toLowerCase();
  // Spans logged under a known parent: positions are relative to the request (the parent id is in the hash).
  walk(body.spans, body.trace_id.toLowerCase(), parentId, ctx.receivedUs, ['body'], `p${parentId}`, null, 1, ids, { next: firstStep }, out);
  return out;
}

function walk(
  nodes: readonly SpanInput[],
  traceId: string,
  parentId: string,
  parentCreatedUs: number,
  parentLoc: Loc,
  parentPath: string,
  anchor: string | null,
  depth: number,
  ids: IdSource,
  step: { next: number },
  out: Draft[],
): void {
  if (depth > MAX_SPAN_DEPTH)
    throw invalid([...parentLoc, 'spans'], `spans are nested more than ${MAX_SPAN_DEPTH} levels deep`, undefined, 'too_deep');
  for (let i = 0; i < nodes.length; i++) {
    const n = nodes[i]!;
    const loc = [...parentLoc, 'spans', i];
    checkLink(n.trace_id, traceId, loc, 'trace_id');
    checkLink(n.parent_id, parentId, loc, 'parent_id');
    const path = `${parentPath}.${i}`;
    const record = normalizeNode(
      n as SpanInput & Record<string, unknown>,
      ids.idFor(n.id, () => path, anchor),
      n.type,
      loc,
      parentCreatedUs,
    );
    if (ids.fresh(n.id, anchor)) markMintedFresh(record);
    const children = n.spans ?? [];
    if (children.length > 0 && (n.type === 'llm' || n.type === 'control')) {
      throw invalid([...loc, 'spans'], `a ${n.type} span cannot have child spans`, undefined, 'value_error');
    }
    record.trace_id = traceId;
    record.parent_id = parentId;
    record.step_number = n.step_number ?? step.next;
    record.has_children = children.length > 0;
    step.next = Math.max(step.next, record.step_number + 1);
    out.push(record);
    if (children.length > 0) {
      const childAnchor = n.id ? record.id : anchor;
      walk(children, traceId, record.id, record.created_at, loc, n.id ? '' : path, childAnchor, depth + 1, ids, step, out);
    }
  }
  if (out.length > ids.maxSpans) {
    throw new PayloadTooLargeError(`a request may carry at most ${ids.maxSpans} spans (this one has more); split it into several requests`);
  }
}

function checkLink(given: string | null | undefined, expected: string, loc: Loc, field: string): void {
  if (given && given.toLowerCase() !== expected) {
    throw invalid([...loc, field], `${field} ${given} contradicts the nesting (expected ${expected})`, given, 'value_error');
  }
}
