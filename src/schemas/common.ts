// Building blocks shared by every wire schema: ids, nullable fields, paging, error bodies.
import { Type, type TSchema } from 'typebox';

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

export const ValidationErrorBody = Type.Object({
  detail: Type.Array(
    Type.Object({
      loc: Type.Array(Type.Union([Type.String(), Type.Integer()])),
      msg: Type.String(),
      type: Type.String(),
      input: Type.Optional(Type.Unknown()),
      ctx: Type.Optional(Type.Object({})),
    }),
  ),
});

export const ErrorBody = Type.Object({ detail: Type.String() });

export const ProjectIdParams = Type.Object({ project_id: Uuid });
