// OTLP/HTTP protobuf: the vendored opentelemetry-proto files (vendor/opentelemetry-proto, v1.11.0)
// loaded once with protobufjs; ExportTraceServiceRequest bytes -> OtelBatch; the answers
// (ExportTraceServiceResponse, and google.rpc.Status for failures) in either encoding.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { assetPath } from '../../assets.js';
import { BadRequestError } from '../../errors.js';
import {
  describeSpan,
  hexOfBytes,
  type Attrs,
  type AttrValue,
  type OtelBatch,
  type OtelEvent,
  type OtelLink,
  type OtelResource,
  type OtelScope,
  type OtelSpan,
} from './model.js';

const SERVICE_PROTO = 'opentelemetry/proto/collector/trace/v1/trace_service.proto';

/** The vendored proto folder (a runtime file: the single binary carries it too). */
function protoDir(): string {
  const dir = assetPath('vendor/opentelemetry-proto/');
  if (!existsSync(join(dir, SERVICE_PROTO))) throw new Error('vendor/opentelemetry-proto not found next to the tracelake package');
  return dir;
}

interface Types {
  request: protobuf.Type;
  response: protobuf.Type;
  status: protobuf.Type;
}

let types: Types | undefined;

/** Loads the proto files now (the server calls it at start, so the first export does not pay for it). */
export function loadOtlpTypes(): void {
  const t = load();
  // protobufjs generates each type's decoder on first use: decoding one span with every kind of value builds them all.
  const v = [
    { stringValue: 's' },
    { boolValue: true },
    { intValue: 1 },
    { doubleValue: 1.5 },
    { bytesValue: Buffer.alloc(1) },
    { arrayValue: { values: [{ intValue: 2 }] } },
    { kvlistValue: { values: [{ key: 'k', value: { stringValue: 'v' } }] } },
  ];
  const attributes = v.map((value, i) => ({ key: `a${i}`, value }));
  const span = {
    traceId: Buffer.alloc(16, 1),
    spanId: Buffer.alloc(8, 1),
    name: 'warm-up',
    startTimeUnixNano: 1,
    endTimeUnixNano: 2,
    attributes,
    events: [{ name: 'e', attributes }],
    links: [{ traceId: Buffer.alloc(16, 1), spanId: Buffer.alloc(8, 2) }],
    status: { code: 1 },
  };
  batchFromProtobuf(
    Buffer.from(
      t.request
        .encode(
          t.request.fromObject({ resourceSpans: [{ resource: { attributes }, scopeSpans: [{ scope: { name: 'w' }, spans: [span] }] }] }),
        )
        .finish(),
    ),
  );
}

function load(): Types {
  if (types) return types;
  const base = protoDir();
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => join(base, target);
  root.loadSync(SERVICE_PROTO);
  // google.rpc.Status (code, message; `details` left out: tracelake sends none): small enough to declare here.
  root
    .define('google.rpc')
    .add(new protobuf.Type('Status').add(new protobuf.Field('code', 1, 'int32')).add(new protobuf.Field('message', 2, 'string')));
  root.resolveAll();
  lenientStrings(root);
  types = {
    request: root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest'),
    response: root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse'),
    status: root.lookupType('google.rpc.Status'),
  };
  return types;
}

/**
 * proto3 strings must be UTF-8, and protobufjs checks each one in JavaScript, which made decoding
 * about twice as slow. Exporters are trusted to send UTF-8; a stray invalid byte becomes U+FFFD (Node's
 * decoder) instead of failing the whole batch. protobufjs reads this per field from the resolved
 * `_features` (there is no public switch for proto3 files); should that change, decoding stays
 * correct and strict, only slower.
 */
function lenientStrings(ns: protobuf.NamespaceBase): void {
  for (const o of ns.nestedArray) {
    if (o instanceof protobuf.Type) {
      for (const f of o.fieldsArray) if (f.type === 'string') skipUtf8Check(f);
    }
    if (o instanceof protobuf.Namespace) lenientStrings(o);
  }
}

/** Sets a field's `utf8_validation` feature to NONE, in the private `_features` object where protobufjs keeps it. */
function skipUtf8Check(field: protobuf.Field): void {
  const features: unknown = '_features' in field ? field._features : undefined;
  if (typeof features === 'object' && features !== null) Reflect.set(features, 'utf8_validation', 'NONE');
}

