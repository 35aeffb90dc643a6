// Shaping a page's rows from what its queries returned: rows shown from the keys query alone, the
// metrics a selection asks for, and roll-up values as the page shows them.
import type { Row } from '../../db/database.js';

/** Sums of doubles depend on the order rows are read in (which compaction changes): 12 significant digits keep the same record reading the same. */
export function roundRollUp(v: unknown): number {
  return Number(Number(v).toPrecision(12));
}

export function addRolled(out: Map<string, Map<string, number>>, id: string, name: string, v: unknown): void {
  let m = out.get(id);
  if (!m) out.set(id, (m = new Map()));
  m.set(name, roundRollUp(v));
}

/** A page row from its keys row: the selected columns, and `metrics` from the own values the keys query read. */
export function lightRow(keys: Row, physical: readonly string[], ownMetrics: ReadonlyMap<string, string>): Row {
  const row: Row = {};
  for (const c of physical) if (c !== 'metrics') row[c] = keys[c];
  if (physical.includes('metrics')) {
    const entries: { key: string; value: number }[] = [];
    for (const [name, col] of ownMetrics)
      if (keys[col] !== null && keys[col] !== undefined) entries.push({ key: name, value: Number(keys[col]) });
    row['metrics'] = entries;
  }
  return row;
}

/** The metrics a selection asks for (all of them without a selection or with include_all_metrics). */
export function pick(values: Record<string, unknown>, sel: { metrics: Set<string>; allMetrics: boolean } | null): Record<string, unknown> {
  if (sel === null || sel.allMetrics) return values;
  const out: Record<string, unknown> = {};
  for (const k of sel.metrics) if (values[k] !== undefined) out[k] = values[k];
  return out;
}
