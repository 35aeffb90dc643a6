// The scorer catalog: the shipped presets (read-only, in memory) with registered llm and code
// scorers on top (persisted in the catalog tables `scorers` and `scorer_versions`). Names are
// unique across both, compared case-insensitively, because a scorer's name is how clients and run
// settings refer to it. A scorer is global (usable in every project) or scoped to a list of
// projects; deleting a project removes it from every scope, which can leave a scoped scorer usable
// nowhere (it is not silently made global). Creating a version makes it the latest; the default
// version moves only when asked (set_as_default, or PATCH default_version_id / default_version).
import { createHash, randomUUID } from 'node:crypto';
import { ConflictError, ForbiddenError, NotFoundError, invalid } from '../errors.js';
import type { CreateScorerBody, Scorer, ScorerVersion, ScorerVersionInput, UpdateScorerBody } from '../schemas/scorers.js';
import type { Project, User } from './rows.js';
import type { CatalogTables } from './tables.js';
import { putChange, type CatalogChange } from './catalog-log.js';
import type { Loc } from './list-match.js';
import { scorerPermissions, type ScorerAction } from './permissions.js';
import { loadPresets, type Presets } from './presets.js';
import { scorerView, type ScorerRow, type ScorerViewContext, type VersionRow } from './scorer-row.js';
import { checkRule } from './scorer-rule.js';
import { checkColorPicker, checkRollUp } from './scorer-validate.js';

/** Roll-up used when a scorer names an output type but no roll-up (what the presets do). */
function defaultRollUp(outputType: string | null | undefined): Pick<ScorerRow, 'roll_up_method' | 'roll_up_config'> {
  switch (outputType) {
    case 'boolean':
      return { roll_up_method: 'percentage_true', roll_up_config: { roll_up_methods: ['percentage_true', 'percentage_false'] } };
    case 'categorical':
    case 'multilabel':
    case 'boolean_multilabel':
      return { roll_up_method: 'category_count', roll_up_config: { roll_up_methods: ['category_count'] } };
    case 'percentage':
    case 'discrete':
    case 'count':
    case 'retrieved_chunk_list_boolean':
      return { roll_up_method: 'average', roll_up_config: { roll_up_methods: ['average', 'min', 'max'] } };
    default:
      return { roll_up_method: null, roll_up_config: null };
  }
}

export class ScorerCatalog {
  readonly #catalog: CatalogTables;
  readonly #presets: Presets;
  readonly #presetById: Map<string, ScorerRow>;
  /** lower-cased name -> scorer id, presets and registered scorers together. */
  readonly #byName = new Map<string, string>();
  readonly view: ScorerViewContext;

