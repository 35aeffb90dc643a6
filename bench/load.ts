// Load on loopback: concurrent clients logging (reliable and not), searching, counting and deleting
// against a real server for a bounded time. Every request must succeed, every delete must remove
// exactly the batch it names, and at the end every logged record is accounted for: logged - deleted =
// counted, by count and by a full walk of the ids, live and after reopening the folder. Reports
// requests, records checked, errors (must be zero), latencies and memory (RSS, sampled).
//
//   node --import tsx bench/load.ts --duration 120 [--loggers 4 --searchers 2 --counters 2 --deleters 1]
//   (or: npm run build && node dist/bench/load.js --duration 120)
// The test suite runs the same function for a fixed number of requests (test/server/load.test.ts).
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { TraceStore } from '../src/engine/trace-store.js';
import { buildServer } from '../src/server/build-server.js';
import { countSpans, generateTraces, type GenTrace } from '../test/support/generator.js';
import { peakRssMiB } from './common.js';

export interface LoadOptions {
  durationSec: number;
  /** Requests of each kind to send, each kind stopping at its count (the duration still ends all). */
  stopAfter?: { log: number; search: number; count: number; delete: number };
  loggers?: number;
  searchers?: number;
  counters?: number;
  deleters?: number;
  /** Traces per log request (default 20, about 150 spans). */
  batchTraces?: number;
  seed?: number;
  /** Data folder (default: a temporary one, removed afterwards). */
  dir?: string;
  /** Rows in memory before a seal (default 20,000, so a run seals often). */
  sealRows?: number;
  progress?: (line: string) => void;
}

interface Latency {
  n: number;
  total: number;
  all: number[];
}

export interface LoadReport {
  seconds: number;
  clients: { loggers: number; searchers: number; counters: number; deleters: number };
  requests: Record<'log' | 'search' | 'count' | 'delete' | 'total', number>;
  errors: number;
  errorSamples: string[];
  logged: { batches: number; traces: number; spans: number };
  deleted: { batches: number; traces: number; spans: number };
  counted: { traces: number; spans: number; sessions: number };
  expected: { traces: number; spans: number; sessions: number };
  recordsChecked: number;
  accounted: boolean;
  reopened: { ok: boolean; ms: number };
  rssMiB: { start: number; peak: number; end: number };
  latencyMs: Record<'log' | 'search' | 'count' | 'delete', { p50: number; p95: number; p99: number; max: number }>;
  spansPerSec: number;
}

interface Batch {
  tag: string;
  runId: string;
  traces: string[];
  spans: number;
  deleted: boolean;
  deleting: boolean;
}

const MiB = (n: number) => Math.round(n / 2 ** 20);

function pct(xs: number[], p: number): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! * 10) / 10;
}

