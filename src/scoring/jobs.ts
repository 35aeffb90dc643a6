// Recompute jobs: score every record a filter selects among those each scorer scores (its scoreable
// node types), at the level their types live at, exactly as a count with the same filter selects
// them. A job walks the run in windows of seq, as of when it started, then once over what was written
// since (records rewritten meanwhile) without scoring again what it already scored. Values the client
// logged under a scorer's metric are kept unless asked. Jobs run one at a time, in memory: one cut
// short by a restart is not resumed (its progress says how far it got; start it again).
import { randomUUID } from 'node:crypto';
import { NotFoundError } from '../errors.js';
import type { Level } from '../query/columns.js';
import type { LogRow } from '../record/record.js';
import { storedRows } from '../record/record-checks.js';
import { storedToWire } from '../record/row-codec.js';
import { storedScores } from '../record/scores.js';
import type { FilterRequest } from '../schemas/query.js';
import type { ScoreJob } from '../schemas/scoring.js';
import type { ScoringHost } from './host.js';
import { levelsOf, typesAt, type ScorerPlan } from './plans.js';
import type { Runnable } from './runtime.js';
import { scoreRows, type Counts, type Work } from './score-batch.js';

export interface JobRequest {
  projectId: string;
  runId: string;
  plans: readonly ScorerPlan[];
  filter: FilterRequest;
  /** Replace values the client logged under a scorer's metric too. */
  overwriteLogged: boolean;
  /** What the request said (shown as the job's request_data). */
  requestData: Record<string, unknown>;
}

const KEEP_FINISHED = 1000;

/** Seqs one scan covers: its matching records are held whole until scored. */
export const SCAN_WINDOW = 20_000;

export class ScoreJobs {
  readonly #host: ScoringHost;
  readonly #runnable: (plan: ScorerPlan) => Runnable;
  readonly #jobs = new Map<string, ScoreJob>();
  readonly #done = new Map<string, Promise<ScoreJob>>();
  #chain: Promise<unknown> = Promise.resolve();
  #closed = false;
  readonly #batchSize: number;
  readonly #window: number;

  constructor(host: ScoringHost, runnable: (plan: ScorerPlan) => Runnable, options: { batchSize?: number; scanWindow?: number } = {}) {
    this.#host = host;
    this.#runnable = runnable;
    this.#batchSize = options.batchSize ?? 1024;
    this.#window = options.scanWindow ?? SCAN_WINDOW;
  }