  constructor(catalog: CatalogTables) {
    this.#catalog = catalog;
    this.#presets = loadPresets();
    this.#presetById = new Map(this.#presets.rows.map((r) => [r.id, r]));
    for (const r of this.rows()) this.#byName.set(r.name.toLowerCase(), r.id);
    this.view = {
      version: (id) =>
        id === null ? null : (this.#presets.versions.get(id) ?? this.#catalog.get<VersionRow>('scorer_versions', id) ?? null),
      projectName: (id) => this.#catalog.get<Project>('projects', id)?.name ?? null,
      userSummary: (id) => this.#catalog.userSummary(id),
    };
  }

  /** Every scorer: presets first, then registered ones. */
  rows(): ScorerRow[] {
    return [...this.#presets.rows, ...this.#catalog.table<ScorerRow>('scorers')];
  }

  find(id: string): ScorerRow | undefined {
    const key = id.toLowerCase();
    return this.#presetById.get(key) ?? this.#catalog.get<ScorerRow>('scorers', key);
  }

  get(id: string): ScorerRow {
    const row = this.find(id);
    if (!row) throw new NotFoundError(`Scorer ${id} not found`);
    return row;
  }

  byName(name: string): ScorerRow | undefined {
    const id = this.#byName.get(name.toLowerCase());
    return id === undefined ? undefined : this.find(id);
  }

  isPreset(id: string): boolean {
    return this.#presetById.has(id.toLowerCase());
  }

  /** The scorer item for a caller, with the permissions for the actions asked. */
  present(row: ScorerRow, user: User | null, actions: readonly ScorerAction[] = []): Scorer {
    return scorerView(row, this.view, scorerPermissions(user, actions, row));
  }

  versions(scorerId: string): VersionRow[] {
    const row = this.get(scorerId);
    if (this.isPreset(row.id)) {
      const v = this.view.version(row.latest_version_id);
      return v ? [v] : [];
    }
    return this.#catalog
      .table<VersionRow>('scorer_versions')
      .filter((v) => v.scorer_id === row.id)
      .sort((a, b) => a.version - b.version);
  }

  /** Registers a scorer; `library`: the fingerprint of a function the library defines in-process (scoring/library.ts). */
  create(body: CreateScorerBody, userId: string | null, library: string | null = null): ScorerRow {
    const name = body.name.trim();
    if (name === '') throw invalid(['body', 'name'], 'String should have at least 1 character', body.name, 'string_too_short');
    this.#assertNameFree(name, null);
    const scorerType = body.scorer_type ?? 'llm';
    if (scorerType !== 'llm' && scorerType !== 'code') {
      throw invalid(
        ['body', 'scorer_type'],
        "Input should be one of 'llm', 'code' (presets are built in; luna scorers are fine-tuned elsewhere)",
        scorerType,
        'enum',
      );
    }
    const scope = this.#resolveScope(body.scope_projects ?? [], ['body', 'scope_projects']);
    const isGlobal = body.is_global ?? scope.length === 0;
    if (isGlobal && scope.length > 0)
      throw invalid(['body', 'is_global'], 'a global scorer is available in every project; give no scope_projects, or set is_global false');
    const outputType = body.output_type ?? body.defaults?.output_type ?? null;
    const rollUp =
      body.roll_up_config === undefined && body.roll_up_method === undefined
        ? defaultRollUp(outputType)
        : { roll_up_method: body.roll_up_method ?? null, roll_up_config: body.roll_up_config ?? null };
    checkRollUp(rollUp, ['body']);
    checkColorPicker(body.metric_color_picker_config, ['body', 'metric_color_picker_config']);
    checkColorPicker(body.color_threshold_config, ['body', 'color_threshold_config']);
    const required = this.#resolveRequired(body.required_scorers ?? [], ['body', 'required_scorers']);
    const now = new Date().toISOString();
    const id = randomUUID();
    const row: ScorerRow = {
      id,
      name,
      label: body.label ?? '',
      description: body.description ?? null,
      tags: body.tags ?? [],
      scorer_type: scorerType,
      model_type: body.model_type !== undefined ? body.model_type : scorerType,
      output_type: outputType,
      input_type: body.input_type ?? body.defaults?.input_type ?? null,
      scoreable_node_types: body.scoreable_node_types ?? body.defaults?.scoreable_node_types ?? null,
      multimodal_capabilities: body.multimodal_capabilities ?? [],
      required_scorers: required.map((r) => r.name),
      required_metric_ids: required.map((r) => r.id),
      deprecated: false,
      ground_truth: body.ground_truth ?? null,
      user_prompt: body.user_prompt ?? null,
      ...rollUp,
      included_fields: body.included_fields ?? [],
      defaults: body.defaults ?? null,
      invocation: body.invocation ?? null,
      metric_color_picker_config: body.metric_color_picker_config ?? null,
      color_threshold_config: body.color_threshold_config ?? null,
      metric_name: body.metric_name ?? name,
      is_global: isGlobal,
      scope_project_ids: scope,
      created_by: userId,
      created_at: now,
      updated_at: now,
      default_version_id: null,
      latest_version_id: null,
    };
    const version = this.#newVersion(row, 1, body.version ?? {}, userId, now, library);
    row.default_version_id = version.id;
    row.latest_version_id = version.id;
    this.#catalog.commit([putChange('scorers', row), putChange('scorer_versions', version)]);
    this.#byName.set(name.toLowerCase(), id);
    return row;
  }

  update(id: string, body: UpdateScorerBody): ScorerRow {
    const old = this.#registered(id);
    const next: ScorerRow = { ...old };
    const set = <K extends keyof ScorerRow>(key: K, value: ScorerRow[K] | undefined): void => {
      if (value !== undefined) next[key] = value;
    };
    if (body.name !== undefined) {
      const name = body.name.trim();
      if (name === '') throw invalid(['body', 'name'], 'String should have at least 1 character', body.name, 'string_too_short');
      this.#assertNameFree(name, old.id);
      next.name = name;
    }
    set('label', body.label === null ? '' : body.label);
    set('description', body.description);
    set('tags', body.tags === null ? [] : body.tags);
    set('model_type', body.model_type);
    set('output_type', body.output_type);
    set('input_type', body.input_type);
    set('scoreable_node_types', body.scoreable_node_types);
    set('multimodal_capabilities', body.multimodal_capabilities === null ? [] : body.multimodal_capabilities);
    set('ground_truth', body.ground_truth);
    set('user_prompt', body.user_prompt);
    set('roll_up_method', body.roll_up_method);
    set('roll_up_config', body.roll_up_config);
    set('included_fields', body.included_fields === null ? [] : body.included_fields);
    set('defaults', body.defaults);
    set('invocation', body.invocation);
    set('metric_color_picker_config', body.metric_color_picker_config);
    set('color_threshold_config', body.color_threshold_config);
    set('metric_name', body.metric_name === null ? next.name : body.metric_name);
    set('deprecated', body.deprecated === null ? false : body.deprecated);
    if (body.required_scorers !== undefined) {
      const required = this.#resolveRequired(body.required_scorers ?? [], ['body', 'required_scorers']);
      next.required_scorers = required.map((r) => r.name);
      next.required_metric_ids = required.map((r) => r.id);
    }
    checkRollUp(next, ['body']);
    checkColorPicker(body.metric_color_picker_config, ['body', 'metric_color_picker_config']);
    checkColorPicker(body.color_threshold_config, ['body', 'color_threshold_config']);
    this.#applyScope(next, body);
    const versionId = this.#defaultVersionFrom(old.id, body);
    if (versionId !== null) next.default_version_id = versionId;
    next.updated_at = new Date().toISOString();
    this.#catalog.commit([putChange('scorers', next)]);
    if (next.name !== old.name) {
      this.#byName.delete(old.name.toLowerCase());
      this.#byName.set(next.name.toLowerCase(), next.id);
    }
    return next;
  }

  addVersion(id: string, input: ScorerVersionInput, userId: string | null, library: string | null = null): VersionRow {
    const row = this.#registered(id);
    const latest = this.view.version(row.latest_version_id);
    const now = new Date().toISOString();
    const version = this.#newVersion(row, (latest?.version ?? 0) + 1, input, userId, now, library);
    const next: ScorerRow = { ...row, latest_version_id: version.id, updated_at: now };
    if (input.set_as_default) next.default_version_id = version.id;
    this.#catalog.commit([putChange('scorer_versions', version), putChange('scorers', next)]);
    return version;
  }

  /** Removes a registered scorer, its versions and its place in every run's scorer settings. */
  delete(id: string): void {
    const row = this.#registered(id);
    const changes: CatalogChange[] = [{ op: 'del', table: 'scorers', id: row.id }];
    for (const v of this.#catalog.table<VersionRow>('scorer_versions'))
      if (v.scorer_id === row.id) changes.push({ op: 'del', table: 'scorer_versions', id: v.id });
    for (const s of this.#catalog.table<{ id: string; scorers: { id: string }[] }>('run_scorer_settings')) {
      if (s.scorers.some((x) => x.id === row.id))
        changes.push(putChange('run_scorer_settings', { ...s, scorers: s.scorers.filter((x) => x.id !== row.id) }));
    }
    this.#catalog.commit(changes);
    this.#byName.delete(row.name.toLowerCase());
  }

  /** Catalog changes that take a deleted project out of every scorer's scope. */
  changesForDeletedProject(projectId: string): CatalogChange[] {
    return this.#catalog
      .table<ScorerRow>('scorers')
      .filter((s) => s.scope_project_ids.includes(projectId))
      .map((s) => putChange('scorers', { ...s, scope_project_ids: s.scope_project_ids.filter((p) => p !== projectId) }));
  }

  // ------------------------------------------------------------------ helpers

  #registered(id: string): ScorerRow {
    const row = this.get(id);
    if (this.isPreset(row.id))
      throw new ForbiddenError(`"${row.name}" is a built-in preset scorer and is read-only; register a scorer of your own to change it`);
    return row;
  }

  #assertNameFree(name: string, self: string | null): void {
    const holder = this.#byName.get(name.toLowerCase());
    if (holder !== undefined && holder !== self) {
      throw new ConflictError(
        'ALREADY_EXISTS',
        `A scorer named "${this.find(holder)?.name ?? name}" already exists (scorer names are unique, ignoring case)`,
      );
    }
  }

  #resolveScope(list: readonly { id: string }[], loc: Loc): string[] {
    const ids: string[] = [];
    list.forEach((p, i) => {
      const id = p.id.toLowerCase();
      if (!this.#catalog.get<Project>('projects', id)) throw invalid([...loc, i, 'id'], `project ${p.id} not found`, p.id);
      if (!ids.includes(id)) ids.push(id);
    });
    return ids;
  }

  #applyScope(next: ScorerRow, body: UpdateScorerBody): void {
    if (body.scope_projects != null) next.scope_project_ids = this.#resolveScope(body.scope_projects, ['body', 'scope_projects']);
    if (body.is_global != null) next.is_global = body.is_global;
    else if (body.scope_projects != null && body.scope_projects.length > 0) next.is_global = false;
    if (body.is_global === true && body.scope_projects == null) next.scope_project_ids = [];
    if (next.is_global && next.scope_project_ids.length > 0) {
      throw invalid(['body', 'is_global'], 'a global scorer is available in every project; give no scope_projects, or set is_global false');
    }
  }