export async function runLoad(options: LoadOptions): Promise<LoadReport> {
  const clients = {
    loggers: options.loggers ?? 4,
    searchers: options.searchers ?? 2,
    counters: options.counters ?? 2,
    deleters: options.deleters ?? 1,
  };
  const batchTraces = options.batchTraces ?? 20;
  const seed = options.seed ?? 2026;
  const say = options.progress ?? (() => undefined);
  const ownDir = options.dir === undefined;
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'tracelake-load-'));
  const rss = { start: MiB(process.memoryUsage().rss), peak: 0, end: 0 };
  const sampler = setInterval(() => (rss.peak = Math.max(rss.peak, MiB(process.memoryUsage().rss))), 200);
  let store = await TraceStore.open(dir, { sealRows: options.sealRows ?? 20_000 });
  try {
    const admin = store.users.create({ email: `load-${randomUUID()}@test`, role: 'admin' });
    const key = store.users.createApiKey(admin.id).key;
    const project = store.createProject({ name: `load-${randomUUID().slice(0, 8)}` });
    const runs = [store.createLogStream(project.id, 'load-a').id, store.createLogStream(project.id, 'load-b').id];
    const app = buildServer({ store });
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    const headers = { 'Galileo-API-Key': key, 'Content-Type': 'application/json' };

    const requests = { log: 0, search: 0, count: 0, delete: 0, total: 0 };
    const latency: Record<'log' | 'search' | 'count' | 'delete', Latency> = {
      log: { n: 0, total: 0, all: [] },
      search: { n: 0, total: 0, all: [] },
      count: { n: 0, total: 0, all: [] },
      delete: { n: 0, total: 0, all: [] },
    };
    const errorSamples: string[] = [];
    let errors = 0;
    const fail = (what: string) => {
      errors++;
      if (errorSamples.length < 10) errorSamples.push(what.slice(0, 500));
    };
    const post = async (kind: keyof typeof latency, path: string, body: unknown): Promise<any> => {
      const started = performance.now();
      requests[kind]++;
      requests.total++;
      try {
        const res = await fetch(`${base}${path}`, {
          method: 'POST',
          headers,
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(60_000),
        });
        const text = await res.text();
        const ms = performance.now() - started;
        latency[kind].n++;
        latency[kind].total += ms;
        latency[kind].all.push(ms);
        if (res.status !== 200) {
          fail(`${kind} ${path}: ${res.status} ${text.slice(0, 300)}`);
          return null;
        }
        return JSON.parse(text);
      } catch (err) {
        fail(`${kind} ${path}: ${(err as Error).message}`);
        return null;
      }
    };

    const batches: Batch[] = [];
    const deadline = Date.now() + options.durationSec * 1000;
    const running = () => Date.now() < deadline;
    const sent = { log: 0, search: 0, count: 0, delete: 0 };
    /** Whether a client of `kind` sends another request (and counts it when it does). */
    const another = (kind: keyof typeof sent) =>
      running() && (options.stopAfter === undefined || sent[kind] < options.stopAfter[kind]) && ++sent[kind] > 0;

    const logger = async (index: number) => {
      const traces = generateTraces({
        seed: seed + index * 7919,
        spans: Number.MAX_SAFE_INTEGER,
        startTime: Date.UTC(2026, 0, 1) + index * 3_600_000,
      });
      for (let b = 0; another('log'); b++) {
        const tag = `batch-${index}-${b}`;
        const list: GenTrace[] = [];
        let spans = 0;
        for (let i = 0; i < batchTraces; i++) {
          const t = traces.next().value as GenTrace;
          spans += countSpans(t);
          // Own ids and sessions: each trace its own implicit session, every batch findable by its tag.
          list.push({ ...t, id: randomUUID(), session_id: undefined as unknown as string, tags: [tag, ...t.tags] });
        }
        const runId = runs[b % runs.length]!;
        const res = await post('log', `/v2/projects/${project.id}/traces`, { log_stream_id: runId, reliable: b % 3 !== 0, traces: list });
        if (!res) continue;
        if (res.traces_count !== list.length || res.spans_count !== spans)
          fail(`log ${tag}: answered ${res.traces_count} traces/${res.spans_count} spans for ${list.length}/${spans}`);
        batches.push({ tag, runId, traces: list.map((t) => t.id), spans, deleted: false, deleting: false });
      }
    };

    let seq = 0;
    const next = (n: number) => (seq = (seq * 1103515245 + 12345 + n) % 2 ** 31);
    const deleter = async () => {
      while (running() && (options.stopAfter === undefined || sent.delete < options.stopAfter.delete)) {
        const candidates = batches.filter((x) => !x.deleted && !x.deleting);
        if (candidates.length < 5) {
          await new Promise((r) => setTimeout(r, 50));
          continue;
        }
        another('delete');
        const victim = candidates[next(candidates.length) % candidates.length]!;
        victim.deleting = true;
        const res = await post('delete', `/projects/${project.id}/traces/delete`, {
          log_stream_id: victim.runId,
          filters: [{ type: 'collection', column_id: 'tags', operator: 'contains', value: victim.tag }],
        });
        victim.deleting = false;
        if (!res) continue;
        const want = `Deleted ${victim.traces.length + victim.spans} records`;
        if (res.message !== want) fail(`delete ${victim.tag}: "${res.message}", expected "${want}"`);
        victim.deleted = true;
        await new Promise((r) => setTimeout(r, 100));
      }
    };

    const SEARCHES: ((run: string) => readonly [string, unknown])[] = [
      (run: string) =>
        [
          '/v2/projects/P/spans/partial_search',
          {
            log_stream_id: run,
            filters: [{ type: 'text', column_id: 'type', operator: 'eq', value: 'llm' }],
            sort: { column_id: 'created_at', ascending: false },
            limit: 50,
            select_columns: { column_ids: ['name', 'model', 'metrics/num_input_tokens'] },
          },
        ] as const,
      (run: string) => ['/v2/projects/P/traces/search', { log_stream_id: run, limit: 20, include_counts: true }] as const,
      (run: string) =>
        [
          '/v2/projects/P/spans/search',
          {
            log_stream_id: run,
            filter_tree: {
              or: [
                { filter: { type: 'text', column_id: 'input', operator: 'contains', value: 'refund', case_sensitive: false } },
                { filter: { type: 'number', column_id: 'status_code', operator: 'gte', value: 500 } },
              ],
            },
            limit: 25,
          },
        ] as const,
      (run: string) =>
        [
          '/v2/projects/P/spans/partial_search',
          {
            log_stream_id: run,
            sort: { column_id: 'metrics/latency_ms', ascending: false },
            limit: 25,
            select_columns: { include_all_metrics: true },
          },
        ] as const,
      () => ['/v2/projects/P/sessions/search', { limit: 10, include_counts: true }] as const,
      (run: string) => ['/v2/projects/P/spans/available_columns', { log_stream_id: run }] as const,
    ];
    const searcher = async (index: number) => {
      for (let i = index; another('search'); i++) {
        const [path, body] = SEARCHES[i % SEARCHES.length]!(runs[i % runs.length]!);
        const res = await post('search', path.replace('/P/', `/${project.id}/`), body);
        if (res && !Array.isArray(res.records) && !Array.isArray(res.columns)) fail(`search ${path}: no records in the answer`);
      }
    };
    const counter = async (index: number) => {
      for (let i = index; another('count'); i++) {
        const level = (['spans', 'traces', 'sessions'] as const)[i % 3];
        const body =
          i % 2 === 0
            ? { log_stream_id: runs[i % runs.length] }
            : { filters: [{ type: 'text', column_id: 'name', operator: 'ne', value: 'x' }] };
        const res = await post('count', `/v2/projects/${project.id}/${level}/count`, body);
        if (res && !(Number.isInteger(res.total_count) && res.total_count >= 0)) fail(`count ${level}: ${JSON.stringify(res)}`);
      }
    };
    const progress = setInterval(
      () =>
        say(
          `${requests.total} requests, ${batches.length} batches logged, ${batches.filter((b) => b.deleted).length} deleted, ` +
            `${errors} errors, rss ${MiB(process.memoryUsage().rss)} MiB`,
        ),
      5_000,
    );
    const started = performance.now();
    await Promise.all([
      ...Array.from({ length: clients.loggers }, (_, i) => logger(i)),
      ...Array.from({ length: clients.deleters }, () => deleter()),
      ...Array.from({ length: clients.searchers }, (_, i) => searcher(i)),
      ...Array.from({ length: clients.counters }, (_, i) => counter(i)),
    ]);
    const seconds = (performance.now() - started) / 1000;
    clearInterval(progress);

    // Accounting: logged - deleted = counted, by count and by walking every id.
    const live = batches.filter((b) => !b.deleted);
    const expected = {
      traces: live.reduce((n, b) => n + b.traces.length, 0),
      spans: live.reduce((n, b) => n + b.spans, 0),
      sessions: batches.reduce((n, b) => n + b.traces.length, 0),
    };
    const countAll = async (s: TraceStore) => ({
      traces: (await s.count('trace', project.id, {})).total_count,
      spans: (await s.count('span', project.id, {})).total_count,
      sessions: (await s.count('session', project.id, {})).total_count,
    });
    const counted = await countAll(store);
    const walk = async (s: TraceStore): Promise<Set<string>> => {
      const ids = new Set<string>();
      for (let token: number | null = 0; token !== null; ) {
        const page = await s.search('trace', project.id, { starting_token: token, limit: 1000 });
        for (const r of page.records) ids.add(String(r['id']));
        token = page.next_starting_token;
      }
      return ids;
    };
    const walked = await walk(store);
    let recordsChecked = 0;
    for (const b of batches) {
      for (const id of b.traces) {
        recordsChecked++;
        if (walked.has(id) === b.deleted) fail(`trace ${id} of ${b.tag} is ${b.deleted ? 'still there after its delete' : 'missing'}`);
      }
    }
    if (walked.size !== expected.traces) fail(`a full walk found ${walked.size} traces, expected ${expected.traces}`);
    const same = (a: typeof counted, w: string) => {
      for (const k of ['traces', 'spans', 'sessions'] as const)
        if (a[k] !== expected[k]) fail(`${w}: ${a[k]} ${k} counted, ${expected[k]} expected (logged - deleted)`);
    };
    same(counted, 'live');
    await app.close();
    await store.close();
    const reopenStarted = performance.now();
    store = await TraceStore.open(dir);
    const reopenMs = performance.now() - reopenStarted;
    const after = await countAll(store);
    same(after, 'reopened');
    const reopened = { ok: JSON.stringify(after) === JSON.stringify(counted), ms: Math.round(reopenMs) };
    rss.end = MiB(process.memoryUsage().rss);
    // VmHWM: the kernel's own peak, which a sampler can miss.
    rss.peak = Math.max(rss.peak, rss.end, peakRssMiB() ?? 0);
    const lat = (k: keyof typeof latency) => ({
      p50: pct(latency[k].all, 50),
      p95: pct(latency[k].all, 95),
      p99: pct(latency[k].all, 99),
      max: pct(latency[k].all, 100),
    });
    return {
      seconds: Math.round(seconds * 10) / 10,
      clients,
      requests,
      errors,
      errorSamples,
      logged: {
        batches: batches.length,
        traces: batches.reduce((n, b) => n + b.traces.length, 0),
        spans: batches.reduce((n, b) => n + b.spans, 0),
      },
      deleted: {
        batches: batches.length - live.length,
        traces: batches.filter((b) => b.deleted).reduce((n, b) => n + b.traces.length, 0),
        spans: batches.filter((b) => b.deleted).reduce((n, b) => n + b.spans, 0),
      },
      counted,
      expected,
      recordsChecked: recordsChecked + walked.size,
      accounted: errors === 0,
      reopened,
      rssMiB: rss,
      latencyMs: { log: lat('log'), search: lat('search'), count: lat('count'), delete: lat('delete') },
      spansPerSec: Math.round(batches.reduce((n, b) => n + b.spans, 0) / seconds),
    };
  } finally {
    clearInterval(sampler);
    await store.close();
    if (ownDir) rmSync(dir, { recursive: true, force: true });
  }
}

