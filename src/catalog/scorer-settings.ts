// Scorers enabled in a run: the catalog table `run_scorer_settings`, one row per run (id = run id).
// Writing the settings replaces the whole enabled set, as the hosted service's PATCH does. This is
// what the `enabled_in_run` sort reads, what projects/paginated's metric_id narrows log streams by,
// and what the query engine reads (through Catalog.enabledScorers) to list a scorer's metric column
// for a run before any record carries it.
import { invalid, type ValidationIssue, InvalidRequestError } from '../errors.js';
import type { RunScorerSettings, RunScorerSettingsBody, ScorerConfig, ScorerConfigInput } from '../schemas/scorer-settings.js';
import type { Scorer } from '../schemas/scorers.js';
import type { ScorerCatalog } from './scorers.js';
import type { CatalogTables } from './tables.js';
import type { ScorerRow, VersionRow } from './scorer-row.js';
import { versionView } from './scorer-row.js';

type Knobs = Omit<ScorerConfigInput, 'id' | 'name' | 'scorer_version'>;

/**
 * A stored entry: the scorer id, the pinned version id (or null for the default), the knobs, and the
 * highest record seq when it was enabled (online scoring scores the records written after that).
 */
export interface EnabledScorer extends Knobs {
  id: string;
  version_id: string | null;
  enabled_seq?: number;
}

/** The catalog as run scorer settings read it: its tables and its scorers. */
type SettingsCatalog = CatalogTables & { readonly scorers: ScorerCatalog };

export interface SettingsRow {
  id: string;
  project_id: string;
  scorers: EnabledScorer[];
  segment_filters: unknown[] | null;
  updated_at: string;
}

const KNOBS = [
  'model_name',
  'num_judges',
  'filters',
  'scoreable_node_types',
  'cot_enabled',
  'output_type',
  'input_type',
  'sample_rate',
] as const;

/** Copies one knob the client set (an absent knob stays absent in the stored entry). */
function copyKnob<K extends (typeof KNOBS)[number]>(to: Knobs, from: ScorerConfigInput, k: K): void {
  const v = from[k];
  if (v !== undefined) to[k] = v;
}

export function settingsRow(catalog: SettingsCatalog, runId: string): SettingsRow | undefined {
  return catalog.get<SettingsRow>('run_scorer_settings', runId.toLowerCase());
}

/** Ids of the scorers enabled under `id` (a run id; also used for playground ids, see scorer-list.ts). */
export function enabledScorerIds(catalog: SettingsCatalog, id: string): Set<string> {
  return new Set(settingsRow(catalog, id)?.scorers.map((s) => s.id) ?? []);
}

/** The scorer objects enabled in a run, in the order they were enabled. */
export function enabledScorerItems(catalog: SettingsCatalog, runId: string): Scorer[] {
  const out: Scorer[] = [];
  for (const e of settingsRow(catalog, runId)?.scorers ?? []) {
    const row = catalog.scorers.find(e.id);
    if (row) out.push(catalog.scorers.present(row, null));
  }
  return out;
}

export function readRunScorerSettings(catalog: SettingsCatalog, projectId: string, runId: string): RunScorerSettings {
  const run = catalog.run(catalog.project(projectId).id, runId);
  const row = settingsRow(catalog, run.id);
  return {
    run_id: run.id,
    scorers: (row?.scorers ?? []).flatMap((e) => present(catalog, e)),
    segment_filters: row?.segment_filters ?? null,
  };
}

/**
 * Replaces the run's enabled scorers. `lastSeq`: the store's highest record seq now; a scorer newly
 * enabled remembers it, one that stays enabled keeps the seq it had.
 */
