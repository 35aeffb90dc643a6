// store.otlp: an OTLP ExportTraceServiceRequest (JSON form, or protobuf bytes) -> decoded spans ->
// mapped records -> per project and log stream, written by OtlpWriter (otlp-log.ts). A span that
// cannot be mapped is refused alone and named in the result; the others are written. Decoding and
// mapping live in src/ingest/otlp.
import { BadRequestError, InvalidRequestError, PayloadTooLargeError } from '../../errors.js';
import { batchFromJson } from '../../ingest/otlp/from-json.js';
import { mapSpan, traceUuid, type MappedSpan } from '../../ingest/otlp/map-span.js';
import { describeSpan, type OtelResource } from '../../ingest/otlp/model.js';
import { batchFromProtobuf } from '../../ingest/otlp/wire.js';
import { DEFAULT_MAX_SPANS } from '../../ingest/flatten.js';
import { nowUs } from '../../record/time.js';
import type { OpenGuard } from '../open-guard.js';
import { OtlpWriter, type OtlpHost } from './otlp-log.js';
import { resolveTarget, targetNames, type OtlpLogOptions, type TargetCatalog } from './otlp-target.js';

export type { OtlpLogOptions } from './otlp-target.js';

export interface OtlpLogResult {
  /** Spans stored now or already stored (a retried export). */
  accepted_spans: number;
  /** Of those, spans that were already stored and were not written again. */
  duplicate_spans: number;
  /** Spans refused; the others were written. */
  rejected_spans: number;
  /** Why spans were refused, and warnings (metadata cut by the caps); '' when there is nothing to say. */
  error_message: string;
  /** Where the spans went. */
  targets: { project_id: string; project_name: string; log_stream_id: string; log_stream_name: string; spans: number }[];
}

/** Problems named in error_message at most (the count is always exact). */
const MAX_PROBLEMS = 20;

export class Otlp {
  readonly #guard: OpenGuard;
  readonly #targets: TargetCatalog;
  readonly #host: OtlpHost;
  readonly #maxSpans: number;
  #writer: OtlpWriter | undefined;

  /** `host`: what the writer borrows from logging (locks, lookups, sessions, writes). */
  constructor(guard: OpenGuard, targets: TargetCatalog, host: OtlpHost, maxSpans = DEFAULT_MAX_SPANS) {
    this.#guard = guard;
    this.#targets = targets;
    this.#host = host;
    this.#maxSpans = maxSpans;
  }

  /**
   * Logs an OTLP trace export: an ExportTraceServiceRequest in its JSON form (an object, or its
   * text), or its protobuf bytes. Spans go to `options.project` / `options.logStream` (names), else to the names
   * in each resource's attributes, else to `default`; both are created when missing. Spans that
   * cannot be stored are refused alone (`rejected_spans`, `error_message`); an undecodable request
   * throws BadRequestError.
   */
  log(request: unknown, options: OtlpLogOptions = {}): Promise<OtlpLogResult> {
    this.#guard.assertWritable('logging OpenTelemetry spans');
    this.#writer ??= new OtlpWriter(this.#host);
    return this.#log(this.#writer, request, options);
  }

  async #log(writer: OtlpWriter, request: unknown, options: OtlpLogOptions): Promise<OtlpLogResult> {
    const maxSpans = this.#maxSpans;
    const batch =
      request instanceof Uint8Array
        ? batchFromProtobuf(request)
        : batchFromJson(typeof request === 'string' ? parseJson(request) : request);
    if (batch.spans.length > maxSpans) {
      throw new PayloadTooLargeError(
        `an export may carry at most ${maxSpans} spans (this one has ${batch.spans.length}); lower the exporter's batch size`,
      );
    }
    const problems = [...batch.rejected];
    const receivedUs = nowUs();
    const groups = new Map<string, { names: { project: string; logStream: string }; spans: MappedSpan[] }>();
    const namesOf = new Map<OtelResource, { project: string; logStream: string }>();
    let cut = 0;
    for (const s of batch.spans) {
      let m: MappedSpan;
      try {
        m = mapSpan(s, receivedUs);
      } catch (err) {
        const msg =
          err instanceof InvalidRequestError
            ? err.issues.map((i) => `${i.loc.slice(1).join('.')}: ${i.msg}`).join('; ')
            : (err as Error).message;
        problems.push(`${describeSpan(s.traceId, s.spanId)}: ${msg}`);
        continue;
      }
      m.record.trace_id = traceUuid(s.traceId);
      if (m.cut > 0) cut++;
      let names = namesOf.get(s.resource);
      if (!names) namesOf.set(s.resource, (names = targetNames(s.resource.attributes, options)));
      const key = `${names.project}\u0000${names.logStream}`;
      let g = groups.get(key);
      if (!g) groups.set(key, (g = { names, spans: [] }));
      g.spans.push(m);
    }
    // Every target is resolved (and authorized) before anything is written.
    const user = options.user ?? null;
    const resolved = [...groups.values()].map((g) => ({ ...g, ...resolveTarget(this.#targets, g.names, user) }));
    let accepted = 0;
    let duplicates = 0;
    const targets: OtlpLogResult['targets'] = [];
    for (const g of resolved) {
      const r = await writer.write(g.project, g.run, g.spans);
      accepted += g.spans.length;
      duplicates += r.duplicates;
      targets.push({
        project_id: g.project.id,
        project_name: g.project.name,
        log_stream_id: g.run.id,
        log_stream_name: g.run.name,
        spans: g.spans.length,
      });
    }
    const notes = problems.slice(0, MAX_PROBLEMS);
    if (problems.length > MAX_PROBLEMS) notes.push(`and ${problems.length - MAX_PROBLEMS} more`);
    if (cut > 0) notes.push(`metadata of ${cut} span(s) was cut to the size caps (marked in the values)`);
    return {
      accepted_spans: accepted,
      duplicate_spans: duplicates,
      rejected_spans: problems.length,
      error_message: notes.join('; '),
      targets,
    };
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new BadRequestError(`the request is not valid JSON: ${(err as Error).message}`);
  }
}
