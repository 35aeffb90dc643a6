// What a read addresses: one project, one run or all of them, and the record kinds it reads.
import type { RecordKind } from '../../record/record-columns.js';

export interface Scope {
  projectId: string;
  /** Omit to address every run of the project. */
  runId?: string;
  kinds: readonly RecordKind[];
}
