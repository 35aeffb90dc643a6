// OTLP/JSON (the proto3 JSON mapping with OTLP's deviations: hex ids, integer enums) -> OtelBatch.
// An envelope that is not the shape of an ExportTraceServiceRequest is a 400 (BadRequestError); a
// single span that is not usable (not an object, bad ids) is rejected alone. Unknown keys are
// ignored, as the spec requires; snake_case spellings are read too, since hand-written exporters use
// them and reading them costs nothing.
import { BadRequestError } from '../../errors.js';
import {
  describeSpan,
  normalizeId,
  type Attrs,
  type AttrValue,
  type OtelBatch,
  type OtelEvent,
  type OtelLink,
  type OtelResource,
  type OtelScope,
  type OtelSpan,
} from './model.js';

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function field(o: Obj, camel: string, snake: string): unknown {
  const v = o[camel];
  return v === undefined ? o[snake] : v;
}

function list(o: Obj, camel: string, snake: string, where: string): unknown[] {
  const v = field(o, camel, snake);
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new BadRequestError(`${where}.${camel} should be an array`);
  return v;
}

export function batchFromJson(body: unknown): OtelBatch {
  if (!isObj(body)) throw new BadRequestError('the body should be a JSON object (an ExportTraceServiceRequest)');
  const spans: OtelSpan[] = [];
  const rejected: string[] = [];
  list(body, 'resourceSpans', 'resource_spans', 'body').forEach((rs, ri) => {
    const at = `resourceSpans[${ri}]`;
    if (!isObj(rs)) throw new BadRequestError(`${at} should be an object`);
    const res = field(rs, 'resource', 'resource');
    const resource: OtelResource = { attributes: isObj(res) ? attrs(res['attributes'], `${at}.resource`) : new Map() };
    list(rs, 'scopeSpans', 'scope_spans', at).forEach((ss, si) => {
      const sat = `${at}.scopeSpans[${si}]`;
      if (!isObj(ss)) throw new BadRequestError(`${sat} should be an object`);
      const sc = ss['scope'];
      const scope: OtelScope = {
        name: isObj(sc) && typeof sc['name'] === 'string' ? sc['name'] : '',
        version: isObj(sc) && typeof sc['version'] === 'string' ? sc['version'] : '',
        attributes: isObj(sc) ? attrs(sc['attributes'], `${sat}.scope`) : new Map(),
      };
      list(ss, 'spans', 'spans', sat).forEach((s, i) => {
        try {
          spans.push(spanFromJson(s, resource, scope));
        } catch (err) {
          rejected.push(
            `${sat}.spans[${i}] ` +
              `(${isObj(s) ? describeSpan(field(s, 'traceId', 'trace_id'), field(s, 'spanId', 'span_id')) : 'not an object'}): ${(err as Error).message}`,
          );
        }
      });
    });
  });
  return { spans, rejected };
}

function spanFromJson(s: unknown, resource: OtelResource, scope: OtelScope): OtelSpan {
  if (!isObj(s)) throw new Error('a span should be an object');
  const traceId = normalizeId(field(s, 'traceId', 'trace_id'), 16);
  if (traceId === null) throw new Error('traceId should be 32 hex digits, not all zero');
  const spanId = normalizeId(field(s, 'spanId', 'span_id'), 8);
  if (spanId === null) throw new Error('spanId should be 16 hex digits, not all zero');
  const rawParent = field(s, 'parentSpanId', 'parent_span_id');
  const parentSpanId = rawParent === undefined || rawParent === null || rawParent === '' ? null : normalizeId(rawParent, 8);
  if (parentSpanId === null && rawParent !== undefined && rawParent !== null && rawParent !== '' && !/^0+$/.test(String(rawParent))) {
    throw new Error('parentSpanId should be 16 hex digits (or empty for a root)');
  }
  const status = isObj(s['status']) ? s['status'] : {};
  const events: OtelEvent[] = [];
  for (const e of asArray(s['events'])) {
    if (!isObj(e)) continue;
    events.push({
      name: str(e['name']),
      timeNs: nanos(field(e, 'timeUnixNano', 'time_unix_nano'), 'event time'),
      attributes: attrs(e['attributes'], 'event'),
    });
  }
  const links: OtelLink[] = [];
  for (const l of asArray(s['links'])) {
    if (!isObj(l)) continue;
    links.push({
      traceId: normalizeId(field(l, 'traceId', 'trace_id'), 16) ?? '',
      spanId: normalizeId(field(l, 'spanId', 'span_id'), 8) ?? '',
      attributes: attrs(l['attributes'], 'link'),
    });
  }
  return {
    traceId,
    spanId,
    parentSpanId,
    name: str(s['name']),
    kind: int(s['kind']),
    startNs: nanos(field(s, 'startTimeUnixNano', 'start_time_unix_nano'), 'startTimeUnixNano'),
    endNs: nanos(field(s, 'endTimeUnixNano', 'end_time_unix_nano'), 'endTimeUnixNano'),
    attributes: attrs(s['attributes'], 'span'),
    events,
    links,
    statusCode: int(status['code']),
    statusMessage: str(status['message']),
    dropped: {
      attributes: int(field(s, 'droppedAttributesCount', 'dropped_attributes_count')),
      events: int(field(s, 'droppedEventsCount', 'dropped_events_count')),
      links: int(field(s, 'droppedLinksCount', 'dropped_links_count')),
    },
    resource,
    scope,
  };
}

