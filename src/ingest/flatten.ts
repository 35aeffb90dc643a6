// Trees of traces and spans -> flat records linked by trace_id, parent_id and session_id, numbered
// by step_number in depth-first order, with has_children set. Pure: no I/O, no clock (the caller
// passes the receive time), so the same request always flattens to the same records.
import { invalid } from '../errors.js';
import type { LogSpansRequest, LogTracesRequest, SpanInput, TraceInput } from '../schemas/ingest.js';
import { contentDigest, uuidFromHash } from './ids.js';
import { normalizeNode, type Fields, type Loc } from './normalize-node.js';

/** Deepest span nesting accepted (a deeper tree is almost certainly a client bug). */
export const MAX_SPAN_DEPTH = 128;

export interface Draft extends Fields {
  id: string;
  type: string;
  created_at: number;
}

export interface FlattenContext {
  readonly projectId: string;
  readonly runId: string;
  /** Receive time (epoch µs): the created_at of records that carry none. */
  readonly receivedUs: number;
}

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

/** Lazily hashes the request once, for ids of nodes that came without one. */
class IdSource {
  #digest: string | null = null;
  constructor(
    private readonly ctx: FlattenContext,
    private readonly content: unknown,
  ) {}
  idFor(given: string | null | undefined, path: string): string {
    if (given) return given.toLowerCase();
    this.#digest ??= contentDigest(this.content);
    return uuidFromHash(this.ctx.projectId, this.ctx.runId, this.#digest, path);
  }
}

export function flattenTraces(body: LogTracesRequest, ctx: FlattenContext): FlatTraces {
  const ids = new IdSource(ctx, body.traces);
  const traces: FlatTrace[] = [];
  const spans: Draft[] = [];
  body.traces.forEach((t, i) => {
    const loc: Loc = ['body', 'traces', i];
    const id = ids.idFor(t.id, `t${i}`);
    const fields = normalizeNode(t as TraceInput & Record<string, unknown>, 'trace', loc, ctx.receivedUs);
    const children = t.spans ?? [];
    const record: Draft = {
      ...fields,
      id,
      type: 'trace',
      trace_id: id,
      has_children: children.length > 0,
      created_at: fields['created_at'] as number,
    };
    if (body.is_complete === false && t.is_complete == null) record['is_complete'] = false;
    const sessionId = (t.session_id ?? body.session_id ?? null)?.toLowerCase() ?? null;
    traces.push({ record, sessionId });
    const step = { next: 1 };
    walk(children, { traceId: id, parentId: id, parentCreatedUs: record.created_at, loc: [...loc, 'spans'], path: `t${i}`, depth: 1 }, ids, step, spans);
  });
  return { traces, spans };
}

/** Spans of one Log spans request, hung under `parent_id` in trace `trace_id`; steps start at `firstStep`. */
export function flattenSpans(body: LogSpansRequest, ctx: FlattenContext, firstStep: number): Draft[] {
  const ids = new IdSource(ctx, body.spans);
  const out: Draft[] = [];
  const traceId = body.trace_id.toLowerCase();
  walk(
    body.spans,
    { traceId, parentId: body.parent_id.toLowerCase(), parentCreatedUs: ctx.receivedUs, loc: ['body', 'spans'], path: `p${body.parent_id}`, depth: 1 },
    ids,
    { next: firstStep },
    out,
  );
  return out;
}

interface WalkFrame {
  traceId: string;
  parentId: string;
  parentCreatedUs: number;
  loc: Loc;
  path: string;
  depth: number;
}

function walk(nodes: readonly SpanInput[], frame: WalkFrame, ids: IdSource, step: { next: number }, out: Draft[]): void {
  if (frame.depth > MAX_SPAN_DEPTH) throw invalid(frame.loc, `spans are nested more than ${MAX_SPAN_DEPTH} levels deep`, undefined, 'too_deep');
  nodes.forEach((n, i) => {
    const loc = [...frame.loc, i];
    checkLink(n.trace_id, frame.traceId, [...loc, 'trace_id'], 'trace');
    checkLink(n.parent_id, frame.parentId, [...loc, 'parent_id'], 'parent');
    const path = `${frame.path}.${i}`;
    const id = ids.idFor(n.id, path);
    const fields = normalizeNode(n as SpanInput & Record<string, unknown>, n.type, loc, frame.parentCreatedUs);
    const children = n.spans ?? [];
    if (children.length > 0 && (n.type === 'llm' || n.type === 'control')) {
      throw invalid([...loc, 'spans'], `a ${n.type} span cannot have child spans`, undefined, 'value_error');
    }
    const record: Draft = {
      ...fields,
      id,
      type: n.type,
      trace_id: frame.traceId,
      parent_id: frame.parentId,
      step_number: n.step_number ?? step.next,
      has_children: children.length > 0,
      created_at: fields['created_at'] as number,
    };
    step.next = Math.max(step.next, (record['step_number'] as number) + 1);
    out.push(record);
    if (children.length > 0) {
      walk(children, { traceId: frame.traceId, parentId: id, parentCreatedUs: record.created_at, loc: [...loc, 'spans'], path, depth: frame.depth + 1 }, ids, step, out);
    }
  });
}

function checkLink(given: string | null | undefined, expected: string, loc: Loc, what: string): void {
  if (given && given.toLowerCase() !== expected) {
    throw invalid(loc, `${what} id ${given} contradicts the nesting (expected ${expected})`, given, 'value_error');
  }
}