export function writeRunScorerSettings(
  catalog: SettingsCatalog,
  projectId: string,
  runId: string,
  body: RunScorerSettingsBody,
  lastSeq = 0,
): RunScorerSettings {
  const project = catalog.project(projectId);
  const run = catalog.run(project.id, runId);
  const before = new Map((settingsRow(catalog, run.id)?.scorers ?? []).map((e) => [e.id, e.enabled_seq ?? 0]));
  if (body.run_id !== undefined && body.run_id.toLowerCase() !== run.id) {
    throw invalid(['body', 'run_id'], `run_id ${body.run_id} does not match the run in the path (${run.id})`, body.run_id);
  }
  const issues: ValidationIssue[] = [];
  const entries: EnabledScorer[] = [];
  const byMetric = new Map<string, number>();
  body.scorers.forEach((input, i) => {
    const at = ['body', 'scorers', i];
    const scorer = resolve(catalog, input, at, issues);
    if (!scorer) return;
    if (!scorer.is_global && !scorer.scope_project_ids.includes(project.id)) {
      issues.push({
        loc: [...at, 'id'],
        msg: `scorer "${scorer.name}" is scoped to other projects and is not available in project "${project.name}"`,
        type: 'value_error',
      });
      return;
    }
    if (entries.some((e) => e.id === scorer.id)) {
      issues.push({ loc: at, msg: `scorer "${scorer.name}" is listed twice`, type: 'value_error' });
      return;
    }
    const metric = scorer.metric_name ?? scorer.name;
    const clash = byMetric.get(metric);
    if (clash !== undefined) {
      issues.push({
        loc: at,
        msg: `scorer "${scorer.name}" writes metric "${metric}", as does the scorer at scorers.${clash}; enable only one of them`,
        type: 'value_error',
      });
      return;
    }
    byMetric.set(metric, i);
    const versionId = pinnedVersion(catalog, scorer, input, at, issues);
    const entry: EnabledScorer = { id: scorer.id, version_id: versionId, enabled_seq: before.get(scorer.id) ?? lastSeq };
    for (const k of KNOBS) copyKnob(entry, input, k);
    entries.push(entry);
  });
  if (issues.length > 0) throw new InvalidRequestError(issues);
  const row: SettingsRow = {
    id: run.id,
    project_id: project.id,
    scorers: entries,
    segment_filters: body.segment_filters ?? null,
    updated_at: new Date().toISOString(),
  };
  catalog.put('run_scorer_settings', row);
  return readRunScorerSettings(catalog, project.id, run.id);
}

function resolve(
  catalog: SettingsCatalog,
  input: ScorerConfigInput,
  at: (string | number)[],
  issues: ValidationIssue[],
): ScorerRow | undefined {
  if (input.id === undefined && input.name === undefined) {
    issues.push({ loc: at, msg: "give the scorer's id (or its name)", type: 'missing' });
    return undefined;
  }
  const byId = input.id !== undefined ? catalog.scorers.find(input.id) : undefined;
  if (input.id !== undefined && !byId) {
    issues.push({ loc: [...at, 'id'], msg: `no scorer with id ${input.id}`, type: 'value_error', input: input.id });
    return undefined;
  }
  if (input.name !== undefined) {
    const byName = catalog.scorers.byName(input.name);
    if (!byName) {
      issues.push({ loc: [...at, 'name'], msg: `no scorer named "${input.name}"`, type: 'value_error', input: input.name });
      return undefined;
    }
    if (byId && byId.id !== byName.id) {
      issues.push({
        loc: [...at, 'name'],
        msg: `scorer ${input.id} is named "${byId.name}", not "${input.name}"`,
        type: 'value_error',
        input: input.name,
      });
      return undefined;
    }
    return byName;
  }
  return byId;
}

function pinnedVersion(
  catalog: SettingsCatalog,
  scorer: ScorerRow,
  input: ScorerConfigInput,
  at: (string | number)[],
  issues: ValidationIssue[],
): string | null {
  const pin = input.scorer_version;
  if (pin == null || (pin.id === undefined && pin.version === undefined)) return null;
  const match = catalog.scorers
    .versions(scorer.id)
    .find((v) => (pin.id !== undefined ? v.id === pin.id.toLowerCase() : v.version === pin.version));
  if (!match) {
    issues.push({ loc: [...at, 'scorer_version'], msg: `scorer "${scorer.name}" has no such version`, type: 'value_error' });
    return null;
  }
  return match.id;
}

function present(catalog: SettingsCatalog, e: EnabledScorer): ScorerConfig[] {
  const row = catalog.scorers.find(e.id);
  if (!row) return [];
  const version = catalog.scorers.view.version(e.version_id ?? row.default_version_id) as VersionRow | null;
  const d = row.defaults;
  return [
    {
      id: row.id,
      name: row.name,
      scorer_type: row.scorer_type,
      model_type: row.model_type,
      metric_name: row.metric_name,
      model_name: e.model_name ?? version?.model_name ?? d?.model_name ?? null,
      num_judges: e.num_judges ?? version?.num_judges ?? d?.num_judges ?? null,
      filters: e.filters ?? d?.filters ?? null,
      scoreable_node_types: e.scoreable_node_types ?? row.scoreable_node_types,
      cot_enabled: e.cot_enabled ?? version?.cot_enabled ?? d?.cot_enabled ?? null,
      output_type: e.output_type ?? row.output_type,
      input_type: e.input_type ?? row.input_type,
      ...(e.sample_rate != null ? { sample_rate: e.sample_rate } : {}),
      scorer_version: versionView(version),
    },
  ];
}