const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function int(v: unknown): number {
  const n = typeof v === 'string' ? Number(v) : v;
  return typeof n === 'number' && Number.isInteger(n) ? n : 0;
}

const DIGITS = /^\d{1,20}$/;

/** A fixed64 nanosecond time: a decimal string (proto3 JSON) or a number. Missing: 0n. */
function nanos(v: unknown, name: string): bigint {
  if (v === undefined || v === null || v === '' || v === 0) return 0n;
  if (typeof v === 'string' && DIGITS.test(v)) return BigInt(v);
  if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return BigInt(Math.round(v));
  throw new Error(`${name} should be nanoseconds since the epoch as a decimal string`);
}

/** `[{key, value: AnyValue}]` -> Map. A plain `{k: v}` map (a common hand-written mistake) is read as well. */
export function attrs(v: unknown, where: string): Attrs {
  const out: Attrs = new Map();
  if (v === undefined || v === null) return out;
  if (Array.isArray(v)) {
    for (const kv of v) if (isObj(kv) && typeof kv['key'] === 'string') out.set(kv['key'], anyValue(kv['value']));
    return out;
  }
  if (isObj(v)) {
    for (const k of Object.keys(v)) out.set(k, plain(v[k]));
    return out;
  }
  throw new Error(`${where} attributes should be a list of {key, value}`);
}

/** A tagged AnyValue (`{"stringValue": ...}`, `{"arrayValue": {"values": [...]}}`, ...) as a plain value. */
export function anyValue(v: unknown): AttrValue {
  if (!isObj(v)) return plain(v);
  if ('stringValue' in v || 'string_value' in v) return str(field(v, 'stringValue', 'string_value'));
  if ('boolValue' in v || 'bool_value' in v) return field(v, 'boolValue', 'bool_value') === true;
  if ('intValue' in v || 'int_value' in v) return int64(field(v, 'intValue', 'int_value'));
  if ('doubleValue' in v || 'double_value' in v) {
    const d = field(v, 'doubleValue', 'double_value');
    return typeof d === 'number' ? d : typeof d === 'string' ? Number(d) : null;
  }
  if ('arrayValue' in v || 'array_value' in v) {
    const a = field(v, 'arrayValue', 'array_value');
    return isObj(a) ? asArray(a['values']).map(anyValue) : [];
  }
  if ('kvlistValue' in v || 'kvlist_value' in v) {
    const kv = field(v, 'kvlistValue', 'kvlist_value');
    const o: { [key: string]: AttrValue } = Object.create(null) as { [key: string]: AttrValue };
    if (isObj(kv)) for (const e of asArray(kv['values'])) if (isObj(e) && typeof e['key'] === 'string') o[e['key']] = anyValue(e['value']);
    return o;
  }
  if ('bytesValue' in v || 'bytes_value' in v) return str(field(v, 'bytesValue', 'bytes_value'));
  return null;
}

/** int64 as a number when exact, else its decimal string. */
function int64(v: unknown): AttrValue {
  if (typeof v === 'number') return v;
  if (typeof v !== 'string') return null;
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : v;
}

function plain(v: unknown): AttrValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (Array.isArray(v)) return v.map(plain);
  if (isObj(v)) {
    const o: { [key: string]: AttrValue } = Object.create(null) as { [key: string]: AttrValue };
    for (const k of Object.keys(v)) o[k] = plain(v[k]);
    return o;
  }
  return String(v);
}
