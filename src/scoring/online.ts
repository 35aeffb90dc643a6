// Online scoring: records written into a run whose scorer settings enable scorers are scored in the
// background, never in the way of logging. Logging only notices what it wrote (a few map lookups per
// record) and queues the ids of records a scorer owes a metric; the queue is bounded, and what does
// not fit is not kept: the run is marked to be scanned from that record's seq instead. A worker scores
// queued records in batches, at full speed while logging is idle and for a small share of the time
// while it is busy, and scans marked runs for records that lack a metric they are owed. After a
// restart every run with enabled scorers is scanned from the seq its scorers were enabled at, so what
// a crash left unscored is found and scored; a result is written once, with the record's next version.
// A scan reads the records of a window whole and scores them as read, a batch per turn (no look-up by
// id); queued records are read by id.
import type { Level } from '../query/columns.js';
import type { LogRow } from '../record/record.js';
import { storedRows } from '../record/record-checks.js';
import { storedToWire } from '../record/row-codec.js';
import { storedScores } from '../record/scores.js';
import type { ScoringHost } from './host.js';
import { hasMetric, levelsOf, owed, typesAt, type EnabledPlans, type ScorerPlan } from './plans.js';
import type { Runnable } from './runtime.js';
import { SCAN_WINDOW } from './jobs.js';
import { scoreBatch, scoreRows, type Counts, type Work } from './score-batch.js';

export interface OnlineOptions {
  /** Record ids queued at most (default 50,000); beyond, runs are scanned instead. */
  queueLimit?: number;
  /** Records scored per batch (default 1,024). */
  batchSize?: number;
  /** Logging quiet for this long (ms) counts as idle (default 250). */
  idleMs?: number;
  /** Share of the time scoring may take while logging is busy (default 0.05: its writes cost CPU beyond it). */
  busyShare?: number;
  /** Seqs one scan step covers (default 20,000; its records are held whole until scored). */
  scanWindow?: number;
}

interface Pending {
  projectId: string;
  ids: Set<string>;
}

export class OnlineScoring {
  readonly #host: ScoringHost;
  readonly #plans: EnabledPlans;
  readonly #runnable: (plan: ScorerPlan) => Runnable;
  readonly #o: Required<OnlineOptions>;
  readonly #queue = new Map<string, Pending>();
  #queued = 0;
  /** Runs to scan, from a seq on. */
  readonly #dirty = new Map<string, { projectId: string; from: number }>();
  /** Records a scan read whole and that are still to score (ScoringHost.liveMark taken before the read). */
  #scanned: { runId: string; projectId: string; rows: LogRow[]; mark: number } | null = null;
  #lastIngest = 0;
  #wake: (() => void) | null = null;
  #closed = false;
  #loop: Promise<void> | null = null;
  #working = false;
  #idleWaiters: (() => void)[] = [];
  /** The pause in progress (close() ends it early). */
  #pause: { timer: NodeJS.Timeout; done: () => void } | null = null;
  /** Results written by online scoring, by status (for tests and benchmarks). */
  readonly counts: Record<string, number> = {};

