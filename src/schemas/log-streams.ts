// POST /projects/{project_id}/log_streams/search (paging in the body, as the service takes it) and the run
// changes (rename, delete).
import { Type, type Static } from '../vendor/typebox.js';
import { Nullable, Uuid } from './common.js';
import { LogStream } from './catalog.js';
import { ColumnSort, DateFilter, IdFilter, PageBodyFields, PageResponseFields, TextFilter } from './list-filters.js';

export const LogStreamFilter = Type.Union([
  IdFilter('id'),
  TextFilter('name', true),
  IdFilter('created_by'),
  DateFilter('created_at'),
  DateFilter('updated_at'),
]);
export type LogStreamFilter = Static<typeof LogStreamFilter>;

export const LogStreamSort = Type.Union([ColumnSort('name'), ColumnSort('created_at'), ColumnSort('updated_at')]);
export type LogStreamSort = Static<typeof LogStreamSort>;

export const LogStreamSearchBody = Type.Object({
  ...PageBodyFields,
  filters: Type.Optional(Nullable(Type.Array(LogStreamFilter))),
  sort: Type.Optional(Nullable(LogStreamSort)),
  include_counts: Type.Optional(Nullable(Type.Boolean({ default: false }))),
});
export type LogStreamSearchBody = Static<typeof LogStreamSearchBody>;

export const LogStreamPage = Type.Object({ ...PageResponseFields, log_streams: Type.Array(LogStream) });
export type LogStreamPage = Static<typeof LogStreamPage>;

export const RunPathParams = Type.Object({ project_id: Uuid, run_id: Uuid });
export const RenameRunBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 512 }) });
