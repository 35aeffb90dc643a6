// Building blocks shared by every wire schema: ids, nullable fields, paging, error bodies.
import { Type, type TSchema } from '../vendor/typebox.js';

export const Uuid = Type.String({ format: 'uuid', description: 'identifier in UUID format' });

/** `T | null`, as the service's schemas declare most optional fields. */
export function Nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

export const OptionalUuid = Type.Optional(Nullable(Uuid));

export const StringMap = Type.Record(Type.String(), Type.Unknown());

export const RunIds = {
  log_stream_id: OptionalUuid,
  experiment_id: OptionalUuid,
  metrics_testing_id: OptionalUuid,
};

/** 422: one issue per offending field, the hosted service's validation error body. */
export const ValidationErrorBody = Type.Object({
  detail: Type.Array(
    Type.Object({
      loc: Type.Array(Type.Union([Type.String(), Type.Integer()]), {
        minItems: 1,
        description: 'path of the field: body, query or path, then keys and list indexes',
      }),
      msg: Type.String(),
      type: Type.String({ description: 'kind of failure: missing, enum, string_type, too_long, ...' }),
      input: Type.Optional(Type.Unknown({ description: 'the offending value, when it is not a list or object' })),
      ctx: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
    { minItems: 1 },
  ),
});

/** Every other 4xx and 5xx. */
export const ErrorBody = Type.Object({ detail: Type.String() });

export const ProjectIdParams = Type.Object({ project_id: Uuid });
