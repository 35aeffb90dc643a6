// Project lists and changes: POST /v2/projects/paginated (v2 shape), the older bare
// POST /projects/paginated (v1 shape), project updates, bookmarks and members.
import { Type, type Static } from '../vendor/typebox.js';
import { Nullable, Uuid } from './common.js';
import { Permission, ProjectDb, UserSummary } from './catalog.js';
import {
  ActionsQuery,
  ColumnSort,
  DateFilter,
  EnumFilter,
  IdFilter,
  NumberFilter,
  PageQueryFields,
  PageResponseFields,
  TextFilter,
} from './list-filters.js';

export const PROJECT_ACTION_VALUES = [
  'update',
  'delete',
  'rename',
  'share',
  'create_run',
  'delete_run',
  'rename_run',
  'move_run',
  'export_data',
  'configure_human_feedback',
  'record_human_feedback',
  'log_data',
  'toggle_metric',
  'edit_alert',
  'create_stage',
  'edit_stage',
  'configure_crown_logic',
  'delete_data',
  'set_metric',
  'edit_run_tags',
  'dismiss_alert',
  'edit_slice',
  'edit_edit',
  'update_control_bindings',
  'use_control_runtime',
] as const;
export const PROJECT_TYPE_VALUES = ['gen_ai', 'llm_monitor', 'prompt_evaluation', 'protect'] as const;
export const PROJECT_ROLE_VALUES = ['owner', 'editor', 'annotator', 'viewer'] as const;

const BookmarkFilter = Type.Object({ name: Type.Literal('bookmark'), value: Type.Boolean() });

// ------------------------------------------------------------------ v2

export const ProjectFilter = Type.Union([
  TextFilter('name', true),
  IdFilter('creator'),
  DateFilter('created_at'),
  DateFilter('updated_at'),
  NumberFilter('num_logstreams'),
  NumberFilter('num_experiments'),
  BookmarkFilter,
]);
export type ProjectFilter = Static<typeof ProjectFilter>;

export const ProjectSort = Type.Union([
  ColumnSort('name'),
  ColumnSort('created_at'),
  ColumnSort('updated_at'),
  ColumnSort('num_logstreams'),
  ColumnSort('num_experiments'),
]);
export type ProjectSort = Static<typeof ProjectSort>;

export const ProjectsQuery = Type.Object({
  actions: ActionsQuery(PROJECT_ACTION_VALUES),
  include_logstreams: Type.Optional(Type.Boolean({ default: false })),
  metric_id: Type.Optional(Nullable(Uuid)),
  ...PageQueryFields,
});
export type ProjectsQuery = Static<typeof ProjectsQuery>;

export const ProjectsBody = Type.Object({
  filters: Type.Optional(Nullable(Type.Array(ProjectFilter))),
  sort: Type.Optional(Nullable(ProjectSort)),
});
export type ProjectsBody = Static<typeof ProjectsBody>;

export const ProjectItem = Type.Object({
  id: Uuid,
  name: Type.String(),
  type: Type.Optional(Nullable(Type.String())),
  created_at: Type.String(),
  updated_at: Type.String(),
  permissions: Type.Array(Permission),
  bookmark: Type.Boolean(),
  num_logstreams: Type.Integer(),
  num_experiments: Type.Integer(),
  created_by: Type.Optional(Nullable(Type.String())),
  created_by_user: UserSummary,
  description: Nullable(Type.String()),
  labels: Type.Array(Type.String()),
  log_streams: Type.Optional(Nullable(Type.Array(Type.Object({ id: Uuid, name: Type.String() })))),
});
export type ProjectItem = Static<typeof ProjectItem>;

export const ProjectsPage = Type.Object({ ...PageResponseFields, projects: Type.Array(ProjectItem), total_count: Type.Integer() });
export type ProjectsPage = Static<typeof ProjectsPage>;

// ------------------------------------------------------------------ v1 (bare /projects/paginated)

export const ProjectFilterV1 = Type.Union([
  IdFilter('id'),
  TextFilter('name', true),
  EnumFilter('type', PROJECT_TYPE_VALUES),
  IdFilter('creator'),
  DateFilter('created_at'),
  DateFilter('updated_at'),
  NumberFilter('runs'),
  BookmarkFilter,
]);
export type ProjectFilterV1 = Static<typeof ProjectFilterV1>;

export const ProjectSortV1 = Type.Union([
  ColumnSort('name'),
  ColumnSort('type'),
  ColumnSort('created_at'),
  ColumnSort('updated_at'),
  ColumnSort('runs', 'custom'),
  ColumnSort('bookmark', 'custom'),
]);
export type ProjectSortV1 = Static<typeof ProjectSortV1>;

export const ProjectsQueryV1 = Type.Object({ actions: ActionsQuery(PROJECT_ACTION_VALUES), ...PageQueryFields });
export const ProjectsBodyV1 = Type.Object({
  filters: Type.Optional(Nullable(Type.Array(ProjectFilterV1))),
  sort: Type.Optional(Nullable(ProjectSortV1)),
});
export type ProjectsBodyV1 = Static<typeof ProjectsBodyV1>;
export const ProjectsPageV1 = Type.Object({ ...PageResponseFields, projects: Type.Array(ProjectDb) });
export type ProjectsPageV1 = Static<typeof ProjectsPageV1>;

// ------------------------------------------------------------------ changes

export const UpdateProjectBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
  description: Type.Optional(Nullable(Type.String())),
  labels: Type.Optional(Nullable(Type.Array(Type.String()))),
  bookmark: Type.Optional(Type.Boolean()),
});
export type UpdateProjectBody = Static<typeof UpdateProjectBody>;

export const ProjectActionsQuery = Type.Object({ actions: ActionsQuery(PROJECT_ACTION_VALUES) });

export const MemberInput = Type.Object({ user_id: Uuid, role: Type.Enum([...PROJECT_ROLE_VALUES]) });
export const Member = Type.Object({
  user_id: Uuid,
  email: Type.String(),
  first_name: Type.String(),
  last_name: Type.String(),
  role: Type.Enum([...PROJECT_ROLE_VALUES]),
  created_at: Type.String(),
});
export const MemberParams = Type.Object({ project_id: Uuid, user_id: Uuid });
export const DeletedBody = Type.Object({ message: Type.String(), records_deleted: Type.Optional(Type.Integer()) });
