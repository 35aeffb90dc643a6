// store.scorers: scorers that run inside the store. Online, scorers enabled in a run score the records
// written into it (online.ts); on demand, a recompute job scores the records a filter selects
// (jobs.ts); library code defines scorers of its own (library.ts). Results are ordinary metrics,
// written as new versions of the records (score-batch.ts), their statuses shown in metric_info.
import { ConflictError, invalid, InvalidRequestError, type ValidationIssue } from '../errors.js';
import type { ScorerRow, VersionRow } from '../catalog/scorer-row.js';
import { settingsRow } from '../catalog/scorer-settings.js';
import type { Row } from '../db/database.js';
import type { LogRow } from '../record/record.js';
import { assertValid } from '../schemas/check.js';
import type { FilterRequest } from '../schemas/query.js';
import { RecomputeBody, type ScoreJob } from '../schemas/scoring.js';
import type { Scorer } from '../schemas/scorers.js';
import type { ScoringHost } from './host.js';
import { JudgeClient, type JudgeOptions } from './judge/client.js';
import { PRESET_PROMPTS, type JudgePrompt } from './judge/prompts.js';
import { ScoreJobs } from './jobs.js';
import { checkDefinition, fingerprintOf, libraryRunner, type ScorerDefinition } from './library.js';
import { OnlineScoring, type OnlineOptions } from './online.js';
import type { Runner } from './outcome.js';
import { applies, draw, EnabledPlans, planOf, type ScorerPlan } from './plans.js';
import { pythonRunner, type PythonOptions } from './python.js';
import { runnableOf, type Runnable } from './runtime.js';

export interface ScoringOptions extends OnlineOptions {
  /** Score records as they are written into runs with enabled scorers (default true). */
  online?: boolean;
  /** The OpenAI-compatible endpoint LLM judges ask; without it they are not computed. */
  judge?: JudgeOptions;
  /** Run Python code scorers in a python3 subprocess (off by default: it runs code sent over the network). */
  python?: boolean | PythonOptions;
}

export type { ScorerDefinition };

/** What a caller asks scoring on demand for (store.scorers.score). */
export interface ScoreRequest {
  projectId: string;
  /** The run (log stream, experiment or metrics-testing run) id. */
  runId: string;
  /** Scorers by name or id. */
  scorers: string[];
  /** Which records (filters and filter_tree, as a count takes them); all without. */
  filter?: FilterRequest;
  /** Also replace values the client logged under a scorer's metric (default false). */
  overwriteLogged?: boolean;
}

export class Scorers {
  readonly #host: ScoringHost;
  readonly #plans: EnabledPlans;
  readonly #online: OnlineScoring | null;
  readonly #jobs: ScoreJobs;
  readonly #judge: JudgeClient | null;
  readonly #python: PythonOptions | null;
  /** scorer id:fingerprint -> the runner of the function the library defined. */
  readonly #library = new Map<string, Runner>();
  #runnables = new WeakMap<ScorerPlan, Runnable>();

  constructor(host: ScoringHost, options: ScoringOptions = {}) {
    this.#host = host;
    this.#plans = new EnabledPlans(host.catalog);
    this.#judge = options.judge ? new JudgeClient(options.judge) : null;
    this.#python = options.python ? (options.python === true ? {} : options.python) : null;
    const runnable = (plan: ScorerPlan) => this.#runnable(plan);
    this.#online = options.online === false ? null : new OnlineScoring(host, this.#plans, runnable, options);
    this.#jobs = new ScoreJobs(host, runnable, options);
  }

  /** Starts online scoring (after the store has opened): what a restart left unscored is found first. */
  start(): void {
    this.#online?.start();
  }

  async close(): Promise<void> {
    await this.#online?.close();
    await this.#jobs.close();
  }

  // ------------------------------------------------------------------ what runs

