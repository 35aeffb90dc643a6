// The peer benchmark: every peer loads the same seeded span set, answers every question of
// bench/workload.ts several times, and the answers are checked to agree across peers before any
// figure is trusted. Peers run one after another (never two at once), so each one's timings and
// peak memory are its own; each regenerates the set from the seed while loading (generation is not
// timed), so nothing ever holds the whole set in memory and 10M spans stay feasible.
//
// Ratios are taken against the peer named 'tracelake' when one is passed in, else 'duckdb-raw'.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fmt, median, peakRssMiB, type Measurement } from '../common.js';
import { DEFAULT_SEED, QUESTIONS, spanBatches, type Question } from '../workload.js';
import { DuckDbRawPeer } from './duckdb-raw-peer.js';
import { PeerUnavailableError, type Answer, type Peer } from './peer.js';
import { PostgresPeer } from './postgres-peer.js';
import { SqlitePeer } from './sqlite-peer.js';
import { ensureTemplate, openCopy, type TemplateInfo } from './store-template.js';

export interface BenchPeersOptions {
  seed?: number;
  /** Spans per batch handed to `insert` (default 5,000). */
  batchSpans?: number;
  /** Timed runs per question (default 5), after `warmups` untimed ones (default 1). */
  runs?: number;
  warmups?: number;
  /** A question whose warm-up takes longer than this gets at most 3 timed runs (default 10 s). */
  slowMs?: number;
  /** The peers to run (default: duckdb-raw, sqlite, postgres). */
  peers?: Peer[];
  /** Added after `peers`: the tracelake-API peer, once it exists. */
  extra?: Peer | Peer[];
  questions?: readonly Question[];
  /** Let the PostgreSQL peer install Debian's server package when missing (default peers only). */
  installPostgres?: boolean;
  /** Parent folder for the peers' data (default: the OS temp folder). */
  tmpDir?: string;
  /** Record each peer's query plan for every question (EXPLAIN; not for deletes that would run). */
  plans?: boolean;
  /** A folder holding a settled tracelake store of this set, built there on first use and copied
   * for each library peer (see store-template.ts); their ingest is then not measured. */
  dataDir?: string;
  /** Progress lines (default: stderr). */
  log?: (line: string) => void;
}

/** The reference every ratio is taken against, in order of preference. */
export const BASELINES = ['tracelake', 'duckdb-raw'] as const;

export function defaultPeers(opts: { installPostgres?: boolean } = {}): Peer[] {
  return [new DuckDbRawPeer(), new SqlitePeer(), new PostgresPeer({ install: opts.installPostgres })];
}

interface Timed {
  question: Question;
  times: number[];
  /** Answer per variant index (non-mutating questions have one). */
  answers: Map<number, Answer>;
  plan?: string[];
  /** Set when a non-mutating question answered differently on different runs. */
  unstable?: string;
  error?: string;
}

interface PeerRun {
  name: string;
  /** Hash of every loaded span id in load order: proves each peer got the same set. */
  fingerprint: string;
  skipped?: string;
  failed?: string;
  spans: number;
  /** Loaded as a copy of the --data-dir template: ingest not measured. */
  copied?: boolean;
  loadMs: number;
  finishMs: number;
  diskBytes: number;
  peakMiB: number | null;
  serverPeakMiB: number | null;
  /** 1-minute load average when the peer finished (other work on the machine skews timings). */
  loadAvg?: number;
  questions: Timed[];
}

/** Starts a fresh peak-RSS reading for this process (Linux: writing 5 to clear_refs resets VmHWM). */
function resetPeak(): void {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
  } catch {
    // not Linux: the peak then covers the whole run, which the note in the table says
  }
}

const sameAnswer = (a: Answer, b: Answer): boolean =>
  a.count === b.count &&
  (a.ids === undefined) === (b.ids === undefined) &&
  (a.ids === undefined || (a.ids.length === b.ids!.length && a.ids.every((x, i) => x === b.ids![i])));