  #resolveRequired(names: readonly string[], loc: Loc): ScorerRow[] {
    return names.map((n, i) => {
      const r = this.byName(n);
      if (!r) throw invalid([...loc, i], `no scorer named "${n}"`, n);
      return r;
    });
  }

  #defaultVersionFrom(scorerId: string, body: UpdateScorerBody): string | null {
    if (body.default_version_id !== undefined) {
      const v = this.#catalog.get<VersionRow>('scorer_versions', body.default_version_id.toLowerCase());
      if (!v || v.scorer_id !== scorerId)
        throw invalid(
          ['body', 'default_version_id'],
          `version ${body.default_version_id} is not a version of this scorer`,
          body.default_version_id,
        );
      return v.id;
    }
    if (body.default_version !== undefined) {
      const v = this.versions(scorerId).find((x) => x.version === body.default_version);
      if (!v) throw invalid(['body', 'default_version'], `this scorer has no version ${body.default_version}`, body.default_version);
      return v.id;
    }
    return null;
  }

  #newVersion(
    row: ScorerRow,
    number: number,
    input: ScorerVersionInput,
    userId: string | null,
    now: string,
    library: string | null = null,
  ): VersionRow {
    const id = randomUUID();
    const d = row.defaults;
    const base: ScorerVersion = {
      id,
      version: number,
      scorer_id: row.id,
      generated_scorer: null,
      registered_scorer: null,
      finetuned_scorer: null,
      model_name: input.model_name ?? d?.model_name ?? null,
      num_judges: input.num_judges ?? d?.num_judges ?? null,
      cot_enabled: input.cot_enabled ?? d?.cot_enabled ?? null,
      scoreable_node_types: input.scoreable_node_types ?? row.scoreable_node_types,
      output_type: input.output_type ?? row.output_type,
      input_type: input.input_type ?? row.input_type,
      created_at: now,
      created_by: userId,
    };
    if (row.scorer_type === 'code') {
      const code = input.code ?? null;
      base.registered_scorer = {
        id: randomUUID(),
        name: row.name,
        code_sha256: code === null ? null : createHash('sha256').update(code).digest('hex'),
        code_length: code === null ? 0 : code.length,
      };
      const rule = input.rule ?? null;
      if (rule !== null) checkRule(rule, ['body', ...(number === 1 ? ['version'] : []), 'rule']);
      return { ...base, code, ...(rule !== null ? { rule } : {}), ...(library !== null ? { library_fingerprint: library } : {}) };
    }
    if (input.rule != null)
      throw invalid(
        ['body', ...(number === 1 ? ['version'] : []), 'rule'],
        'a rule belongs to a code scorer (scorer_type code)',
        input.rule.kind,
      );
    const prompt = input.user_prompt ?? row.user_prompt ?? null;
    base.generated_scorer = {
      id: randomUUID(),
      name: row.name,
      chain_poll_template: { template: input.chain_poll_template ?? prompt ?? '' },
      instructions: input.instructions ?? null,
      user_prompt: prompt,
    };
    return base;
  }
}
