// Bodies of search, partial search, count, delete and available columns. Filters are checked field by
// field in src/query/validate-filter.ts, which names the exact path and the allowed choices; the shapes
// here admit both spellings the service's versions use (column_id or name; pagination object or
// top-level starting_token/limit; the older and newer select_columns keys).
import { Type, type Static } from '../vendor/typebox.js';
import { OPERATORS } from '../query/filter-ast.js';
import type { FilterType } from '../query/columns.js';
import { Nullable, RunIds } from './common.js';

const FILTER_HELP =
  'A filter on one column (column_id, or its alias name; metric columns are metrics/<name>). Operators by type: ' +
  Object.entries(OPERATORS)
    .filter(([, ops]) => ops.length > 0)
    .map(([k, ops]) => `${k}: ${ops.join(', ')}`)
    .join('; ') +
  '. number between takes [low, high]; one_of and not_in take a list; fully_annotated takes only user_ids. ' +
  'The columns of a stream, with the filter type each takes, are what available_columns answers.';

export const RecordFilter = Type.Object(
  {
    // Typed as a string for the library's callers; the wire schema lists the kinds.
    type: Type.Unsafe<string>(Type.Enum(Object.keys(OPERATORS) as FilterType[])),
    column_id: Type.Optional(Nullable(Type.String())),
    name: Type.Optional(Nullable(Type.String())),
    operator: Type.Optional(Nullable(Type.String())),
    value: Type.Optional(Type.Unknown()),
    case_sensitive: Type.Optional(Nullable(Type.Boolean())),
    user_ids: Type.Optional(Type.Unknown()),
  },
  { description: FILTER_HELP },
);

/** A filter tree node; its shape ({filter} | {and} | {or} | {not}) is checked by validate-filter.ts. */
export const FilterTree = Type.Unknown({
  description:
    'A tree of filters: a node is a leaf {"filter": <filter>}, {"and": [nodes]}, {"or": [nodes]} or {"not": node}; ' +
    'at most 32 levels and 1,000 nodes. Combined with `filters` by and.',
  examples: [
    {
      or: [
        { filter: { type: 'text', column_id: 'model', operator: 'eq', value: 'gpt-4o' } },
        { not: { filter: { type: 'boolean', column_id: 'is_complete', value: true } } },
      ],
    },
  ],
});

export const SortClause = Type.Object({
  column_id: Type.Optional(Nullable(Type.String())),
  name: Type.Optional(Nullable(Type.String())),
  ascending: Type.Optional(Nullable(Type.Boolean())),
  sort_type: Type.Optional(Nullable(Type.String())),
});

export const SelectColumns = Type.Object({
  column_ids: Type.Optional(Nullable(Type.Array(Type.String()))),
  include_all_metrics: Type.Optional(Nullable(Type.Boolean())),
  include_all_feedback: Type.Optional(Nullable(Type.Boolean())),
  includes_metric_columns: Type.Optional(Nullable(Type.Boolean())),
  metric_columns_names: Type.Optional(Nullable(Type.Array(Type.String()))),
});

const filterFields = {
  ...RunIds,
  filters: Type.Optional(Nullable(Type.Array(RecordFilter))),
  filter_tree: Type.Optional(FilterTree),
};

// Offsets beyond 2^53 are not exact in JSON numbers, and larger ones overflow the database's integers
// (a 500 on every search and partial search, found by the schema-driven fuzzer); pages are at most 1,000.
const PageInt = Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })));
const PageSize = Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 1000 })));

export const SearchBody = Type.Object({
  ...filterFields,
  starting_token: PageInt,
  limit: PageSize,
  pagination: Type.Optional(Nullable(Type.Object({ starting_token: PageInt, limit: PageSize }))),
  previous_last_row_id: Type.Optional(Nullable(Type.String())),
  sort: Type.Optional(Nullable(SortClause)),
  truncate_fields: Type.Optional(Nullable(Type.Boolean())),
  include_counts: Type.Optional(Nullable(Type.Boolean())),
  include_code_metric_metadata: Type.Optional(Nullable(Type.Boolean())),
});
export type SearchRequest = Static<typeof SearchBody>;

export const PartialSearchBody = Type.Object({
  ...SearchBody.properties,
  select_columns: Type.Optional(Nullable(SelectColumns)),
});
export type PartialSearchRequest = Static<typeof PartialSearchBody>;

export const FilterBody = Type.Object(filterFields);
export type FilterRequest = Static<typeof FilterBody>;

export const AvailableColumnsBody = Type.Object({
  ...RunIds,
  start_time: Type.Optional(Nullable(Type.String())),
  end_time: Type.Optional(Nullable(Type.String())),
});
export type AvailableColumnsRequest = Static<typeof AvailableColumnsBody>;

export const SearchResponse = Type.Object(
  {
    records: Type.Array(Type.Record(Type.String(), Type.Unknown())),
    num_rows: Type.Integer(),
    num_records: Type.Integer(),
    starting_token: Type.Integer(),
    limit: Type.Integer(),
    paginated: Type.Boolean(),
    next_starting_token: Nullable(Type.Integer()),
    last_row_id: Nullable(Type.String()),
  },
  { additionalProperties: true },
);

/** One record (GET .../{level}/{id}): its fields, its descendants nested under `spans` or `traces`. */
export const RecordResponse = Type.Object(
  { id: Type.String(), type: Type.String(), project_id: Type.String() },
  { additionalProperties: true, description: 'a trace, span or session with every stored field; children nested' },
);

export const CountResponse = Type.Object({ total_count: Type.Integer() });
export const DeleteResponse = Type.Object({ message: Type.String() });
export const ColumnsResponse = Type.Object({ columns: Type.Array(Type.Record(Type.String(), Type.Unknown())) });
