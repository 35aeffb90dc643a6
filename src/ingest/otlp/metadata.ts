// user_metadata of an OTel span: OpenInference's `metadata` (a JSON object) merged in, then every
// attribute no field took, stringified, then what OTel itself says about the span under `otel.*`.
// Values are capped, and so is the whole map; what a cap cuts is marked in the value itself or
// named under `otel.truncated`, never dropped silently.
import type { AttrValue, OtelEvent, OtelLink, OtelResource, OtelSpan } from './model.js';
import { structured, type AttrReader } from './reader.js';

/** Longest metadata value kept whole (characters). */
export const MAX_METADATA_VALUE = 8192;
/** Most characters of metadata (keys and values) kept per span. */
export const MAX_METADATA_TOTAL = 65536;

const SPAN_KINDS = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'];

export class MetadataBuilder {
  readonly map: Record<string, string> = Object.create(null) as Record<string, string>;
  #size = 0;
  readonly #over: string[] = [];
  truncatedValues = 0;

  set(key: string, value: AttrValue | unknown): void {
    if (value === undefined || value === null) return;
    let v = typeof value === 'string' ? value : JSON.stringify(value);
    if (v.length > MAX_METADATA_VALUE) {
      v = `${v.slice(0, MAX_METADATA_VALUE)}…[truncated by tracelake: ${v.length} characters]`;
      this.truncatedValues++;
    }
    if (this.#size + key.length + v.length > MAX_METADATA_TOTAL) {
      this.#over.push(key);
      return;
    }
    if (!(key in this.map)) this.#size += key.length;
    else this.#size -= this.map[key]!.length;
    this.#size += v.length;
    this.map[key] = v;
  }

  /** The map, with the names of keys left out over the total cap (if any) under `otel.truncated`. */
  finish(): { map: Record<string, string>; cut: number } {
    if (this.#over.length > 0) {
      const names = this.#over.slice(0, 50).join(', ');
      this.map['otel.truncated'] =
        `${this.#over.length} attribute(s) over the ${MAX_METADATA_TOTAL}-character metadata cap were left out: ` +
        `${names}${this.#over.length > 50 ? ', …' : ''}`;
    }
    return { map: this.map, cut: this.#over.length + this.truncatedValues };
  }
}

/** Fills `md` with the span's left-over attributes and its OTel facts; events not used for messages go to `otel.events`. */
export function spanMetadata(md: MetadataBuilder, s: OtelSpan, a: AttrReader, usedEvents: ReadonlySet<OtelEvent>): void {
  const oi = structured(a.take('metadata'));
  if (typeof oi === 'object' && oi !== null && !Array.isArray(oi)) for (const [k, v] of Object.entries(oi)) md.set(k, v);
  else if (oi !== undefined) md.set('metadata', oi);
  for (const [k, v] of a.rest()) md.set(k, v);
  md.set('otel.span_id', s.spanId);
  if (s.parentSpanId !== null) md.set('otel.parent_span_id', s.parentSpanId);
  md.set('otel.span_kind', SPAN_KINDS[s.kind] ?? String(s.kind));
  if (s.scope.name !== '') md.set('otel.scope', s.scope.version ? `${s.scope.name}@${s.scope.version}` : s.scope.name);
  for (const [k, v] of s.scope.attributes) md.set(`otel.scope.${k}`, v);
  const service = s.resource.attributes.get('service.name');
  if (service !== undefined && service !== null) md.set('service.name', service);
  const events = s.events.filter((e) => !usedEvents.has(e));
  if (events.length > 0)
    md.set(
      'otel.events',
      events.map((e) => eventJson(e, s.startNs)),
    );
  if (s.links.length > 0) md.set('otel.links', s.links.map(linkJson));
  if (s.dropped.attributes > 0) md.set('otel.dropped_attributes_count', String(s.dropped.attributes));
  if (s.dropped.events > 0) md.set('otel.dropped_events_count', String(s.dropped.events));
  if (s.dropped.links > 0) md.set('otel.dropped_links_count', String(s.dropped.links));
}

function eventJson(e: OtelEvent, startNs: bigint): Record<string, unknown> {
  const out: Record<string, unknown> = { name: e.name };
  if (e.timeNs > 0n && startNs > 0n) out['offset_ns'] = Number(e.timeNs - startNs);
  if (e.attributes.size > 0) out['attributes'] = Object.fromEntries(e.attributes);
  return out;
}

function linkJson(l: OtelLink): Record<string, unknown> {
  const out: Record<string, unknown> = { trace_id: l.traceId, span_id: l.spanId };
  if (l.attributes.size > 0) out['attributes'] = Object.fromEntries(l.attributes);
  return out;
}

const resourceMaps = new WeakMap<OtelResource, Record<string, string>>();

/** A resource's attributes as the trace record's user_metadata (`resource.<key>`), built once per resource. */
export function resourceMetadata(resource: OtelResource): Record<string, string> {
  let map = resourceMaps.get(resource);
  if (!map) {
    const md = new MetadataBuilder();
    for (const [k, v] of resource.attributes) md.set(`resource.${k}`, v);
    map = md.finish().map;
    resourceMaps.set(resource, map);
  }
  return map;
}