function describe(a: Answer): string {
  if (a.ids !== undefined) return `${a.ids.length} ids [${a.ids.slice(0, 3).join(', ')}${a.ids.length > 3 ? ', ...' : ''}]`;
  return `count ${a.count}`;
}

function difference(ref: Answer, got: Answer): string {
  if (ref.ids !== undefined && got.ids !== undefined) {
    const i = ref.ids.findIndex((x, k) => got.ids![k] !== x);
    const at = i === -1 ? Math.min(ref.ids.length, got.ids.length) : i;
    return `ids differ at position ${at}: expected ${ref.ids[at] ?? '(end)'}, got ${got.ids[at] ?? '(end)'} (${ref.ids.length} vs ${got.ids.length} ids)`;
  }
  return `expected ${describe(ref)}, got ${describe(got)}`;
}

type RunOptions = Required<Pick<BenchPeersOptions, 'seed' | 'batchSpans' | 'runs' | 'warmups' | 'slowMs' | 'plans'>> & {
  base: string;
  log: (s: string) => void;
  template: { dir: string; info: TemplateInfo } | null;
};

async function runPeer(peer: Peer, spans: number, questions: readonly Question[], opts: RunOptions): Promise<PeerRun> {
  const run: PeerRun = {
    name: peer.name,
    fingerprint: '',
    spans: 0,
    loadMs: 0,
    finishMs: 0,
    diskBytes: 0,
    peakMiB: null,
    serverPeakMiB: null,
    questions: [],
  };
  const dir = mkdtempSync(join(opts.base, `${peer.name}-`));
  const log = (s: string) => opts.log(`[${peer.name}] ${s}`);
  resetPeak();
  try {
    try {
      // A peer that adopts a copy of the template is not set up (its setup would open a store there).
      if (!(opts.template && peer.adopt)) await peer.setup(dir);
    } catch (err) {
      if (err instanceof PeerUnavailableError) {
        run.skipped = err.message;
        log(`SKIPPED: ${err.message}`);
        return run;
      }
      throw err;
    }
    let genMs = 0;
    const hash = createHash('sha256');
    let t = performance.now();
    if (opts.template && peer.adopt) {
      await peer.adopt(await openCopy(opts.template.dir, opts.template.info, dir));
      run.copied = true;
      run.spans = opts.template.info.loaded ?? opts.template.info.spans;
    }
    for (const batch of run.copied ? [] : spanBatches({ spans, seed: opts.seed, batchSpans: opts.batchSpans })) {
      for (const r of batch.rows) hash.update(r.id);
      const t1 = performance.now();
      genMs += t1 - t;
      await peer.insert(batch);
      t = performance.now();
      run.loadMs += t - t1;
      run.spans += batch.rows.length;
    }
    run.fingerprint = run.copied ? opts.template!.info.fingerprint : hash.digest('hex').slice(0, 16);
    t = performance.now();
    await peer.finishLoad();
    run.finishMs = performance.now() - t;
    log(
      `loaded ${run.spans} spans in ${((run.loadMs + run.finishMs) / 1000).toFixed(1)} s (+${(genMs / 1000).toFixed(1)} s generating, not timed)`,
    );
    run.diskBytes = await peer.diskBytes();
    // Deletes change the data: they go last, and each run deletes a fresh variant.
    const ordered = [...questions.filter((q) => !q.mutates), ...questions.filter((q) => q.mutates)];
    for (const q of ordered) run.questions.push(await timeQuestion(peer, q, opts, log));
    run.peakMiB = peakRssMiB();
    run.loadAvg = loadavg()[0]!;
    const server = (peer.serverPids?.() ?? []).map((p) => peakRssMiB(p)).filter((x): x is number => x !== null);
    run.serverPeakMiB = server.length > 0 ? Math.max(...server) : null;
  } catch (err) {
    run.failed = (err as Error).stack ?? String(err);
    log(`FAILED: ${(err as Error).message}`);
  } finally {
    await peer.close().catch((err: unknown) => log(`close failed: ${(err as Error).message}`));
    rmSync(dir, { recursive: true, force: true });
  }
  return run;
}

