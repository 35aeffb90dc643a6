// Read requests over records. The filter language extends these in src/query.
import { Type } from 'typebox';
import { Nullable, RunIds } from './common.js';

export const ReadBody = Type.Object({
  ...RunIds,
  starting_token: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
  limit: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
});

export const CountBody = Type.Object({ ...RunIds });

export const RecordsPage = Type.Object(
  {
    records: Type.Array(Type.Record(Type.String(), Type.Unknown())),
    num_records: Type.Integer(),
    starting_token: Type.Integer(),
    limit: Type.Integer(),
    paginated: Type.Boolean(),
    next_starting_token: Nullable(Type.Integer()),
    last_row_id: Nullable(Type.String()),
  },
  { additionalProperties: true },
);
