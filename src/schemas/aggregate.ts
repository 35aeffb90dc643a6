// The body and answer of POST .../{spans|traces|sessions}/aggregate. The shapes are checked here;
// what they name (columns, operators, intervals, aliases) is checked against the column registry in
// src/query/aggregate-request.ts, which names the exact path of each problem.
import { Type, type Static } from '../vendor/typebox.js';
import { Nullable, RunIds } from './common.js';
import { FilterTree, RecordFilter } from './query.js';

const OPS = ['count', 'sum', 'avg', 'min', 'max', 'p50', 'p90', 'p95', 'p99'];
const INTERVALS = ['1m', '5m', '1h', '1d', 'auto'];

export const AggregateGroup = Type.Union(
  [
    Type.String({ description: 'a groupable column id (available_columns marks them groupable)' }),
    Type.Object({
      column_id: Type.String(),
      interval: Type.Optional(
        Nullable(Type.String({ description: `time buckets of created_at: one of ${INTERVALS.join(', ')} (auto picks one for the range)` })),
      ),
    }),
  ],
  {
    description:
      'A group: a groupable column (model, name, type, tags, status_code, run_id, ...), ' +
      'or created_at in time buckets {"column_id": "created_at", "interval": "1h"}.',
  },
);

export const AggregateMeasure = Type.Object(
  {
    op: Type.String({ description: `one of ${OPS.join(', ')}` }),
    column_id: Type.Optional(Nullable(Type.String({ description: 'a numeric column: metrics/<name>, status_code, temperature, ...' }))),
    alias: Type.Optional(Nullable(Type.String({ description: 'its key in each row (default "count" or "op(column_id)")' }))),
    filters: Type.Optional(Nullable(Type.Array(RecordFilter))),
    filter_tree: Type.Optional(FilterTree),
  },
  {
    description:
      'count (of records, or of records with a value of column_id), or sum/avg/min/max/p50/p90/p95/p99 of a numeric column; ' +
      'with filters, only the records matching them count toward this measure (an error rate: count with status_code >= 400 beside count).',
  },
);

export const AggregateBody = Type.Object({
  ...RunIds,
  filters: Type.Optional(Nullable(Type.Array(RecordFilter))),
  filter_tree: Type.Optional(FilterTree),
  group_by: Type.Optional(Nullable(Type.Array(AggregateGroup, { maxItems: 2 }))),
  measures: Type.Array(AggregateMeasure, { minItems: 1, maxItems: 20 }),
  limit: Type.Optional(
    Nullable(
      Type.Integer({ minimum: 1, maximum: 1000, description: 'most column groups kept, those with the most records (default 100)' }),
    ),
  ),
});
export type AggregateRequest = Static<typeof AggregateBody>;

export const AggregateResponse = Type.Object({
  rows: Type.Array(Type.Record(Type.String(), Type.Unknown()), {
    description: 'one row per group: group columns by id (time buckets as their start, ISO 8601 UTC), measures by alias',
  }),
  interval: Type.Optional(Type.String({ description: 'the width of the time buckets (the one auto chose)' })),
  groups_truncated: Type.Optional(Type.Boolean({ description: 'column groups beyond limit were left out' })),
});
