// A request as the planner's input: the level's records and their descendants as sources over one
// snapshot, the validated filter and sort, roll-up methods, and (for span metrics) what the stored
// spans are known to hold. The first step of every question; nothing runs here but the facts' reads.
import type { Level } from '../columns.js';
import { metricsOf } from '../filter-ast.js';
import { columnsOf } from '../match-facts.js';
import type { PlanInput } from '../plan.js';
import { parseRecordQuery, type QueryKind } from '../record-request.js';
import type { FilterRequest, SearchRequest } from '../../schemas/query.js';
import type { RecordKind } from '../../record/record-columns.js';
import type { Scope, Snapshot } from '../../storage/snapshot/snapshot.js';
import type { ExecContext } from './exec-context.js';

/** The project, and one run of it or (runId absent) all of its runs. */
export interface RunScope {
  projectId: string;
  runId?: string;
}

/** The kinds a level's records have, and those of their descendants (what roll-ups read). */
export const KINDS: Record<Level, readonly RecordKind[]> = { span: ['span'], trace: ['trace'], session: ['session'] };
export const DESCENDANTS: Record<Level, readonly RecordKind[]> = { span: ['span'], trace: ['span'], session: ['span', 'trace'] };

/** A run scope narrowed to some kinds of record. */
export function scopeOf(scope: RunScope, kinds: readonly RecordKind[]): Scope {
  return { projectId: scope.projectId, ...(scope.runId !== undefined ? { runId: scope.runId } : {}), kinds };
}

export type QueryBody = FilterRequest & { sort?: SearchRequest['sort'] };

/** The plan of a request (throws InvalidRequestError for a filter or sort the level cannot take). */
export function planInput(cx: ExecContext, snap: Snapshot, kind: QueryKind, level: Level, scope: RunScope, body: QueryBody): PlanInput {
  const { filter, sort } = parseRecordQuery(kind, level, body, cx.metricInfo);
  return {
    level,
    base: (metrics, text, created) => snap.source(scopeOf(scope, KINDS[level]), metrics, text, created),
    descendants: (metrics) => snap.source(scopeOf(scope, DESCENDANTS[level]), metrics),
    filter,
    sort,
    rollUp: cx.rollUp,
    descendantMetrics: snap.metricNames(scopeOf(scope, DESCENDANTS[level])),
  };
}

/** The plan with facts about the stored spans, when they could spare a roll-up (span metrics). */
export async function factPlan(
  cx: ExecContext,
  snap: Snapshot,
  kind: QueryKind,
  level: Level,
  scope: RunScope,
  body: QueryBody,
): Promise<PlanInput> {
  const plan = planInput(cx, snap, kind, level, scope, body);
  if (level !== 'span' || (metricsOf(plan.filter).size === 0 && plan.sort?.column.metric === undefined)) return plan;
  return { ...plan, facts: await cx.facts.facts(snap, scopeOf(scope, ['span']), columnsOf(plan.filter)) };
}
