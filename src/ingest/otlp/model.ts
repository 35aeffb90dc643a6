// The decoded form of an OTLP trace export that the mapping reads, whichever encoding it came in:
// ids as lowercase hex, times as BigInt nanoseconds, attribute values as plain JS values (int64 as
// a number when exact, else its decimal string; bytes as base64). Attributes are Maps, so keys such
// as `__proto__` are ordinary keys. A span whose ids are unusable is not in `spans`: it is counted
// in `rejected` with the reason, and the rest of the batch goes on.

export type AttrValue = string | number | boolean | null | AttrValue[] | { [key: string]: AttrValue };
export type Attrs = Map<string, AttrValue>;

export interface OtelResource {
  readonly attributes: Attrs;
}

export interface OtelScope {
  readonly name: string;
  readonly version: string;
  readonly attributes: Attrs;
}

export interface OtelEvent {
  readonly name: string;
  readonly timeNs: bigint;
  readonly attributes: Attrs;
}

export interface OtelLink {
  readonly traceId: string;
  readonly spanId: string;
  readonly attributes: Attrs;
}

export interface OtelSpan {
  /** 32 lowercase hex digits, never all zero. */
  readonly traceId: string;
  /** 16 lowercase hex digits, never all zero. */
  readonly spanId: string;
  /** The parent's span id, or null for a root. */
  readonly parentSpanId: string | null;
  readonly name: string;
  /** SpanKind: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  readonly kind: number;
  /** 0n when the exporter sent none. */
  readonly startNs: bigint;
  readonly endNs: bigint;
  readonly attributes: Attrs;
  readonly events: readonly OtelEvent[];
  readonly links: readonly OtelLink[];
  /** 0 unset, 1 ok, 2 error. */
  readonly statusCode: number;
  readonly statusMessage: string;
  readonly dropped: { readonly attributes: number; readonly events: number; readonly links: number };
  readonly resource: OtelResource;
  readonly scope: OtelScope;
}

export interface OtelBatch {
  readonly spans: OtelSpan[];
  /** Spans refused while decoding (unusable ids), with one message per refusal. */
  readonly rejected: string[];
}

const HEX = /^[0-9a-f]+$/;

/**
 * An id as lowercase hex: `hex` is what the JSON encoding sends (any case); base64 of the right
 * length is accepted too, because hand-written exporters sometimes send the protobuf bytes that way.
 * Null when the id is missing, malformed or all zero (the spec's "invalid" id).
 */
export function normalizeId(v: unknown, bytes: number): string | null {
  if (typeof v !== 'string' || v === '') return null;
  let hex = v.length === bytes * 2 ? v.toLowerCase() : '';
  if (hex === '' || !HEX.test(hex)) {
    const b = Buffer.from(v, 'base64');
    if (b.length !== bytes || b.toString('base64').replace(/=+$/, '') !== v.replace(/=+$/, '')) return null;
    hex = b.toString('hex');
  }
  return /^0+$/.test(hex) ? null : hex;
}

/** Lowercase hex of id bytes; null when empty, of another length, or all zero. */
export function hexOfBytes(b: Uint8Array | null | undefined, bytes: number): string | null {
  if (!b || b.length !== bytes) return null;
  const hex = Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
  for (let i = 0; i < hex.length; i++) if (hex.charCodeAt(i) !== 48) return hex;
  return null;
}

/** Span ids as tracelake knows them in messages: trace/span in short hex. */
export function describeSpan(traceId: unknown, spanId: unknown): string {
  const t = typeof traceId === 'string' ? traceId : '?';
  const s = typeof spanId === 'string' ? spanId : '?';
  return `span ${s} of trace ${t}`;
}