  constructor(host: ScoringHost, plans: EnabledPlans, runnable: (plan: ScorerPlan) => Runnable, options: OnlineOptions = {}) {
    this.#host = host;
    this.#plans = plans;
    this.#runnable = runnable;
    this.#o = {
      queueLimit: options.queueLimit ?? 50_000,
      batchSize: options.batchSize ?? 1024,
      idleMs: options.idleMs ?? 250,
      busyShare: options.busyShare ?? 0.05,
      scanWindow: options.scanWindow ?? SCAN_WINDOW,
    };
  }

  /** Starts the worker, with every run that has scorers enabled marked for a scan (what a restart may have left). */
  start(): void {
    for (const { runId, projectId, plans } of this.#plans.runs()) {
      this.#mark(runId, projectId, Math.min(...plans.map((p) => p.enabledSeq)) + 1);
    }
    this.#loop = this.#run();
  }

  /** Marks a run to be scanned from `from` (records written without notice: bulk imports). */
  scanFrom(projectId: string, runId: string, from: number): void {
    if (this.#plans.of(runId).length === 0) return;
    this.#mark(runId, projectId, from);
    this.#signal();
  }

  #mark(runId: string, projectId: string, from: number): void {
    const d = this.#dirty.get(runId);
    if (!d || from < d.from) this.#dirty.set(runId, { projectId, from });
  }

  #work(plan: ScorerPlan): boolean {
    return 'run' in this.#runnable(plan);
  }

  /** Logging wrote these rows (their seqs assigned): queue those a scorer owes a metric. */
  notice(projectId: string, runId: string, rows: readonly LogRow[]): void {
    this.#lastIngest = Date.now();
    const plans = this.#plans.of(runId);
    if (plans.length === 0) return;
    let added = false;
    for (const r of rows) {
      if (!plans.some((p) => owed(p, r) && this.#work(p))) continue;
      if (this.#queued >= this.#o.queueLimit) {
        this.#mark(runId, projectId, r.seq);
        added = true;
        continue;
      }
      let q = this.#queue.get(runId);
      if (!q) this.#queue.set(runId, (q = { projectId, ids: new Set() }));
      if (!q.ids.has(r.id)) {
        q.ids.add(r.id);
        this.#queued++;
        added = true;
      }
    }
    if (added) this.#signal();
  }

  #signal(): void {
    const w = this.#wake;
    this.#wake = null;
    w?.();
  }

  /** Resolves once nothing is queued, no run is marked and no batch runs (tests, benchmarks, `score` CLI). */
  idle(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise((r) => this.#idleWaiters.push(r));
  }

  #isIdle(): boolean {
    return this.#queued === 0 && this.#dirty.size === 0 && this.#scanned === null && !this.#working;
  }

  /** What is still to do (records queued or read by a scan, runs marked for a scan). */
  get backlog(): { queued: number; scans: number } {
    return { queued: this.#queued + (this.#scanned?.rows.length ?? 0), scans: this.#dirty.size };
  }

  /** A pause that keeps the process alive (someone may be waiting for idle) and that close() cuts short. */
  #sleep(ms: number): Promise<void> {
    return new Promise<void>((done) => {
      this.#pause = { timer: setTimeout(done, ms), done };
    }).finally(() => {
      this.#pause = null;
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#signal();
    if (this.#pause) {
      clearTimeout(this.#pause.timer);
      this.#pause.done();
    }
    await this.#loop;
    for (const r of this.#idleWaiters.splice(0)) r();
  }

  async #run(): Promise<void> {
    while (!this.#closed) {
      if (this.#isIdle()) {
        for (const r of this.#idleWaiters.splice(0)) r();
        await new Promise<void>((r) => (this.#wake = r));
        continue;
      }
      const started = Date.now();
      this.#working = true;
      try {
        if (this.#queued > 0) await this.#scoreSome();
        else if (this.#scanned) await this.#scoreScanned();
        else await this.#scanSome();
      } catch (err) {
        if (this.#closed) break;
        process.emitWarning(`tracelake: online scoring: ${(err as Error).message}`);
        await this.#sleep(1000);
      } finally {
        this.#working = false;
      }
      // While logging is busy, scoring takes only its share of the time.
      const took = Date.now() - started;
      if (!this.#closed && Date.now() - this.#lastIngest < this.#o.idleMs) {
        await this.#sleep(Math.max(this.#o.idleMs / 10, (took * (1 - this.#o.busyShare)) / this.#o.busyShare));
      }
    }
  }

  /** The work of a run's enabled scorers that run here. */
  #works(runId: string): Work[] {
    return this.#plans.of(runId).flatMap((plan) => {
      const runnable = this.#runnable(plan);
      return 'run' in runnable ? [{ plan, runnable }] : [];
    });
  }

  #count(got: Counts): void {
    for (const [k, n] of Object.entries(got)) this.counts[k] = (this.counts[k] ?? 0) + n;
  }

  async #scoreSome(): Promise<void> {
    const [runId, q] = this.#queue.entries().next().value as [string, Pending];
    const ids: string[] = [];
    for (const id of q.ids) {
      ids.push(id);
      if (ids.length >= this.#o.batchSize) break;
    }
    for (const id of ids) q.ids.delete(id);
    this.#queued -= ids.length;
    if (q.ids.size === 0) this.#queue.delete(runId);
    const works = this.#works(runId);
    if (works.length === 0) return;
    const got = await scoreBatch(
      this.#host,
      q.projectId,
      runId,
      ids,
      (r) => works.filter((w) => owed(w.plan, r)),
      'online',
      (r, plan) => !hasMetric(plan, r),
    );
    this.#count(got);
  }

  /** One batch of the records the last scan read. */
  async #scoreScanned(): Promise<void> {
    const sc = this.#scanned!;
    const batch = sc.rows.splice(0, this.#o.batchSize);
    if (sc.rows.length === 0) this.#scanned = null;
    const works = this.#works(sc.runId);
    if (works.length === 0 || batch.length === 0) return;
    const got = await scoreRows(
      this.#host,
      sc.projectId,
      sc.runId,
      batch,
      sc.mark,
      (r) => works.filter((w) => owed(w.plan, r)),
      'online',
      (r, plan) => !hasMetric(plan, r),
    );
    this.#count(got);
  }

  /** One window of one marked run: the records lacking a metric one of its scorers owes, read whole to be scored. */
  async #scanSome(): Promise<void> {
    const [runId, d] = this.#dirty.entries().next().value as [string, { projectId: string; from: number }];
    const last = this.#host.lastSeq();
    const to = Math.min(last, d.from + this.#o.scanWindow - 1);
    const plans = this.#plans.of(runId).filter((p) => this.#work(p));
    if (plans.length > 0 && d.from <= to) {
      const byLevel = new Map<Level, ScorerPlan[]>();
      for (const p of plans) for (const l of levelsOf(p.types)) byLevel.set(l, [...(byLevel.get(l) ?? []), p]);
      const mark = this.#host.liveMark();
      const rows: LogRow[] = [];
      for (const [level, ps] of byLevel) {
        const types = [...new Set(ps.flatMap((p) => typesAt(level, p.types)))];
        const metrics = [...new Set(ps.map((p) => p.metric))];
        const got = await this.#host.matchRows(level, { projectId: d.projectId, runId }, {}, { from: d.from, to }, types, metrics, true);
        for (const row of storedRows(got).map(storedToWire)) {
          const scores = storedScores(row.extra);
          if (metrics.every((m) => scores[m] !== undefined)) continue;
          if (ps.some((p) => owed(p, row))) rows.push(row);
        }
      }
      if (rows.length > 0) this.#scanned = { runId, projectId: d.projectId, rows, mark };
    }
    // Later records are noticed as they are written; the scan ends at the seq it reached.
    const cur = this.#dirty.get(runId);
    if (cur === d) {
      if (to >= last || plans.length === 0) this.#dirty.delete(runId);
      else d.from = to + 1;
    }
  }
}
