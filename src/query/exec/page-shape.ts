// What a page shows and what its keys query must therefore carry: a partial search's selection
// (physical columns and metrics), the columns the keys query returns, and whether the page can be
// shown from the keys query alone (no fetch of its rows). Decided from the request and the plan
// before anything runs, except `shownFromKeys`, which also needs the metrics the keys query read.
import type { Row } from '../../db/database.js';
import { invalid } from '../../errors.js';
import { resolveColumn, type Level, type MetricInfo } from '../columns.js';
import { columnsOf } from '../match-facts.js';
import type { PlanInput } from '../plan.js';
import type { PartialSearchRequest } from '../../schemas/query.js';
import { FREE_TEXT } from './match-estimate.js';
import type { RunScope } from './plan-input.js';

/** Columns every partial record carries, whatever was selected. */
export const BASE_COLUMNS = ['id', 'type', 'project_id', 'run_id', 'session_id', 'trace_id', 'parent_id'];

/** Which physical columns a partial search reads, and which metrics it returns. */
export interface Selection {
  readonly physical: string[];
  readonly metrics: Set<string>;
  readonly allMetrics: boolean;
}

/** A partial search's select_columns as a Selection (throws for an unknown column). */
export function selectionOf(
  level: Level,
  sel: PartialSearchRequest['select_columns'],
  metricInfo: (name: string) => MetricInfo | undefined,
  scorerMetric: (name: string) => boolean = () => false,
): Selection {
  const physical = new Set(BASE_COLUMNS);
  const metrics = new Set<string>();
  const allMetrics = Boolean(sel?.include_all_metrics || sel?.includes_metric_columns);
  (sel?.column_ids ?? []).forEach((id, i) => {
    const c = resolveColumn(id, level, metricInfo);
    if (!c) throw invalid(['body', 'select_columns', 'column_ids', i], `unknown column "${id}" for ${level}s`, id);
    if (c.metric !== undefined) metrics.add(c.metric);
    else physical.add(c.id);
    if (c.id === 'input' || c.id === 'output') physical.add(`${c.id}_json`);
    if (c.id === 'tools' || c.id === 'input' || c.id === 'output') physical.add('extra');
  });
  for (const name of sel?.metric_columns_names ?? []) metrics.add(name);
  if (allMetrics || metrics.size > 0) physical.add('metrics');
  // What a scorer of the store left besides the number (a failure and its message, an explanation,
  // its version) is kept in `extra`: without it a scored record would read as still pending. Metrics
  // no scorer writes keep their lighter page.
  if (allMetrics || [...metrics].some(scorerMetric)) physical.add('extra');
  return { physical: [...physical], metrics, allMetrics };
}

export interface PageShape {
  /** The partial search's selection; null for a full search (every column). */
  readonly selection: Selection | null;
  /** Metrics whose own values the keys query reads for the page (a selection's, short of all). */
  readonly shownMetrics: string[];
  /** Columns one value for every row of the scope (its project, its run when given): filled in, not read. */
  readonly constant: Row;
  /** Columns the keys query returns. */
  readonly keyColumns: string[];
  /** Selected columns the keys query reads anyway (its filter's, short of free text). */
  readonly withKeys: string[];
  /** Whether the page's columns are all among the keys' (then the keys query needs no row locators). */
  readonly fromKeys: boolean;
}

export function pageShape(selection: Selection | null, scope: RunScope, plan: PlanInput): PageShape {
  // The keys query also returns the small base columns, has_children and the own values of the
  // metrics it reads; a selection within those needs no fetch.
  const shownMetrics = selection !== null && !selection.allMetrics ? [...selection.metrics] : [];
  // The scope's project (and its run, when given) is one value for every row it holds: filled in,
  // not decoded for every row the keys query looks at.
  const constant: Row = { project_id: scope.projectId, ...(scope.runId !== undefined ? { run_id: scope.runId } : {}) };
  // A page shown from the keys alone (its columns among the keys', its metrics read there) needs no
  // row locators; has_children only tells which rows can have roll-ups.
  const fromKeys =
    selection !== null &&
    !selection.allMetrics &&
    selection.physical.every((c) => BASE_COLUMNS.includes(c) || c === 'has_children' || c === 'metrics');
  const children = selection === null || selection.allMetrics || selection.metrics.size > 0 || selection.physical.includes('has_children');
  // Selected columns the keys query reads anyway (its filter's, short of free text) come along, and
  // created_at is its sort key: a page of only those needs no fetch, one statement less (while
  // logging goes on, each statement also waits its turn on a busy main thread).
  const tested = columnsOf(plan.filter);
  const withKeys =
    selection === null ? [] : selection.physical.filter((c) => !BASE_COLUMNS.includes(c) && tested.has(c) && !FREE_TEXT.has(c));
  const keyColumns = [...BASE_COLUMNS, ...(children ? ['has_children'] : []), ...withKeys].filter((c) => !(c in constant));
  return { selection, shownMetrics, constant, keyColumns, withKeys, fromKeys };
}

/** Whether the keys' rows are the page (every selected column came with them), given the metrics the keys query read (`ownMetrics`). */
export function shownFromKeys(shape: PageShape, ownMetrics: ReadonlyMap<string, string>): boolean {
  const sel = shape.selection;
  if (sel === null) return false;
  const inKeys = !sel.allMetrics && [...sel.metrics].every((m) => ownMetrics.has(m));
  return sel.physical.every(
    (c) =>
      BASE_COLUMNS.includes(c) ||
      c === 'has_children' ||
      shape.withKeys.includes(c) ||
      (c === 'created_at' && !shape.fromKeys) ||
      (c === 'metrics' && inKeys),
  );
}
