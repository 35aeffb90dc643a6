// Builders for OTLP trace exports in tests and benchmarks: spans in the JSON form (hex ids, string
// nanoseconds, tagged values), the same request as protobuf bytes (encoded by otlp-proto.ts, not by
// tracelake's codec), and posting either to a server.
import { gzipSync } from 'node:zlib';
import { encodeRequest } from './otlp-proto.js';

export type Plain = string | number | boolean | Plain[] | { [k: string]: Plain };

/** A plain JS value as an OTLP AnyValue (JSON form). */
export function anyValue(v: Plain): Record<string, unknown> {
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (typeof v === 'number') return Number.isInteger(v) ? { intValue: v } : { doubleValue: v };
  if (Array.isArray(v)) return { arrayValue: { values: v.map(anyValue) } };
  return { kvlistValue: { values: Object.entries(v).map(([key, x]) => ({ key, value: anyValue(x) })) } };
}

export const attributes = (a: Record<string, Plain>) => Object.entries(a).map(([key, v]) => ({ key, value: anyValue(v) }));

export interface SpanSpec {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** Epoch milliseconds. */
  startMs: number;
  endMs: number;
  attributes?: Record<string, Plain>;
  events?: { name: string; timeMs?: number; attributes?: Record<string, Plain> }[];
  status?: { code: number; message?: string };
  kind?: number;
}

const ns = (ms: number) => (BigInt(Math.round(ms * 1000)) * 1000n).toString();

export function jsonSpan(s: SpanSpec): Record<string, unknown> {
  return {
    traceId: s.traceId,
    spanId: s.spanId,
    parentSpanId: s.parentSpanId ?? '',
    name: s.name,
    kind: s.kind ?? 1,
    startTimeUnixNano: ns(s.startMs),
    endTimeUnixNano: ns(s.endMs),
    attributes: attributes(s.attributes ?? {}),
    events: (s.events ?? []).map((e) => ({
      name: e.name,
      timeUnixNano: ns(e.timeMs ?? s.startMs),
      attributes: attributes(e.attributes ?? {}),
    })),
    status: s.status ?? { code: 0 },
  };
}

/** An ExportTraceServiceRequest (JSON form) with one resource and one scope. */
export function jsonRequest(
  spans: SpanSpec[],
  resource: Record<string, Plain> = { 'service.name': 'test-service' },
): Record<string, unknown> {
  return {
    resourceSpans: [
      {
        resource: { attributes: attributes(resource) },
        scopeSpans: [{ scope: { name: 'tracelake-test', version: '1.0.0' }, spans: spans.map(jsonSpan) }],
      },
    ],
  };
}

/** The same request as protobuf bytes (ids as bytes, times as fixed64). */
export function protobufRequest(spans: SpanSpec[], resource: Record<string, Plain> = { 'service.name': 'test-service' }): Uint8Array {
  const hex = (h: string | undefined) => Buffer.from(h ?? '', 'hex');
  return encodeRequest({
    resourceSpans: [
      {
        resource: { attributes: attributes(resource) },
        scopeSpans: [
          {
            scope: { name: 'tracelake-test', version: '1.0.0' },
            spans: spans.map((s) => ({
              ...jsonSpan(s),
              traceId: hex(s.traceId),
              spanId: hex(s.spanId),
              parentSpanId: hex(s.parentSpanId),
            })),
          },
        ],
      },
    ],
  });
}

/** Random lowercase hex ids of the OTel sizes. */
export const traceHex = () => Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('hex');
export const spanHex = () => Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString('hex');

/** POSTs an export; returns status, headers and the raw answer. */
export async function postOtlp(
  url: string,
  body: Uint8Array | string,
  headers: Record<string, string>,
  options: { gzip?: boolean; path?: string } = {},
): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const payload = options.gzip ? gzipSync(body) : body;
  const res = await fetch(`${url}${options.path ?? '/v1/traces'}`, {
    method: 'POST',
    headers: {
      'content-type': typeof body === 'string' ? 'application/json' : 'application/x-protobuf',
      ...(options.gzip ? { 'content-encoding': 'gzip' } : {}),
      ...headers,
    },
    body: payload,
  });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}