// Decoded messages as protobufjs gives them (only the fields read here).
interface PLong {
  low: number;
  high: number;
  unsigned: boolean;
  toNumber(): number;
  toString(): string;
}
interface PAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: PLong | number;
  doubleValue?: number;
  arrayValue?: { values?: PAnyValue[] };
  kvlistValue?: { values?: PKeyValue[] };
  bytesValue?: Uint8Array;
}
interface PKeyValue {
  key: string;
  value?: PAnyValue | null;
}
interface PSpan {
  traceId: Uint8Array;
  spanId: Uint8Array;
  parentSpanId: Uint8Array;
  name: string;
  kind: number;
  startTimeUnixNano: PLong | number;
  endTimeUnixNano: PLong | number;
  attributes: PKeyValue[];
  droppedAttributesCount: number;
  events: { timeUnixNano: PLong | number; name: string; attributes: PKeyValue[] }[];
  droppedEventsCount: number;
  links: { traceId: Uint8Array; spanId: Uint8Array; attributes: PKeyValue[] }[];
  droppedLinksCount: number;
  status?: { code: number; message: string } | null;
}
interface PRequest {
  resourceSpans: {
    resource?: { attributes: PKeyValue[] } | null;
    scopeSpans: { scope?: { name: string; version: string; attributes?: PKeyValue[] } | null; spans: PSpan[] }[];
  }[];
}

/**
 * A decoded request as the fields read here. protobufjs types a message decoded by reflection as an
 * open record (its fields `any`); the vendored .proto gives it these.
 */
function requestOf(m: protobuf.ReflectedMessage): PRequest {
  return { resourceSpans: m['resourceSpans'] };
}

/** ExportTraceServiceRequest bytes -> OtelBatch; 400 (BadRequestError) when they are not one. */
export function batchFromProtobuf(bytes: Uint8Array): OtelBatch {
  let msg: PRequest;
  try {
    // A Buffer view: protobufjs then reads strings with Node's native UTF-8 decoder instead of its own JS one.
    const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    msg = requestOf(load().request.decode(buf));
  } catch (err) {
    throw new BadRequestError(`the body is not a protobuf ExportTraceServiceRequest: ${(err as Error).message}`);
  }
  const spans: OtelSpan[] = [];
  const rejected: string[] = [];
  msg.resourceSpans.forEach((rs, ri) => {
    const resource: OtelResource = { attributes: attrs(rs.resource?.attributes) };
    rs.scopeSpans.forEach((ss, si) => {
      const scope: OtelScope = { name: ss.scope?.name ?? '', version: ss.scope?.version ?? '', attributes: attrs(ss.scope?.attributes) };
      ss.spans.forEach((s, i) => {
        const traceId = hexOfBytes(s.traceId, 16);
        const spanId = hexOfBytes(s.spanId, 8);
        const parentOk = s.parentSpanId.length === 0 || s.parentSpanId.length === 8;
        if (traceId === null || spanId === null || !parentOk) {
          const why =
            traceId === null
              ? 'trace_id should be 16 bytes, not all zero'
              : spanId === null
                ? 'span_id should be 8 bytes, not all zero'
                : 'parent_span_id should be 8 bytes or empty';
          rejected.push(`resourceSpans[${ri}].scopeSpans[${si}].spans[${i}] (${describeSpan(hex(s.traceId), hex(s.spanId))}): ${why}`);
          return;
        }
        spans.push(spanFromProto(s, traceId, spanId, resource, scope));
      });
    });
  });
  return { spans, rejected };
}

const hex = (b: Uint8Array | undefined): string =>
  b && b.length > 0 ? Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex') : '';

function spanFromProto(s: PSpan, traceId: string, spanId: string, resource: OtelResource, scope: OtelScope): OtelSpan {
  const events: OtelEvent[] = s.events.map((e) => ({ name: e.name, timeNs: nanos(e.timeUnixNano), attributes: attrs(e.attributes) }));
  const links: OtelLink[] = s.links.map((l) => ({
    traceId: hexOfBytes(l.traceId, 16) ?? '',
    spanId: hexOfBytes(l.spanId, 8) ?? '',
    attributes: attrs(l.attributes),
  }));
  return {
    traceId,
    spanId,
    parentSpanId: hexOfBytes(s.parentSpanId, 8),
    name: s.name,
    kind: s.kind,
    startNs: nanos(s.startTimeUnixNano),
    endNs: nanos(s.endTimeUnixNano),
    attributes: attrs(s.attributes),
    events,
    links,
    statusCode: s.status?.code ?? 0,
    statusMessage: s.status?.message ?? '',
    dropped: { attributes: s.droppedAttributesCount, events: s.droppedEventsCount, links: s.droppedLinksCount },
    resource,
    scope,
  };
}

