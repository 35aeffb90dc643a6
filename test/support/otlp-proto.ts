// OTLP protobuf for tests, independent of tracelake's own codec (src/ingest/otlp/wire.ts): a protobufjs
// root of its own over the vendored opentelemetry-proto files, strict (UTF-8 checked, no tracelake
// tweaks), and google.rpc.Status as Google publishes it (code, message, details as Any). Tests encode
// requests and decode the server's answers with it, so a fault shared by tracelake's encoder and
// decoder cannot hide itself.
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { ROOT } from '../../scripts/binary/config.js';

const PROTO_DIR = join(ROOT, 'vendor', 'opentelemetry-proto');
const STATUS_PROTO = `syntax = "proto3";
package google.rpc;
import "google/protobuf/any.proto";
message Status {
  int32 code = 1;
  string message = 2;
  repeated google.protobuf.Any details = 3;
}`;

let root: protobuf.Root | undefined;

function types(): protobuf.Root {
  if (root) return root;
  const r = new protobuf.Root();
  r.resolvePath = (_origin, target) => (target.startsWith('google/protobuf/') ? target : join(PROTO_DIR, target));
  r.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto');
  // protobufjs carries google/protobuf/any.proto itself (Status's details are Any).
  r.loadSync('google/protobuf/any.proto');
  protobuf.parse(STATUS_PROTO, r);
  r.resolveAll();
  root = r;
  return r;
}

const type = (name: string) => types().lookupType(name);

/** An ExportTraceServiceRequest from its object form (ids as bytes, times as numbers or decimal strings). */
export function encodeRequest(request: Record<string, unknown>): Uint8Array {
  const t = type('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
  return t.encode(t.fromObject(request)).finish();
}

/** The server's ExportTraceServiceResponse (64-bit counts as strings, unset fields left out). */
export function decodeResponse(bytes: Uint8Array): { partialSuccess?: { rejectedSpans?: string; errorMessage?: string } } {
  const t = type('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse');
  return t.toObject(t.decode(bytes), { longs: String }) as never;
}

/** A google.rpc.Status answer (a refused export). */
export function decodeStatus(bytes: Uint8Array): { code?: number; message?: string; details?: unknown[] } {
  const t = type('google.rpc.Status');
  return t.toObject(t.decode(bytes)) as never;
}
