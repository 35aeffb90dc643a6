// Read-only stores beside a running server: fills a folder with the bench workload, then
//   open    a read-only store in a process of its own opens the idle folder: time to open, RSS after
//           open, and one round of queries;
//   live    `tracelake serve` holds the folder while 4 clients log 1,000-span requests (reliable) and
//           the server answers the same count and first page over HTTP every second; a read-only store
//           in another process refreshes before each round of queries. Before each refresh the reader
//           reads how many spans the server had acknowledged (a file this process rewrites after each
//           answer) and checks the count after the refresh is at least that: a visibility check at scale.
//   node dist/bench/read-only.js [--size 100k|1m|10m] [--dir PATH] [--reuse] [--seconds N (default 30)]
// Reports per query the median and worst latency (ms); --reuse keeps a folder already filled in
// --dir (its data/ subfolder; e.g. a copy of a peer benchmark template).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { TraceStore } from '../src/engine/trace-store.js';
import { fmt, machine, median, parseSize, peakRssMiB, statusMiB, writeResults } from './common.js';
import { countSpans, generateBatches, type GenTrace } from '../test/support/generator.js';
import { poster, startServer } from './server-process.js';
import { spanBatches } from './workload.js';

type Query = (store: TraceStore, projectId: string) => Promise<unknown>;
const QUERIES: Record<string, Query> = {
  count_spans: (s, p) => s.count('span', p, {}),
  search_first_page: (s, p) => s.search('span', p, { limit: 50 }),
  sql_by_type: (s) => s.data.sql('SELECT type, count(*) AS n FROM spans GROUP BY type'),
};

type Latencies = Record<string, number[]>;

async function round(store: TraceStore, projectId: string, into: Latencies): Promise<void> {
  for (const [name, q] of Object.entries(QUERIES)) {
    const t0 = performance.now();
    await q(store, projectId);
    (into[name] ??= []).push(performance.now() - t0);
  }
}

function summary(l: Latencies): Record<string, { median_ms: number; max_ms: number; n: number }> {
  return Object.fromEntries(
    Object.entries(l).map(([k, xs]) => [
      k,
      { median_ms: Math.round(median(xs) * 10) / 10, max_ms: Math.round(Math.max(...xs)), n: xs.length },
    ]),
  );
}

async function fill(dir: string, spans: number): Promise<void> {
  const store = await TraceStore.open(dir);
  const project = store.createProject({ name: 'bench' });
  const stream = store.createLogStream(project.id, 'main');
  for (const batch of spanBatches({ spans }))
    await store.logTraces(project.id, { log_stream_id: stream.id, traces: batch.traces as never });
  await store.flush();
  await store.maintenance.compact();
  await store.close();
}

/**
 * A read-only store: open, then query rounds for `seconds`, refreshing before each (one round for 0).
 * With `ackedFile`, each refresh is checked against the spans the server had acknowledged before it.
 */
async function reader(dir: string, seconds: number, ackedFile?: string): Promise<Record<string, unknown>> {
  const t0 = performance.now();
  const store = await TraceStore.open(dir, { readOnly: true });
  const openMs = performance.now() - t0;
  const rssAfterOpen = statusMiB(process.pid, 'VmRSS');
  const until = Date.now() + seconds * 1000;
  const projectId = store.catalog.listProjects().projects[0]!.id;
  const l: Latencies = {};
  const refreshes: number[] = [];
  let checks = 0;
  let behind = 0;
  do {
    const acked = ackedFile === undefined ? 0 : (JSON.parse(readFileSync(ackedFile, 'utf8')) as { spans: number }).spans;
    const r0 = performance.now();
    await store.refresh();
    refreshes.push(performance.now() - r0);
    if (ackedFile !== undefined) {
      checks++;
      if ((await store.count('span', projectId, {})).total_count < acked) behind++;
    }
    await round(store, projectId, l);
  } while (Date.now() < until);
  await store.close();
  return {
    open_ms: Math.round(openMs),
    rss_after_open_mib: rssAfterOpen,
    peak_rss_mib: peakRssMiB(),
    refresh_median_ms: Math.round(median(refreshes)),
    ...(ackedFile === undefined ? {} : { visibility_checks: checks, refreshes_missing_acknowledged_spans: behind }),
    queries: summary(l),
  };
}

/** Request bodies without ids (so every send logs new records), reused round robin by the clients. */
function bodies(logStreamId: string, count: number): { json: string; spans: number }[] {
  const strip = (x: { id?: string; spans?: unknown[] }): void => {
    delete x.id;
    for (const s of x.spans ?? []) strip(s as { id?: string; spans?: unknown[] });
  };
  const out: { json: string; spans: number }[] = [];
  for (const batch of generateBatches({ spans: count * 1000, batchSpans: 1000, seed: 100 })) {
    for (const t of batch) strip(t as unknown as { id?: string });
    out.push({
      json: JSON.stringify({ log_stream_id: logStreamId, reliable: true, traces: batch }),
      spans: batch.reduce((n: number, t: GenTrace) => n + countSpans(t), 0),
    });
  }
  return out;
}

