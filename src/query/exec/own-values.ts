// Support for the planner: the metrics every record of a scope holds a value of (PlanInput.ownEverywhere).
// For those the value a record shows is its own wherever it is read, so the roll-up of its descendants'
// values (a grouping of every descendant, or a recursive climb for spans) can go. Durations are the
// common case: every trace and span logged through the API carries one.
// Returns: a subset of the truth (a metric is named only when every segment of the scope stores it with
// no null in any row group, and no row in memory lacks it). Dead and expired rows count too: a
// superset of the rows only ever names fewer metrics.
// Assumes: segments never change, so each one's full columns are taken from its manifest entry, or for
// segments written before entries kept them, read once from its Parquet footer and kept by file name;
// rows in memory are checked on each call.
import type { SqlRunner } from '../../db/database.js';
import type { SegmentEntry } from '../../storage/manifest/manifest.js';
import type { Scope } from '../../storage/record-store.js';
import { fullMetricColumns } from '../../storage/segments/metric-facts.js';
import type { Snapshot } from '../../storage/snapshot/snapshot.js';
import { ident, joinSql, sql } from '../sql.js';

export class OwnValueFacts {
  readonly #db: SqlRunner;
  /** File path -> the metric columns (m<id>) with no null in any row group. */
  readonly #byFile = new Map<string, Promise<ReadonlySet<string>>>();

  constructor(db: SqlRunner) {
    this.#db = db;
  }

  /** The columns of a segment whose every row holds a value: its entry's, else the footer's null counts (unknown counts: not full). */
  #file(seg: SegmentEntry, path: string): Promise<ReadonlySet<string>> {
    if (seg.full_metrics) return Promise.resolve(new Set(seg.full_metrics.map((id) => `m${id}`)));
    let p = this.#byFile.get(path);
    if (!p) {
      p = fullMetricColumns(this.#db, path);
      // A failed read is not remembered (the next query tries again).
      p.catch(() => this.#byFile.delete(path));
      this.#byFile.set(path, p);
    }
    return p;
  }

  /** Of `metrics`, those every record of the scope (sealed or in memory) holds a value of. */
  async full(snap: Snapshot, scope: Scope, metrics: readonly string[]): Promise<Set<string>> {
    const ids = snap.metricIds;
    this.#prune(snap);
    const segments = snap.segmentsFor(scope).filter((s) => s.rows > 0);
    // A segment that does not store a metric's column has no value of it in any row.
    let left = metrics.filter((m) => segments.every((s) => ids[m] !== undefined && s.metrics.includes(ids[m])));
    if (left.length === 0) return new Set();
    const full = await Promise.all(segments.map((s) => this.#file(s, snap.path(s))));
    left = left.filter((m) => full.every((cols) => cols.has(`m${ids[m]}`)));
    if (left.length === 0) return new Set();
    const mem = snap.memoryRows(scope);
    if (mem === null) return new Set(left);
    // Names are values (parameters); the result columns are numbered.
    const tests = left.map((m, i) => sql`coalesce(bool_and(metrics[${m}] IS NOT NULL), true) AS ${ident(`f${i}`)}`);
    const row = (await this.#db.all(sql`SELECT ${joinSql(tests)} FROM ${mem}`))[0] ?? {};
    return new Set(left.filter((_, i) => row[`f${i}`] === true));
  }

  /** Forgets files merged or deleted since (of every project), once the cache has grown past what is live. */
  #prune(snap: Snapshot): void {
    const live = [...snap.segmentsOfKind('span'), ...snap.segmentsOfKind('trace'), ...snap.segmentsOfKind('session')];
    if (this.#byFile.size <= 2 * live.length + 64) return;
    const keep = new Set(live.map((s) => snap.path(s)));
    for (const f of this.#byFile.keys()) if (!keep.has(f)) this.#byFile.delete(f);
  }
}