  #runnable(plan: ScorerPlan): Runnable {
    let r = this.#runnables.get(plan);
    if (!r) {
      r = runnableOf(plan, {
        regexMatches: (texts, pattern, cs) => this.#host.regexMatches(texts, pattern, cs),
        library: (id, fp) => this.#library.get(`${id}:${fp}`) ?? null,
        python: (version) => this.#pythonFor(version),
        judge: (p) => this.#judgeFor(p),
      });
      this.#runnables.set(plan, r);
    }
    return r;
  }

  #pythonFor(version: VersionRow): Runnable {
    if (!this.#python)
      return { notComputed: 'Python code scorers run only when the operator turns the python3 runner on (--python-scorers)' };
    return { run: pythonRunner(version.code!, this.#python) };
  }

  #judgeFor(plan: ScorerPlan): Runnable {
    const s = plan.scorer;
    if (!this.#judge) return { notComputed: `${s.name} is judged by an LLM, and no judge is configured (--judge-url)` };
    if ((s.multimodal_capabilities ?? []).length > 0 || /_(vision|audio)$/.test(s.name))
      return { notComputed: `${s.name} judges images or audio, which the logs do not carry` };
    if (s.output_type === 'categorical' || s.output_type === 'multilabel' || s.output_type === 'boolean_multilabel')
      return { notComputed: `${s.name} gives categories, and tracelake's metrics are numbers` };
    let prompt: JudgePrompt | undefined;
    if (s.scorer_type === 'preset') prompt = PRESET_PROMPTS[s.name.replace(/_gpt$/, '')];
    else {
      const question = plan.version?.generated_scorer?.user_prompt ?? s.user_prompt;
      if (question) prompt = { question, shows: ['input', 'output', 'reference'] };
    }
    if (!prompt) return { notComputed: `tracelake has no judge prompt for ${s.name}` };
    return { run: this.#judge.runner(prompt, plan.modelName, plan.numJudges ?? 1) };
  }

  // ------------------------------------------------------------------ library scorers

  /**
   * Defines a code scorer in this process and registers it in the catalog under its name (a new
   * version when the function changed), so the API lists it and runs can enable it. Runs that enable
   * it are scanned for records written since they did.
   */
  define(def: ScorerDefinition): Scorer {
    this.#host.assertOpen();
    this.#host.assertWritable('defining a scorer');
    checkDefinition(def);
    const catalog = this.#host.catalog;
    const fp = fingerprintOf(def);
    const types = def.scoreableNodeTypes ?? ['llm'];
    const existing = catalog.scorers.byName(def.name.trim());
    let row: ScorerRow;
    if (existing) {
      const version = catalog.scorers.view.version(existing.default_version_id) as VersionRow | null;
      if (existing.scorer_type !== 'code' || !version?.library_fingerprint)
        throw new ConflictError('ALREADY_EXISTS', `a scorer named "${existing.name}" exists and is not one the library defines`);
      row = existing;
      if (version.library_fingerprint !== fp) {
        catalog.scorers.addVersion(existing.id, { scoreable_node_types: types, set_as_default: true }, null, fp);
        row = catalog.scorers.update(existing.id, {
          scoreable_node_types: types,
          description: def.description ?? existing.description,
          ...(def.aggregate ? { roll_up_method: def.aggregate, roll_up_config: { roll_up_methods: [def.aggregate] } } : {}),
        });
      }
    } else {
      row = catalog.scorers.create(
        {
          name: def.name.trim(),
          scorer_type: 'code',
          description: def.description ?? null,
          scoreable_node_types: types,
          output_type: def.outputType ?? 'percentage',
          ...(def.aggregate ? { roll_up_method: def.aggregate, roll_up_config: { roll_up_methods: [def.aggregate] } } : {}),
          tags: ['library'],
          version: { scoreable_node_types: types },
        },
        null,
        fp,
      );
    }
    this.#library.set(`${row.id}:${fp}`, libraryRunner(def.score));
    this.#runnables = new WeakMap();
    for (const run of this.#plans.runs()) {
      const p = run.plans.find((x) => x.scorer.id === row.id);
      if (p) this.#online?.scanFrom(run.projectId, run.runId, p.enabledSeq + 1);
    }
    return catalog.scorers.present(row, null);
  }

  // ------------------------------------------------------------------ online

  /** Logging wrote these rows: online scoring queues what its scorers owe (called by the write path). */
  notice(projectId: string, runId: string, rows: readonly LogRow[]): void {
    this.#online?.notice(projectId, runId, rows);
  }

  /** Records were written without notice from seq `from` on (a bulk import): scan them. */
  scanFrom(projectId: string, runId: string, from: number): void {
    this.#online?.scanFrom(projectId, runId, from);
  }

  /** Resolves once online scoring has caught up (nothing queued or left to scan). */
  idle(): Promise<void> {
    return this.#online?.idle() ?? Promise.resolve();
  }

  /** Online scoring's backlog, and the results it has written by status. */
  get online(): { queued: number; scans: number; counts: Record<string, number> } {
    return { ...(this.#online?.backlog ?? { queued: 0, scans: 0 }), counts: { ...(this.#online?.counts ?? {}) } };
  }

  /**
   * Statuses of metrics a stored record should carry and does not yet: 'pending' for a scorer enabled
   * in its run that will score it, 'not_computed' (with why) for one that cannot run here.
   */
  derivedStatuses(row: Row, known: ReadonlySet<string>): Record<string, Record<string, unknown>> | null {
    const plans = this.#plans.of(String(row['run_id']));
    if (plans.length === 0) return null;
    let out: Record<string, Record<string, unknown>> | null = null;
    const seq = Number(row['seq']);
    const view = {
      type: String(row['type']),
      name: (row['name'] as string | null) ?? '',
      is_complete: row['is_complete'] !== false,
      user_metadata: Object.fromEntries(
        ((row['user_metadata'] as { key: string; value: string }[] | null) ?? []).map((e) => [e.key, e.value]),
      ),
    };
    for (const plan of plans) {
      if (known.has(plan.metric) || !(seq > plan.enabledSeq) || !applies(plan, view)) continue;
      if (plan.sampleRate < 1 && draw(plan.scorer.id, String(row['id'])) >= plan.sampleRate) continue;
      const r = this.#runnable(plan);
      out ??= {};
      out[plan.metric] = 'run' in r ? { status_type: 'pending' } : { status_type: 'not_computed', message: r.notComputed };
    }
    return out;
  }

  // ------------------------------------------------------------------ on demand

  /** Starts a job scoring the records a filter selects with these scorers (see jobs.ts); poll it with job(). */
  score(req: ScoreRequest): ScoreJob {
    this.#host.assertOpen();
    this.#host.assertWritable('scoring records');
    const catalog = this.#host.catalog;
    const project = catalog.project(req.projectId);
    const run = catalog.run(project.id, req.runId);
    const plans = this.#plansFor(project.id, run.id, req.scorers, ['scorers']);
    const filter: FilterRequest = {
      ...(req.filter?.filters ? { filters: req.filter.filters } : {}),
      ...(req.filter?.filter_tree != null ? { filter_tree: req.filter.filter_tree } : {}),
    };
    for (const p of plans)
      for (const level of new Set([...p.types].map((t) => (t === 'trace' || t === 'session' ? t : 'span'))))
        this.#host.validateFilter(level as 'span', filter);
    return this.#jobs.start({
      projectId: project.id,
      runId: run.id,
      plans,
      filter,
      overwriteLogged: req.overwriteLogged === true,
      requestData: { scorers: req.scorers, ...filter, overwrite_logged: req.overwriteLogged === true },
    });
  }

  /** POST /projects/{project_id}/recompute_metrics, as the official client sends it. */
  recompute(projectId: string, body: RecomputeBody): ScoreJob {
    assertValid(RecomputeBody, body);
    const { projectId: pid, runId } = this.#host.resolveRun(projectId, body);
    return this.score({
      projectId: pid,
      runId,
      scorers: body.scorer_ids,
      filter: { filters: body.filters ?? null, filter_tree: body.filter_tree ?? null },
      overwriteLogged: body.overwrite_logged === true,
    });
  }

  job(id: string): ScoreJob {
    return this.#jobs.get(id);
  }

  jobs(projectId: string, runId: string): ScoreJob[] {
    return this.#jobs.list(projectId, runId);
  }

  /** Resolves with the job once it has finished. */
  wait(jobId: string): Promise<ScoreJob> {
    return this.#jobs.wait(jobId);
  }

  #plansFor(projectId: string, runId: string, refs: readonly string[], loc: (string | number)[]): ScorerPlan[] {
    const catalog = this.#host.catalog;
    const issues: ValidationIssue[] = [];
    const plans: ScorerPlan[] = [];
    const enabled = new Map((settingsRow(catalog, runId)?.scorers ?? []).map((e) => [e.id, e]));
    refs.forEach((ref, i) => {
      const row = typeof ref === 'string' ? (catalog.scorers.find(ref) ?? catalog.scorers.byName(ref)) : undefined;
      if (!row) {
        issues.push({ loc: ['body', ...loc, i], msg: `no scorer with id or name "${ref}"`, type: 'value_error', input: ref });
        return;
      }
      if (!row.is_global && !row.scope_project_ids.includes(projectId)) {
        issues.push({
          loc: ['body', ...loc, i],
          msg: `scorer "${row.name}" is not available in this project`,
          type: 'value_error',
          input: ref,
        });
        return;
      }
      if (plans.some((p) => p.scorer.id === row.id)) return;
      const { enabled_seq: _e, ...knobs } = enabled.get(row.id) ?? {};
      plans.push(planOf(catalog, row, knobs));
    });
    if (issues.length > 0) throw new InvalidRequestError(issues);
    if (plans.length === 0) throw invalid(['body', ...loc], 'name at least one scorer');
    return plans;
  }
}