async function timeQuestion(peer: Peer, q: Question, opts: RunOptions, log: (s: string) => void): Promise<Timed> {
  const timed: Timed = { question: q, times: [], answers: new Map() };
  if (opts.plans && peer.plan) timed.plan = await peer.plan(q, 0).catch((err: unknown) => [`no plan: ${(err as Error).message}`]);
  let runs = opts.runs;
  const total = () => opts.warmups + runs;
  try {
    for (let i = 0; i < total(); i++) {
      const variant = q.mutates ? i : 0;
      const t = performance.now();
      const a = await peer.ask(q, variant);
      const ms = performance.now() - t;
      if (i < opts.warmups) {
        if (ms > opts.slowMs) runs = Math.min(runs, 3);
      } else timed.times.push(ms);
      const prev = timed.answers.get(variant);
      if (prev === undefined) timed.answers.set(variant, a);
      else if (!sameAnswer(prev, a)) timed.unstable = `run ${i}: ${difference(prev, a)}`;
    }
    log(`${q.id}: median ${fmt(median(timed.times))} ms over ${timed.times.length} runs (${describe(timed.answers.get(0)!)})`);
  } catch (err) {
    timed.error = (err as Error).message;
    log(`${q.id}: ERROR ${timed.error}`);
  }
  return timed;
}

/**
 * Loads every peer with the same `spans`-span set and asks it every question; returns measurements
 * per peer (keyed by peer name) plus `agreement`, one entry per question saying whether all peers
 * that answered gave the same answers (value 1) or not (value 0, with the difference).
 */
