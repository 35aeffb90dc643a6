// The catalog's rows: users, API keys, projects and runs, as its tables hold them.
import type { SecretHash } from './secrets.js';

export const RUN_KINDS = ['log_stream', 'experiment', 'metrics_testing'] as const;
export type RunKind = (typeof RUN_KINDS)[number];
export const PROJECT_TYPES = ['gen_ai', 'llm_monitor', 'prompt_evaluation', 'protect'] as const;

export interface User {
  id: string;
  email: string;
  first_name: string;
  last_name: string;
  role: 'admin' | 'user';
  created_at: string;
  password?: SecretHash;
}

export interface ApiKey {
  id: string;
  user_id: string;
  prefix: string;
  secret: SecretHash;
  description: string;
  created_at: string;
  revoked_at: string | null;
}

export interface Project {
  id: string;
  name: string;
  type: string;
  created_at: string;
  updated_at: string;
  created_by: string | null;
  description: string | null;
  labels: string[];
}

export interface Run {
  id: string;
  project_id: string;
  kind: RunKind;
  name: string;
  created_at: string;
  updated_at: string;
  created_by: string | null;
  has_user_created_sessions: boolean;
}
