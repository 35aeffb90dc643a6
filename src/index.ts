// The public surface of the library.
export { TraceStore } from './engine/trace-store.js';
export type { TraceStoreOptions, RunIds, LogSpansResult, LogTracesResult, ReadRequest, ReadResult } from './engine/trace-store.js';
export { buildServer, type ServerOptions } from './server/build-server.js';
export * from './errors.js';
export type { LogSpansRequest, LogTracesRequest, SpanInput, TraceInput, SpanType, RecordType } from './schemas/ingest.js';
export type { Project, Run, RunKind, User } from './catalog/catalog.js';
export { VERSION } from './version.js';
