// Which scorers apply to which records: the scorers enabled in a run (its scorer settings) resolved
// once per catalog change into plans, and the tests a record passes before a scorer scores it: its
// type among the scorer's scoreable node types, the settings' node filters, the sampling rate (by a
// hash of the record id, so the same records are chosen every time, before and after a restart), and
// being written after the scorer was enabled, complete, and without the metric yet.
import type { Catalog } from '../catalog/catalog.js';
import type { ScorerRow, VersionRow } from '../catalog/scorer-row.js';
import { settingsRow, type EnabledScorer } from '../catalog/scorer-settings.js';
import type { Level } from '../query/columns.js';
import type { LogRow } from '../record/record.js';
import { storedScores } from '../record/scores.js';
import type { NodeFilter } from '../schemas/scorers.js';

export interface ScorerPlan {
  readonly scorer: ScorerRow;
  readonly version: VersionRow | null;
  /** The metric the scorer writes (its metric_name, else its name). */
  readonly metric: string;
  /** Record types it scores (its scoreable node types; llm when it names none). */
  readonly types: ReadonlySet<string>;
  readonly filters: readonly NodeFilter[];
  /** Share of the records that online scoring scores (1: all). */
  readonly sampleRate: number;
  /** Records with a higher seq were written after the scorer was enabled (online scoring scores those). */
  readonly enabledSeq: number;
  readonly modelName: string | null;
  readonly numJudges: number | null;
  readonly cotEnabled: boolean | null;
}

/** The levels whose records have these types. */
export function levelsOf(types: Iterable<string>): Level[] {
  const out = new Set<Level>();
  for (const t of types) out.add(t === 'trace' ? 'trace' : t === 'session' ? 'session' : 'span');
  return [...out];
}

/** Record types of a level among `types`. */
export function typesAt(level: Level, types: Iterable<string>): string[] {
  return [...types].filter((t) => (level === 'span' ? t !== 'trace' && t !== 'session' : t === level));
}

/** A plan for a scorer (enabled in a run with `entry`'s knobs, or asked for by a recompute without any). */
export function planOf(catalog: Catalog, scorer: ScorerRow, entry: Partial<EnabledScorer> = {}): ScorerPlan {
  const versionId = entry.version_id ?? scorer.default_version_id;
  const version = (catalog.scorers.view.version(versionId ?? null) as VersionRow | null) ?? null;
  const d = scorer.defaults;
  const types = entry.scoreable_node_types ?? version?.scoreable_node_types ?? scorer.scoreable_node_types ?? ['llm'];
  return {
    scorer,
    version,
    metric: scorer.metric_name || scorer.name,
    types: new Set(types),
    filters: (entry.filters ?? d?.filters ?? []) as NodeFilter[],
    sampleRate: entry.sample_rate ?? 1,
    enabledSeq: entry.enabled_seq ?? 0,
    modelName: entry.model_name ?? version?.model_name ?? d?.model_name ?? null,
    numJudges: entry.num_judges ?? version?.num_judges ?? d?.num_judges ?? null,
    cotEnabled: entry.cot_enabled ?? version?.cot_enabled ?? d?.cot_enabled ?? null,
  };
}

/** The plans of every run with scorers enabled, rebuilt when the catalog changes. */
export class EnabledPlans {
  readonly #catalog: Catalog;
  #version = -1;
  #byRun = new Map<string, { projectId: string; plans: ScorerPlan[] }>();

  constructor(catalog: Catalog) {
    this.#catalog = catalog;
  }

  #fresh(): Map<string, { projectId: string; plans: ScorerPlan[] }> {
    if (this.#version !== this.#catalog.version) {
      this.#version = this.#catalog.version;
      const byRun = new Map<string, { projectId: string; plans: ScorerPlan[] }>();
      for (const row of this.#catalog.table<{ id: string; project_id: string }>('run_scorer_settings')) {
        const settings = settingsRow(this.#catalog, row.id);
        const plans: ScorerPlan[] = [];
        for (const e of settings?.scorers ?? []) {
          const scorer = this.#catalog.scorers.find(e.id);
          if (scorer) plans.push(planOf(this.#catalog, scorer, e));
        }
        if (plans.length > 0) byRun.set(row.id, { projectId: row.project_id, plans });
      }
      this.#byRun = byRun;
    }
    return this.#byRun;
  }

  /** Plans of the scorers enabled in a run ([] when none). */
  of(runId: string): readonly ScorerPlan[] {
    return this.#fresh().get(runId)?.plans ?? [];
  }

  /** Every run with scorers enabled. */
  runs(): { runId: string; projectId: string; plans: readonly ScorerPlan[] }[] {
    return [...this.#fresh()].map(([runId, v]) => ({ runId, ...v }));
  }
}

function textMatch(f: Extract<NodeFilter, { name: 'node_name' }>, actual: string): boolean {
  const cs = f.case_sensitive !== false;
  const norm = (s: string) => (cs ? s : s.toLowerCase());
  const a = norm(actual);
  const values = (Array.isArray(f.value) ? f.value : [f.value]).map(norm);
  switch (f.operator) {
    case 'eq':
      return a === values[0];
    case 'ne':
      return a !== values[0];
    case 'contains':
      return values.some((v) => a.includes(v));
    case 'one_of':
      return values.includes(a);
    case 'not_in':
      return !values.includes(a);
  }
}

/** Whether a record passes a scorer's node filters (modality filters pass: the store does not know a record's modalities). */
export function passesFilters(filters: readonly NodeFilter[], r: Pick<LogRow, 'name' | 'user_metadata'>): boolean {
  for (const f of filters) {
    if (f.name === 'node_name' && !textMatch(f, r.name ?? '')) return false;
    if (f.name === 'metadata') {
      const v = r.user_metadata?.[f.key];
      const values = Array.isArray(f.value) ? f.value : [f.value];
      const ok =
        f.operator === 'eq' || f.operator === 'one_of'
          ? v !== undefined && values.includes(v)
          : f.operator === 'ne' || f.operator === 'not_in'
            ? v === undefined || !values.includes(v)
            : true;
      if (!ok) return false;
    }
  }
  return true;
}

/** A stable draw in [0, 1) per scorer and record (FNV-1a of both ids). */
export function draw(scorerId: string, recordId: string): number {
  let h = 0x811c9dc5;
  const s = `${scorerId}:${recordId}`;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) / 2 ** 32;
}

/** Whether the scorer applies to the record at all: its type, its filters, and complete. */
export function applies(plan: ScorerPlan, r: Pick<LogRow, 'type' | 'name' | 'user_metadata' | 'is_complete'>): boolean {
  return plan.types.has(r.type) && r.is_complete !== false && passesFilters(plan.filters, r);
}

/** Whether the record has the metric already: a value, or a status a scorer left. */
export function hasMetric(plan: ScorerPlan, r: Pick<LogRow, 'metrics' | 'extra'>): boolean {
  return r.metrics?.[plan.metric] !== undefined || storedScores(r.extra)[plan.metric] !== undefined;
}

/** Whether online scoring owes the record this metric. */
export function owed(plan: ScorerPlan, r: LogRow): boolean {
  return (
    r.seq > plan.enabledSeq &&
    applies(plan, r) &&
    (plan.sampleRate >= 1 || draw(plan.scorer.id, r.id) < plan.sampleRate) &&
    !hasMetric(plan, r)
  );
}
