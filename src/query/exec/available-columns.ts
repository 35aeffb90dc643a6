// The columns a level offers (available_columns): the registry's standard ones for the level, then a
// column per metric its records or their descendants carry (from the manifest and the memory tables'
// notes: nothing is scanned), plus `extraMetrics` (those scorers will write), marked empty.
import { appliesAt, metricColumn, STANDARD_COLUMNS, type ColumnDef, type Level, type MetricInfo } from '../columns.js';
import type { Snapshot } from '../../storage/snapshot/snapshot.js';
import { DESCENDANTS, KINDS, scopeOf, type RunScope } from './plan-input.js';

export function availableColumns(
  snap: Snapshot,
  level: Level,
  scope: RunScope,
  extraMetrics: Iterable<string>,
  metricInfo: (name: string) => MetricInfo | undefined,
): ColumnDef[] {
  const standard = STANDARD_COLUMNS.filter((c) => appliesAt(c, level));
  // A metric whose last record was deleted stays listed until its rows leave the files.
  const present = snap.metricNames(scopeOf(scope, [...new Set([...KINDS[level], ...DESCENDANTS[level]])]));
  const names = [...new Set([...present, ...extraMetrics])].sort();
  const metrics = names.map((n) => metricColumn(n, { ...metricInfo(n), is_empty: !present.has(n) }));
  return [...standard, ...metrics];
}
