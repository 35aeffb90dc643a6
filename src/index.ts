// The public surface of the library.
export { TraceStore } from './engine/trace-store.js';
export type { TraceStoreOptions, RunIds, LogSpansResult, LogTracesResult } from './engine/trace-store.js';
export type { SearchResult, RunScope } from './query/exec/record-queries.js';
export type { SearchRequest, PartialSearchRequest, FilterRequest, AvailableColumnsRequest } from './schemas/query.js';
export type { ColumnDef, Level, MetricInfo } from './query/columns.js';
export { buildServer, type ServerOptions } from './server/build-server.js';
export * from './errors.js';
export { CatalogLogError } from './catalog/catalog-log.js';
export type { LogSpansRequest, LogTracesRequest, SpanInput, TraceInput, SpanType, RecordType } from './schemas/ingest.js';
export type { Project, Run, RunKind, User } from './catalog/catalog.js';
export { VERSION } from './version.js';
export type { OtlpLogOptions, OtlpLogResult } from './engine/otlp.js';

// Catalog (issue 4): projects, runs, roles, scorers.
export { PROJECT_ACTIONS, PROJECT_ROLES, SCORER_ACTIONS } from './catalog/permissions.js';
export type { Permission, ProjectAction, ProjectRole, ScorerAction } from './catalog/permissions.js';
export type { ProjectPageQuery, ProjectPageQueryV1 } from './catalog/project-list.js';
export type { ProjectUpdate } from './catalog/projects.js';
export type { ScorerPageQuery } from './catalog/scorer-list.js';
export type { LogStreamFilter, LogStreamSearchBody, LogStreamSort } from './schemas/log-streams.js';
export type { ProjectFilter, ProjectFilterV1, ProjectItem, ProjectSort, ProjectSortV1, ProjectsBody, ProjectsBodyV1, ProjectsPage, ProjectsPageV1 } from './schemas/projects.js';
export type { RunScorerSettings, RunScorerSettingsBody, ScorerConfig } from './schemas/scorer-settings.js';
export type { CreateScorerBody, ListScorersBody, ListScorersResponse, Scorer, ScorerFilter, ScorerSort, ScorerVersion, ScorerVersionInput, UpdateScorerBody } from './schemas/scorers.js';

// Data in and out (issue 16): SQL, export, import, retention.
export { SqlError, type SqlOptions, type SqlParam } from './engine/sql-sandbox.js';
export { EXPORT_COLUMNS, EXPORT_FORMATS, type ExportFileOptions, type ExportFormat, type ExportSelection } from './engine/export.js';
export type { ImportFormat, ImportOptions, ImportResult } from './engine/import.js';
export { MAX_RETENTION_DAYS, type RetentionSetting } from './engine/retention.js';

// Iceberg tables of the store (issue 31): store.iceberg.publish({ to?, s3? }).
export { DEFAULT_KEEP_SNAPSHOTS, DEFAULT_MAX_SNAPSHOT_AGE_SECONDS, type Iceberg, type PublishOptions, type PublishResult } from './iceberg/publish.js';
export type { TableResult } from './iceberg/publish-table.js';
export type { S3Options } from './iceberg/s3-client.js';
