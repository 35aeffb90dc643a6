// What the extended crash test's worker (crash-worker.ts) does and reports, shared with the test.
import type { RunKind } from '../../src/catalog/catalog.js';

export interface CrashState {
  projects: { id: string; name: string }[];
  runs: { id: string; projectId: string; kind: RunKind; name: string }[];
  tags: { tag: string; projectId: string; runId: string; kind: RunKind }[];
}

export type CrashOp =
  | {
      kind: 'log';
      op: number;
      projectId: string;
      runId: string;
      runKind: RunKind;
      tag: string;
      traces: { id: string; spanIds: string[] }[];
    }
  | { kind: 'delete'; op: number; projectId: string; runId: string; tag: string }
  | { kind: 'createProject'; op: number; name: string; id?: string }
  | { kind: 'createRun'; op: number; projectId: string; runKind: RunKind; name: string; id?: string }
  | { kind: 'renameProject'; op: number; projectId: string; from: string; to: string }
  | { kind: 'renameRun'; op: number; projectId: string; runId: string; from: string; to: string }
  | { kind: 'deleteRun'; op: number; projectId: string; runId: string }
  | { kind: 'deleteProject'; op: number; projectId: string }
  | { kind: 'flush'; op: number }
  | { kind: 'compact'; op: number };

export const runField = (kind: RunKind) =>
  kind === 'log_stream' ? 'log_stream_id' : kind === 'experiment' ? 'experiment_id' : 'metrics_testing_id';

/**
 * Store options that keep background compaction from merging anything when TRACELAKE_CRASH_COMPACT=0
 * (the first test of crash-mixed.test.ts: compaction joins the mix in the second).
 */
export function noCompaction(): Record<string, unknown> {
  return process.env['TRACELAKE_CRASH_COMPACT'] === '0' ? { compaction: { maxSegmentRows: 0, deadShare: Number.POSITIVE_INFINITY } } : {};
}