  /** Queues a job; it runs after those before it. */
  start(req: JobRequest): ScoreJob {
    const now = new Date().toISOString();
    const job: ScoreJob = {
      id: randomUUID(),
      job_name: 'recompute_metrics',
      project_id: req.projectId,
      run_id: req.runId,
      status: 'pending',
      created_at: now,
      updated_at: now,
      processing_started: null,
      completed_at: null,
      failed_at: null,
      retries: 0,
      request_data: req.requestData,
      error_message: null,
      progress_message: 'waiting for the jobs before it',
      steps_completed: 0,
      steps_total: 0,
      progress_percent: 0,
      counts: {},
    };
    this.#jobs.set(job.id, job);
    const run = this.#chain.then(() => this.#run(job, req));
    this.#chain = run.catch(() => undefined);
    this.#done.set(
      job.id,
      run.then(() => job),
    );
    this.#forgetOld();
    return { ...job };
  }

  get(id: string): ScoreJob {
    const job = this.#jobs.get(id.toLowerCase());
    if (!job) throw new NotFoundError(`Job ${id} not found`);
    return { ...job, counts: { ...job.counts } };
  }

  list(projectId: string, runId: string): ScoreJob[] {
    return [...this.#jobs.values()].filter((j) => j.project_id === projectId && j.run_id === runId).map((j) => this.get(j.id));
  }

  /** Resolves with the job once it has finished (completed or failed). */
  async wait(id: string): Promise<ScoreJob> {
    this.get(id);
    await this.#done.get(id.toLowerCase());
    return this.get(id);
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#chain;
  }

  #forgetOld(): void {
    if (this.#jobs.size <= KEEP_FINISHED) return;
    for (const [id, j] of this.#jobs) {
      if (this.#jobs.size <= KEEP_FINISHED) break;
      if (j.status === 'completed' || j.status === 'failed') {
        this.#jobs.delete(id);
        this.#done.delete(id);
      }
    }
  }

  #touch(job: ScoreJob, patch: Partial<ScoreJob>): void {
    Object.assign(job, patch, { updated_at: new Date().toISOString() });
    job.progress_percent =
      job.steps_total === 0 ? (job.status === 'completed' ? 100 : 0) : Math.min(100, (100 * job.steps_completed) / job.steps_total);
  }

  async #run(job: ScoreJob, req: JobRequest): Promise<void> {
    this.#touch(job, {
      status: 'processing',
      processing_started: new Date().toISOString(),
      progress_message: 'counting the records to score',
    });
    try {
      const works: Work[] = req.plans.map((plan) => ({ plan, runnable: this.#runnable(plan) }));
      const levels = levelsOf(works.flatMap((w) => [...w.plan.types]));
      const scope = { projectId: req.projectId, runId: req.runId };
      let total = 0;
      for (const level of levels) total += await this.#host.count(level, scope, withTypes(req.filter, level, typesOfLevel(works, level)));
      this.#touch(job, { steps_total: total, progress_message: `scoring ${total} record${total === 1 ? '' : 's'}` });
      const first = this.#host.lastSeq();
      for (const level of levels) await this.#walk(job, req, works, level, 0, first);
      // Records rewritten meanwhile have new seqs: one pass over what was written since.
      const last = this.#host.lastSeq();
      if (last > first) for (const level of levels) await this.#walk(job, req, works, level, first + 1, last);
      this.#touch(job, { status: 'completed', completed_at: new Date().toISOString(), progress_message: summary(job.counts) });
    } catch (err) {
      this.#touch(job, { status: 'failed', failed_at: new Date().toISOString(), error_message: (err as Error).message });
    }
  }

  async #walk(job: ScoreJob, req: JobRequest, works: Work[], level: Level, from: number, to: number): Promise<void> {
    const types = typesOfLevel(works, level);
    const atLevel = works.filter((w) => typesAt(level, w.plan.types).length > 0);
    const choose = (r: LogRow): Work[] => {
      const scores = storedScores(r.extra);
      const out: Work[] = [];
      for (const w of atLevel) {
        if (!w.plan.types.has(r.type)) continue;
        const mine = scores[w.plan.metric];
        if (mine?.by === job.id) continue; // scored by this job already (seen again after its rewrite)
        if (!req.overwriteLogged && mine === undefined && r.metrics?.[w.plan.metric] !== undefined) {
          add(job.counts, 'skipped');
          continue;
        }
        out.push(w);
      }
      return out;
    };
    for (let lo = from; lo <= to; lo += this.#window) {
      if (this.#closed) throw new Error('the store closed before the job finished');
      const hi = Math.min(to, lo + this.#window - 1);
      // The window's records whole, in one scan: scored as read, with no look-up by id.
      const mark = this.#host.liveMark();
      const rows = storedRows(
        await this.#host.matchRows(
          level,
          { projectId: req.projectId, runId: req.runId },
          req.filter,
          { from: lo, to: hi },
          types,
          [],
          true,
        ),
      ).map(storedToWire);
      for (let i = 0; i < rows.length; i += this.#batchSize) {
        const batch = rows.slice(i, i + this.#batchSize);
        const got = await scoreRows(
          this.#host,
          req.projectId,
          req.runId,
          batch,
          mark,
          choose,
          job.id,
          (r, plan) => storedScores(r.extra)[plan.metric]?.by !== job.id,
        );
        for (const [k, n] of Object.entries(got)) add(job.counts, k, n);
        this.#touch(job, { steps_completed: job.steps_completed + (from === 0 ? batch.length : 0) });
      }
    }
  }
}

function add(counts: Counts, key: string, n = 1): void {
  counts[key] = (counts[key] ?? 0) + n;
}

function typesOfLevel(works: readonly Work[], level: Level): string[] {
  return [...new Set(works.flatMap((w) => typesAt(level, w.plan.types)))];
}

/** The filter, narrowed at span level to the scorers' span types (traces and sessions have one type). */
export function withTypes(filter: FilterRequest, level: Level, types: readonly string[]): FilterRequest {
  if (level !== 'span') return filter;
  const typeFilter = { column_id: 'type', operator: 'one_of', value: [...types], type: 'text' } as NonNullable<
    FilterRequest['filters']
  >[number];
  return { ...filter, filters: [...(filter.filters ?? []), typeFilter] };
}

function summary(counts: Counts): string {
  const parts = Object.entries(counts)
    .filter(([k]) => k !== 'already')
    .map(([k, n]) => `${n} ${k}`);
  return parts.length > 0 ? `done: ${parts.join(', ')}` : 'done: no record to score';
}