export function formatReport(r: LoadReport): string {
  const l = r.latencyMs;
  return [
    `load: ${r.seconds} s, clients ${r.clients.loggers} loggers / ${r.clients.searchers} searchers / ` +
      `${r.clients.counters} counters / ${r.clients.deleters} deleters`,
    `requests survived: ${r.requests.total} (log ${r.requests.log}, search ${r.requests.search}, count ${r.requests.count}, delete ${r.requests.delete})`,
    `errors: ${r.errors}${r.errorSamples.length ? `\n  ${r.errorSamples.join('\n  ')}` : ''}`,
    `logged: ${r.logged.traces} traces, ${r.logged.spans} spans in ${r.logged.batches} batches (${r.spansPerSec} spans/s); ` +
      `deleted: ${r.deleted.traces} traces, ${r.deleted.spans} spans in ${r.deleted.batches} batches`,
    `counted: ${r.counted.traces} traces, ${r.counted.spans} spans, ${r.counted.sessions} sessions = logged - deleted: ` +
      `${r.accounted ? 'yes' : 'NO'}; records checked: ${r.recordsChecked}`,
    `reopened: ${r.reopened.ok ? 'same counts' : 'DIFFERENT counts'} in ${r.reopened.ms} ms`,
    `rss: start ${r.rssMiB.start} MiB, peak ${r.rssMiB.peak} MiB, end ${r.rssMiB.end} MiB`,
    `latency ms p50/p95/p99/max: log ${l.log.p50}/${l.log.p95}/${l.log.p99}/${l.log.max}, ` +
      `search ${l.search.p50}/${l.search.p95}/${l.search.p99}/${l.search.max}, ` +
      `count ${l.count.p50}/${l.count.p95}/${l.count.p99}/${l.count.max}, ` +
      `delete ${l.delete.p50}/${l.delete.p95}/${l.delete.p99}/${l.delete.max}`,
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '60' },
      loggers: { type: 'string', default: '4' },
      searchers: { type: 'string', default: '2' },
      counters: { type: 'string', default: '2' },
      deleters: { type: 'string', default: '1' },
      batch: { type: 'string', default: '20' },
      seed: { type: 'string', default: '2026' },
      dir: { type: 'string' },
    },
  });
  const report = await runLoad({
    durationSec: Number(values.duration),
    loggers: Number(values.loggers),
    searchers: Number(values.searchers),
    counters: Number(values.counters),
    deleters: Number(values.deleters),
    batchTraces: Number(values.batch),
    seed: Number(values.seed),
    ...(values.dir ? { dir: values.dir } : {}),
    progress: (line) => process.stderr.write(`${line}\n`),
  });
  process.stdout.write(`${formatReport(report)}\n`);
  process.exitCode = report.errors === 0 ? 0 : 1;
}
