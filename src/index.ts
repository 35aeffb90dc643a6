// The public surface of the library: the store and its parts, the shapes they take and return, the
// errors they throw, and buildServer to serve a store over HTTP.
export { TraceStore, type TraceStoreOptions } from './engine/trace-store.js';
export type { Records } from './engine/records/records.js';
export type { StoreCatalog } from './engine/store-catalog.js';
export type { Users, UserView, ApiKeyView } from './engine/users.js';
export type { StoreData } from './engine/data/data.js';
export type { Otlp, OtlpLogOptions, OtlpLogResult } from './engine/otlp/otlp.js';
export type { Maintenance, MemoryReport } from './engine/maintenance.js';
export { buildServer, type ServerOptions } from './server/build-server.js';
export * from './errors.js';
export { CatalogLogError } from './catalog/catalog-log.js';
export { VERSION } from './version.js';

// Records: logging and reading.
export type { RunIds } from './engine/run-scope.js';
export type { LogSpansResult, LogTracesResult } from './engine/records/ingest.js';
export { IDEMPOTENCY_WINDOW_MS, type LogOptions } from './engine/records/idempotency.js';
export type { LogSpansRequest, LogTracesRequest, SpanInput, TraceInput, SpanType, RecordType } from './schemas/ingest.js';
export type { SearchResult } from './query/exec/record-queries.js';
export type { SearchRequest, PartialSearchRequest, FilterRequest, AvailableColumnsRequest } from './schemas/query.js';
export type { ColumnDef, ColumnInfo, Level, MetricInfo } from './query/columns.js';

// Catalog: projects, runs, roles, scorers.
export type { Project, Run, RunKind, User } from './catalog/catalog.js';
export { PROJECT_ACTIONS, PROJECT_ROLES, SCORER_ACTIONS } from './catalog/permissions.js';
export type { Permission, ProjectAction, ProjectRole, ScorerAction } from './catalog/permissions.js';
export type { MemberView } from './catalog/members.js';
export type { ProjectPageQuery, ProjectPageQueryV1 } from './catalog/project-list.js';
export type { ProjectUpdate } from './catalog/projects.js';
export type { ScorerPageQuery } from './catalog/scorer-list.js';
export type { LogStreamFilter, LogStreamPage, LogStreamSearchBody, LogStreamSort } from './schemas/log-streams.js';
export type {
  ProjectFilter,
  ProjectFilterV1,
  ProjectItem,
  ProjectSort,
  ProjectSortV1,
  ProjectsBody,
  ProjectsBodyV1,
  ProjectsPage,
  ProjectsPageV1,
} from './schemas/projects.js';
export type { RunScorerSettings, RunScorerSettingsBody, ScorerConfig } from './schemas/scorer-settings.js';
export type {
  CreateScorerBody,
  ListScorersBody,
  ListScorersResponse,
  Scorer,
  ScorerFilter,
  ScorerSort,
  ScorerVersion,
  ScorerVersionInput,
  UpdateScorerBody,
} from './schemas/scorers.js';

// Data in and out: SQL, export, import, retention.
export { SqlError, type SqlOptions, type SqlParam } from './engine/data/sql-sandbox.js';
export { EXPORT_COLUMNS, EXPORT_FORMATS, type ExportFileOptions, type ExportFormat, type ExportSelection } from './engine/data/export.js';
export type { ImportFormat, ImportOptions, ImportResult } from './engine/data/import.js';
export { MAX_RETENTION_DAYS, type RetentionSetting } from './engine/data/retention.js';

// Iceberg tables of the store: store.iceberg.publish({ to?, s3? }).
export {
  DEFAULT_KEEP_SNAPSHOTS,
  DEFAULT_MAX_SNAPSHOT_AGE_SECONDS,
  type Iceberg,
  type PublishOptions,
  type PublishResult,
} from './iceberg/publish.js';
export type { TableResult } from './iceberg/publish-table.js';
export type { S3Options } from './iceberg/s3-client.js';
