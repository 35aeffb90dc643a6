// What the catalog's helpers that Catalog itself builds on (roles, scorers, run scorer settings) read
// and write through: its tables and the lookups that answer 404. Catalog implements it; the helpers
// take this rather than the class, so the class can use them without a cycle.
import type { CatalogChange, CatalogRow } from './catalog-log.js';
import type { Project, Run } from './rows.js';

export interface CatalogTables {
  table<T>(name: string): T[];
  get<T>(name: string, id: string): T | undefined;
  /** Applies and durably records changes, all or nothing. */
  commit(changes: readonly CatalogChange[]): void;
  put<T extends CatalogRow>(table: string, value: T): void;
  project(id: string): Project;
  run(projectId: string, runId: string): Run;
  userSummary(id: string | null): { id: string; email: string; first_name: string; last_name: string } | null;
}