export async function benchPeers(spans: number, options: BenchPeersOptions = {}): Promise<Record<string, Measurement[]>> {
  const log = options.log ?? ((s: string) => process.stderr.write(`${s}\n`));
  const questions = options.questions ?? QUESTIONS;
  const extra = options.extra === undefined ? [] : Array.isArray(options.extra) ? options.extra : [options.extra];
  const peers = [...(options.peers ?? defaultPeers(options)), ...extra];
  const names = peers.map((p) => p.name);
  if (new Set(names).size !== names.length) throw new Error(`peer names must be unique: ${names.join(', ')}`);
  const base = mkdtempSync(join(options.tmpDir ?? tmpdir(), 'tracelake-peers-'));
  const opts = {
    seed: options.seed ?? DEFAULT_SEED,
    batchSpans: options.batchSpans ?? 5000,
    runs: options.runs ?? 5,
    warmups: options.warmups ?? 1,
    slowMs: options.slowMs ?? 10_000,
    plans: options.plans ?? false,
    base,
    log,
    template: null as RunOptions['template'],
  };
  if (options.dataDir !== undefined) {
    opts.template = { dir: options.dataDir, info: await ensureTemplate(options.dataDir, spans, opts.seed, opts.batchSpans, log) };
  }
  const runs: PeerRun[] = [];
  try {
    for (const peer of peers) runs.push(await runPeer(peer, spans, questions, opts));
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
  return report(runs, questions, log);
}

function report(runs: PeerRun[], questions: readonly Question[], log: (s: string) => void): Record<string, Measurement[]> {
  const answered = runs.filter((r) => !r.skipped && !r.failed);
  const baseline = BASELINES.map((b) => answered.find((r) => r.name === b)).find((r) => r !== undefined) ?? answered[0];
  const medianOf = (r: PeerRun | undefined, id: string): number | null => {
    const t = r?.questions.find((x) => x.question.id === id);
    return t && !t.error && t.times.length > 0 ? median(t.times) : null;
  };
  const out: Record<string, Measurement[]> = {};

  // Agreement, question by question: every peer against the baseline (or the first that answered).
  const agreement: Measurement[] = [];
  for (const q of questions) {
    const problems: string[] = [];
    let compared = 0;
    let reference: { peer: string; answers: Map<number, Answer> } | null = null;
    for (const r of [baseline, ...answered.filter((x) => x !== baseline)]) {
      const t = r?.questions.find((x) => x.question.id === q.id);
      if (!r || !t) continue;
      if (t.error) {
        problems.push(`${r.name} failed: ${t.error}`);
        continue;
      }
      if (t.unstable) problems.push(`${r.name} answered differently between runs: ${t.unstable}`);
      if (reference === null) {
        reference = { peer: r.name, answers: t.answers };
        continue;
      }
      compared++;
      // A slow peer gets fewer timed runs, so fewer delete variants: compare the variants both answered.
      let common = 0;
      for (const [variant, ref] of reference.answers) {
        const got = t.answers.get(variant);
        if (got === undefined) continue;
        common++;
        if (!sameAnswer(ref, got)) problems.push(`${r.name} vs ${reference.peer}, variant ${variant}: ${difference(ref, got)}`);
      }
      if (common === 0) problems.push(`${r.name} and ${reference.peer} answered no variant in common`);
    }
    const ok = problems.length === 0;
    const first = reference?.answers.get(0);
    agreement.push({
      name: q.title,
      value: ok ? 1 : 0,
      unit: 'agree',
      question: q.id,
      peers_compared: compared + (reference ? 1 : 0),
      answer: first ? describe(first) : 'none',
      ...(ok ? {} : { problems: problems.join('; ') }),
    });
    if (!ok) log(`\n!!! DISAGREEMENT on ${q.id}: ${problems.join('; ')}\n`);
  }

  // The data itself: every peer that loaded must have loaded the same spans.
  const prints = new Set(answered.map((r) => `${r.spans}:${r.fingerprint}`));
  agreement.unshift({
    name: 'same span set loaded',
    value: prints.size <= 1 ? 1 : 0,
    unit: 'agree',
    question: 'data',
    peers_compared: answered.length,
    answer: `${answered[0]?.spans ?? 0} spans, ids sha256 ${answered[0]?.fingerprint ?? ''}`,
    ...(prints.size <= 1 ? {} : { problems: answered.map((r) => `${r.name}: ${r.spans} spans ${r.fingerprint}`).join('; ') }),
  });
  if (prints.size > 1) log(`\n!!! PEERS LOADED DIFFERENT DATA: ${String(agreement[0]!['problems'])}\n`);

  for (const r of runs) {
    if (r.skipped || r.failed) {
      out[r.name] = [{ name: r.skipped ? 'skipped' : 'failed', value: 0, unit: '', reason: r.skipped ?? r.failed }];
      continue;
    }
    const ms: Measurement[] = [];
    const ingestS = (r.loadMs + r.finishMs) / 1000;
    const baseIngest = baseline && baseline.spans > 0 ? baseline.spans / ((baseline.loadMs + baseline.finishMs) / 1000) : null;
    const rate = r.spans / ingestS;
    if (r.copied)
      ms.push({
        name: 'ingest',
        value: NaN,
        unit: 'spans/s',
        data: r.fingerprint,
        spans: r.spans,
        note: 'copied from the --data-dir template, not measured',
        finish_seconds: r.finishMs / 1000,
      });
    else
      ms.push({
        name: 'ingest',
        value: rate,
        unit: 'spans/s',
        data: r.fingerprint,
        spans: r.spans,
        seconds: ingestS,
        finish_seconds: r.finishMs / 1000,
        ratio: baseIngest ? baseIngest / rate : null,
      });
    for (const t of r.questions) {
      const agree = agreement.find((a) => a['question'] === t.question.id);
      if (t.error) {
        ms.push({ name: t.question.title, value: NaN, unit: 'ms', question: t.question.id, error: t.error });
        continue;
      }
      const m = median(t.times);
      const ref = medianOf(baseline, t.question.id);
      ms.push({
        name: t.question.title,
        value: m,
        unit: 'ms',
        question: t.question.id,
        min: Math.min(...t.times),
        max: Math.max(...t.times),
        runs: t.times.length,
        ratio: ref ? m / ref : null,
        agree: agree?.value === 1,
        answer: describe(t.answers.get(0)!),
        ...(t.plan ? { plan: t.plan } : {}),
      });
    }
    ms.push({ name: 'disk per span', value: r.diskBytes / r.spans, unit: 'bytes', total_bytes: r.diskBytes });
    ms.push({
      name: 'peak RSS (this process)',
      value: r.peakMiB ?? NaN,
      unit: 'MiB',
      ...(r.serverPeakMiB !== null ? { server_process_peak_mib: r.serverPeakMiB } : {}),
    });
    ms.push({ name: 'machine load average (1 min) at end', value: r.loadAvg ?? NaN, unit: 'load' });
    out[r.name] = ms;
  }
  out['agreement'] = agreement;
  return out;
}

/** A Markdown table: one row per measurement, one column per peer ("median (min-max) xratio"). */
export function peersTable(results: Record<string, Measurement[]>): string {
  const peers = Object.keys(results).filter((k) => k !== 'agreement');
  const agreement = results['agreement'] ?? [];
  const baseline = BASELINES.find((b) => results[b] && results[b]![0]?.name !== 'skipped' && results[b]![0]?.name !== 'failed') ?? peers[0];
  const lines = [`| measurement | ${peers.join(' | ')} | agree |`, `|---|${peers.map(() => '---:').join('|')}|---|`];
  const cell = (m: Measurement | undefined): string => {
    if (!m) return '';
    if (m['error']) return `error: ${String(m['error']).slice(0, 60)}`;
    let s = `${fmt(m.value)}`;
    if (typeof m['min'] === 'number' && typeof m['max'] === 'number') s += ` (${fmt(m['min'])}–${fmt(m['max'])})`;
    const r = m['ratio'];
    if (typeof r === 'number' && Number.isFinite(r)) s += ` ×${r >= 0.1 || r === 0 ? r.toFixed(2) : r.toPrecision(2)}`;
    return s;
  };
  const rowNames: { name: string; unit: string; question?: string }[] = [];
  for (const p of peers) {
    for (const m of results[p]!) {
      if (m.name === 'skipped' || m.name === 'failed') continue;
      if (!rowNames.some((r) => r.name === m.name))
        rowNames.push({ name: m.name, unit: m.unit, question: m['question'] as string | undefined });
    }
  }
  for (const row of rowNames) {
    const key = row.name === 'ingest' ? 'data' : row.question;
    const agree = key ? agreement.find((a) => a['question'] === key) : undefined;
    const mark =
      agree === undefined
        ? ''
        : agree.value === 1
          ? `yes (${String(agree['answer']).replace(/ \[.*$/, '')})`
          : `**NO**: ${String(agree['problems'])}`;
    lines.push(
      `| ${row.name} (${row.unit}) | ${peers.map((p) => cell(results[p]!.find((m) => m.name === row.name))).join(' | ')} | ${mark} |`,
    );
  }
  const notes: string[] = [];
  for (const p of peers) {
    const first = results[p]![0];
    if (first && (first.name === 'skipped' || first.name === 'failed'))
      notes.push(`- **${p} ${first.name}**: ${String(first['reason']).split('\n')[0]}`);
    const mem = results[p]!.find((m) => m.name === 'peak RSS (this process)');
    if (mem && typeof mem['server_process_peak_mib'] === 'number')
      notes.push(`- ${p}: largest server process peaked at ${fmt(mem['server_process_peak_mib'])} MiB (shared buffers included).`);
  }
  notes.push(
    `- Latencies in ms: median (min–max) of the timed runs; ×ratio is median / ${baseline}'s median (for ingest, ${baseline}'s rate / this rate).`,
  );
  return `${lines.join('\n')}\n\n${notes.join('\n')}\n`;
}