/** The server holds `dir` while 4 clients log and it answers the queries over HTTP; the reader runs beside. */
async function live(dir: string, work: string, seconds: number): Promise<Record<string, unknown>> {
  const key = `tl_bench_${Date.now()}`;
  const server = await startServer(dir, key);
  const headers = { 'Galileo-API-Key': key };
  const post = poster(server, key);
  const projects = (await (await fetch(`${server.url}/projects/all`, { headers })).json()) as { id: string }[];
  const projectId = projects[0]!.id;
  const streams = (await (await fetch(`${server.url}/projects/${projectId}/log_streams`, { headers })).json()) as { id: string }[];
  const pool = bodies(streams[0]!.id, 40);
  const ackedFile = join(work, 'acked.json');
  let acked = Number((await post(`/projects/${projectId}/spans/count`, {}))['total_count']);
  const publish = () => {
    writeFileSync(`${ackedFile}.tmp`, JSON.stringify({ spans: acked }));
    renameSync(`${ackedFile}.tmp`, ackedFile);
  };
  publish();
  const start = acked;
  let ended = false;
  let next = 0;
  const t0 = performance.now();
  const clients = Array.from({ length: 4 }, async () => {
    while (!ended) {
      const b = pool[next++ % pool.length]!;
      await post(`/projects/${projectId}/traces`, b.json);
      acked += b.spans;
      publish();
    }
  });
  const r = child('reader', dir, seconds, ackedFile);
  const l: Latencies = {};
  const asks: Record<string, () => Promise<unknown>> = {
    count_spans: () => post(`/projects/${projectId}/spans/count`, {}),
    search_first_page: () => post(`/projects/${projectId}/spans/search`, { limit: 50 }),
  };
  let done = false;
  const readerResult = r.result.finally(() => (done = true));
  while (!done) {
    for (const [name, ask] of Object.entries(asks)) {
      const q0 = performance.now();
      await ask();
      (l[name] ??= []).push(performance.now() - q0);
    }
    await new Promise((res) => setTimeout(res, 1000));
  }
  ended = true;
  await Promise.all(clients);
  const ingestSeconds = (performance.now() - t0) / 1000;
  const serverRss = peakRssMiB(server.pid);
  await server.stop();
  return {
    server: {
      ingested_spans: acked - start,
      spans_per_s: Math.round((acked - start) / ingestSeconds),
      peak_rss_mib: serverRss,
      queries: summary(l),
    },
    reader: await readerResult,
  };
}

/** A role in a child process: `ready` once it printed a first line, `result` its last; `stop` ends its stdin. */
function child(role: string, dir: string, seconds: number, ackedFile?: string) {
  const args = [new URL(import.meta.url).pathname, role, dir, String(seconds), ...(ackedFile === undefined ? [] : [ackedFile])];
  const p = spawn(process.execPath, [...process.execArgv, ...args], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  let onReady: () => void = () => {};
  const ready = new Promise<void>((r) => {
    onReady = r;
  });
  p.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    if (out.includes('\n')) onReady();
  });
  const result = new Promise<Record<string, unknown>>((resolve, reject) =>
    p.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out.trim().split('\n').at(-1)!)) : reject(new Error(`${role} exited with ${code}`)),
    ),
  );
  return { ready, result, stop: () => p.stdin.end() };
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { size: { type: 'string' }, dir: { type: 'string' }, reuse: { type: 'boolean' }, seconds: { type: 'string' } },
});
if (positionals[0] === 'reader') {
  const [, dir, seconds, ackedFile] = positionals as [string, string, string, string | undefined];
  process.stdout.write(`${JSON.stringify(await reader(dir, Number(seconds), ackedFile))}\n`);
} else {
  const size = values.size ?? '100k';
  const spans = parseSize(size);
  const seconds = Number(values.seconds ?? 30);
  const work = values.dir ?? mkdtempSync(join(tmpdir(), 'tracelake-read-only-'));
  const dir = join(work, 'data');
  if (values.reuse && existsSync(join(dir, 'manifest.json'))) process.stderr.write(`reusing ${dir}\n`);
  else {
    const t0 = performance.now();
    await fill(dir, spans);
    process.stderr.write(`filled ${fmt(spans)} spans in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  }
  // The idle folder: open, then one round of queries.
  const open = await child('reader', dir, 0).result;
  process.stderr.write(`open: ${JSON.stringify(open)}\n`);
  // The server logs and answers until the reader beside it has run for `seconds`.
  const { server, reader: r } = await live(dir, work, seconds);
  process.stderr.write(`server: ${JSON.stringify(server)}\nreader: ${JSON.stringify(r)}\n`);
  const results = { machine: machine(), load_1m: loadavg()[0], spans, seconds, open, server, reader: r };
  process.stderr.write(`results: ${writeResults(join('bench', 'results', 'read-only'), size, results)}\n`);
}
