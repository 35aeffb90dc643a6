// The public surface of the library.
export { TraceStore } from './engine/trace-store.js';
export type { TraceStoreOptions, RunIds, LogSpansResult, LogTracesResult } from './engine/trace-store.js';
export type { SearchResult, RunScope } from './engine/record-queries.js';
export type { SearchRequest, PartialSearchRequest, FilterRequest, AvailableColumnsRequest } from './schemas/query.js';
export type { ColumnDef, Level, MetricInfo } from './query/columns.js';
export { buildServer, type ServerOptions } from './server/build-server.js';
export * from './errors.js';
export type { LogSpansRequest, LogTracesRequest, SpanInput, TraceInput, SpanType, RecordType } from './schemas/ingest.js';
export type { Project, Run, RunKind, User } from './catalog/catalog.js';
export { VERSION } from './version.js';
