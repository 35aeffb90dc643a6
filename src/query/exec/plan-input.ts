// A request as the planner's input: the level's records and their descendants as sources over one
// snapshot, the validated filter and sort, roll-up methods, and (for span metrics) what the stored
// spans are known to hold. The first step of every question; nothing runs here but the facts' reads.
import type { Level } from '../columns.js';
import { metricsOf } from '../filter-ast.js';
import { columnsOf } from '../match-facts.js';
import type { CreatedRanges, PlanInput, Source } from '../plan.js';
import type { TextRequirement } from '../text-needs.js';
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

/** The records of a level (PlanInput.base); one whose kinds are its descendants' (spans) says it reads what they do (Source.sameAsDescendants). */
export function levelSource(
  snap: Snapshot,
  scope: RunScope,
  level: Level,
  metrics: readonly string[],
  text: readonly TextRequirement[],
  created: CreatedRanges | null,
  locate = false,
): Source {
  const source = snap.source(scopeOf(scope, KINDS[level]), metrics, text, created, undefined, locate);
  const same = KINDS[level].length === DESCENDANTS[level].length && KINDS[level].every((k) => DESCENDANTS[level].includes(k));
  return same ? { ...source, sameAsDescendants: true } : source;
}

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
    base: (metrics, text, created, locate) => levelSource(snap, scope, level, metrics, text, created, locate),
    descendants: (metrics) => snap.source(scopeOf(scope, DESCENDANTS[level]), metrics),
    filter,
    sort,
    rollUp: cx.rollUp,
    descendantMetrics: snap.metricNames(scopeOf(scope, DESCENDANTS[level])),
    levelMetrics: snap.metricNames(scopeOf(scope, KINDS[level])),
  };
}

/**
 * The plan with what the stored records say can spare a roll-up: the metrics its filter or sort reads
 * that every record of the level holds (then read as they are), and facts about spans (span metrics).
 */
export async function factPlan(
  cx: ExecContext,
  snap: Snapshot,
  kind: QueryKind,
  level: Level,
  scope: RunScope,
  body: QueryBody,
): Promise<PlanInput> {
  const plan = planInput(cx, snap, kind, level, scope, body);
  const read = metricsOf(plan.filter);
  if (plan.sort?.column.metric !== undefined) read.add(plan.sort.column.metric);
  if (read.size === 0) return plan;
  // Only metrics a descendant carries could roll up at all.
  const rollable = [...read].filter((n) => plan.descendantMetrics?.has(n) !== false);
  const own = rollable.length > 0 ? await cx.ownValues.full(snap, scopeOf(scope, KINDS[level]), rollable) : new Set<string>();
  const withOwn = own.size > 0 ? { ...plan, ownEverywhere: own } : plan;
  if (level !== 'span' || rollable.every((n) => own.has(n))) return withOwn;
  return { ...withOwn, facts: await cx.facts.facts(snap, scopeOf(scope, ['span']), columnsOf(plan.filter)) };
}
