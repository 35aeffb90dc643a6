// Building blocks of the catalog list requests (projects, log streams, scorers): filters and sorts
// tagged by `name` (the tag picks the variant, so it is required), one builder per value kind, and the paging
// fields. The operator tables live here so the schemas and the matchers in src/catalog agree.
import { Type } from '../vendor/typebox.js';
import { Nullable } from './common.js';

export const TEXT_OPERATORS = ['eq', 'ne', 'contains', 'one_of', 'not_in'] as const;
export const ENUM_OPERATORS = ['eq', 'ne', 'one_of', 'not_in'] as const;
export const ID_OPERATORS = ['eq', 'ne', 'one_of', 'not_in', 'contains'] as const;
export const DATE_OPERATORS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte'] as const;
export const NUMBER_OPERATORS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'between'] as const;
export const COLLECTION_OPERATORS = ['eq', 'contains', 'one_of', 'not_in'] as const;
export const BOOL_OPERATORS = ['eq', 'ne'] as const;

const StringOrList = Type.Union([Type.String(), Type.Array(Type.String())]);

export function TextFilter<N extends string>(name: N, caseSensitiveByDefault: boolean) {
  return Type.Object({
    name: Type.Literal(name),
    operator: Type.Enum([...TEXT_OPERATORS]),
    value: StringOrList,
    case_sensitive: Type.Optional(Type.Boolean({ default: caseSensitiveByDefault })),
  });
}

export function EnumFilter<N extends string, V extends string[]>(name: N, values: readonly [...V]) {
  const One = Type.Enum([...values]);
  return Type.Object({ name: Type.Literal(name), operator: Type.Enum([...ENUM_OPERATORS]), value: Type.Union([One, Type.Array(One)]) });
}

/** Id filters: the operator defaults to eq; the value is a UUID, a list, or any string for contains. */
export function IdFilter<N extends string>(name: N) {
  return Type.Object({
    name: Type.Literal(name),
    operator: Type.Optional(Type.Enum([...ID_OPERATORS], { default: 'eq' })),
    value: StringOrList,
  });
}

export function DateFilter<N extends string>(name: N) {
  return Type.Object({ name: Type.Literal(name), operator: Type.Enum([...DATE_OPERATORS]), value: Type.String({ format: 'date-time' }) });
}

export function NumberFilter<N extends string>(name: N) {
  return Type.Object({
    name: Type.Literal(name),
    operator: Type.Enum([...NUMBER_OPERATORS]),
    value: Type.Union([Type.Number(), Type.Array(Type.Number())]),
  });
}

export function CollectionFilter<N extends string>(name: N) {
  return Type.Object({
    name: Type.Literal(name),
    operator: Type.Enum([...COLLECTION_OPERATORS]),
    value: StringOrList,
    case_sensitive: Type.Optional(Type.Boolean({ default: true })),
  });
}

export function BoolFilter<N extends string>(name: N) {
  return Type.Object({
    name: Type.Literal(name),
    operator: Type.Optional(Type.Enum([...BOOL_OPERATORS], { default: 'eq' })),
    value: Type.Boolean(),
  });
}

export function ColumnSort<N extends string>(name: N, sortType: 'column' | 'custom' = 'column') {
  return Type.Object({
    name: Type.Literal(name),
    ascending: Type.Optional(Type.Boolean({ default: true })),
    sort_type: Type.Optional(Type.Literal(sortType)),
  });
}

/** Paging inputs when they travel in the query string (scorers/list, projects/paginated). */
export const PageQueryFields = {
  starting_token: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
};

/** Paging inputs when they travel in the body (log_streams/search). */
export const PageBodyFields = {
  starting_token: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 }))),
  limit: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 1000, default: 100 }))),
};

/** Paging fields of every list response. */
export const PageResponseFields = {
  starting_token: Type.Integer(),
  limit: Type.Integer(),
  paginated: Type.Boolean(),
  next_starting_token: Nullable(Type.Integer()),
};

/** The `actions` query parameter: repeated, each value from one action enumeration. */
export function ActionsQuery<V extends string[]>(values: readonly [...V]) {
  return Type.Optional(Type.Array(Type.Enum([...values])));
}
