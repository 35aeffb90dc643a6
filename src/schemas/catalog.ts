// Wire shapes of projects, runs and users, as the hosted service answers them and the official client reads them.
import { Type } from '../vendor/typebox.js';
import { Nullable, Uuid } from './common.js';

export const UserSummary = Nullable(
  Type.Object({ id: Type.String(), email: Type.String(), first_name: Nullable(Type.String()), last_name: Nullable(Type.String()) }),
);

export const Permission = Type.Object({ action: Type.String(), allowed: Type.Boolean(), message: Type.Optional(Nullable(Type.String())) });

export const CreateProjectBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 512 }),
  type: Type.Optional(Nullable(Type.String())),
  create_example_templates: Type.Optional(Nullable(Type.Boolean())),
  description: Type.Optional(Nullable(Type.String())),
  labels: Type.Optional(Nullable(Type.Array(Type.String()))),
});

export const ProjectQuery = Type.Object({
  project_name: Type.Optional(Type.String()),
  type: Type.Optional(Type.String()),
  project_type: Type.Optional(Type.String()),
});

/** ProjectDB: what GET/POST /projects answer (the older, non-paginated shape the client reads). */
export const ProjectDb = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    type: Nullable(Type.String()),
    created_by: Nullable(Type.String()),
    created_by_user: UserSummary,
    created_at: Type.String(),
    updated_at: Type.String(),
    bookmark: Type.Boolean(),
    description: Nullable(Type.String()),
    labels: Type.Array(Type.String()),
    permissions: Type.Array(Permission),
    runs: Type.Array(Type.Unknown()),
  },
  { additionalProperties: true },
);

export const CreateRunBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 512 }) });

export const RunParams = Type.Object({ project_id: Uuid });

export const LogStream = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    project_id: Type.String(),
    created_at: Type.String(),
    updated_at: Type.String(),
    created_by: Nullable(Type.String()),
    created_by_user: UserSummary,
    num_spans: Type.Optional(Nullable(Type.Integer())),
    num_traces: Type.Optional(Nullable(Type.Integer())),
    has_user_created_sessions: Type.Boolean(),
  },
  { additionalProperties: true },
);