function nanos(v: PLong | number): bigint {
  if (typeof v === 'number') return BigInt(v);
  return (BigInt(v.high >>> 0) << 32n) | BigInt(v.low >>> 0);
}

function attrs(list: PKeyValue[] | undefined): Attrs {
  const out: Attrs = new Map();
  if (list) for (const kv of list) out.set(kv.key, kv.value ? anyValue(kv.value) : null);
  return out;
}

/**
 * The AnyValue's one set field. Checked as own properties: protobufjs's `value` getter allocates an
 * array of keys per call, and unset members read as their defaults ('' , 0, false) through the prototype.
 */
function anyValue(v: PAnyValue): AttrValue {
  const own = Object.hasOwn;
  if (own(v, 'stringValue')) return v.stringValue ?? '';
  if (own(v, 'intValue')) {
    const i = v.intValue!;
    if (typeof i === 'number') return i;
    const n = i.toNumber();
    return Number.isSafeInteger(n) ? n : i.toString();
  }
  if (own(v, 'doubleValue')) return v.doubleValue ?? 0;
  if (own(v, 'boolValue')) return v.boolValue === true;
  if (own(v, 'arrayValue')) return (v.arrayValue?.values ?? []).map(anyValue);
  if (own(v, 'kvlistValue')) {
    const o: { [key: string]: AttrValue } = Object.create(null) as { [key: string]: AttrValue };
    for (const kv of v.kvlistValue?.values ?? []) o[kv.key] = kv.value ? anyValue(kv.value) : null;
    return o;
  }
  if (own(v, 'bytesValue')) return Buffer.from(v.bytesValue ?? new Uint8Array()).toString('base64');
  return null;
}

// ------------------------------------------------------------------ answers

export interface ExportResult {
  /** Spans refused (0 with a message is a warning). */
  rejected_spans: number;
  error_message: string;
}

/** ExportTraceServiceResponse: partial_success is left unset when nothing was refused and nothing is to be said. */
export function encodeExportResponse(result: ExportResult, encoding: 'protobuf' | 'json'): Buffer | string {
  const partial = result.rejected_spans > 0 || result.error_message !== '';
  if (encoding === 'json') {
    return JSON.stringify(
      partial ? { partialSuccess: { rejectedSpans: String(result.rejected_spans), errorMessage: result.error_message } } : {},
    );
  }
  const t = load().response;
  const body = partial ? { partialSuccess: { rejectedSpans: result.rejected_spans, errorMessage: result.error_message } } : {};
  return Buffer.from(t.encode(t.fromObject(body)).finish());
}

/**
 * A failed export's body: google.rpc.Status (gRPC code, message). JSON also carries `detail`, the
 * field every other tracelake error answers with.
 */
export function encodeStatus(httpStatus: number, message: string, encoding: 'protobuf' | 'json'): Buffer | string {
  const code = GRPC_CODE[httpStatus] ?? 2;
  if (encoding === 'json') return JSON.stringify({ code, message, detail: message });
  const t = load().status;
  return Buffer.from(t.encode(t.fromObject({ code, message })).finish());
}

/** HTTP status -> google.rpc.Code, as the gRPC-HTTP mapping pairs them. */
const GRPC_CODE: Record<number, number> = { 400: 3, 401: 16, 403: 7, 404: 5, 409: 6, 413: 8, 415: 3, 422: 3, 429: 8, 500: 13, 503: 14 };

/** Decodes an answer (tests and clients written in TypeScript use this to read what the server said). */
export function decodeExportResponse(bytes: Uint8Array): { partialSuccess?: { rejectedSpans?: string; errorMessage?: string } } {
  const t = load().response;
  return t.toObject(t.decode(bytes), { longs: String }) as never;
}

export function decodeStatus(bytes: Uint8Array): { code?: number; message?: string } {
  const t = load().status;
  return t.toObject(t.decode(bytes)) as never;
}

/** Encodes an ExportTraceServiceRequest from its protobufjs object form (benchmarks and tests build bodies with it). */
export function encodeExportRequest(request: Record<string, unknown>): Uint8Array {
  const t = load().request;
  return t.encode(t.fromObject(request)).finish();
}
