// Read-only stores beside a writer: fills a folder with the bench workload, then, each in a child
// process of its own (so its peak RSS is its own):
//   open    a read-only store opens the idle folder: time to open, RSS after open, and the queries;
//   live    the writer ingests (as the server does, in its own process) while it runs the queries
//           every second, and a read-only store in another process runs the same queries, refreshing
//           before each round: the latencies side by side, and the writer's ingest rate.
//   node --import tsx bench/read-only.ts [--size 100k|1m|10m] [--dir PATH] [--reuse] [--seconds N (default 30)]
// Reports per query the median and worst latency (ms); --reuse keeps a folder already filled in --dir.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { TraceStore } from '../src/engine/trace-store.js';
import { fmt, machine, median, parseSize, peakRssMiB, statusMiB, writeResults } from './common.js';
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

/** A read-only store: open, then query rounds for `seconds`, refreshing before each (one round for 0). */
async function reader(dir: string, seconds: number): Promise<Record<string, unknown>> {
  const t0 = performance.now();
  const store = await TraceStore.open(dir, { readOnly: true });
  const openMs = performance.now() - t0;
  const rssAfterOpen = statusMiB(process.pid, 'VmRSS');
  const until = Date.now() + seconds * 1000;
  const projectId = store.catalog.listProjects().projects[0]!.id;
  const l: Latencies = {};
  const refreshes: number[] = [];
  do {
    const r0 = performance.now();
    await store.refresh();
    refreshes.push(performance.now() - r0);
    await round(store, projectId, l);
  } while (Date.now() < until);
  await store.close();
  return {
    open_ms: Math.round(openMs),
    rss_after_open_mib: rssAfterOpen,
    peak_rss_mib: peakRssMiB(),
    refresh_median_ms: Math.round(median(refreshes)),
    queries: summary(l),
  };
}

/** The writer: ingests a second workload while it runs the query rounds every second, until its stdin ends. */
async function writer(dir: string): Promise<Record<string, unknown>> {
  const store = await TraceStore.open(dir, { pipelineDepth: 0 });
  let ended = false;
  process.stdin.on('end', () => (ended = true)).resume();
  const projectId = store.catalog.listProjects().projects[0]!.id;
  const streamId = store.catalog.listRuns(projectId, 'log_stream')[0]!.id;
  let spans = 0;
  const t0 = performance.now();
  const ingest = (async () => {
    for (let seed = 100; !ended; seed++)
      for (const batch of spanBatches({ spans: 100_000, seed, batchSpans: 500 })) {
        if (ended) break;
        await store.logTraces(projectId, { log_stream_id: streamId, traces: batch.traces as never });
        spans += batch.rows.length;
      }
  })();
  process.stdout.write('{"ready":true}\n');
  const l: Latencies = {};
  while (!ended) {
    await round(store, projectId, l);
    await new Promise((r) => setTimeout(r, 1000));
  }
  await ingest;
  const seconds = (performance.now() - t0) / 1000;
  await store.close();
  return { ingested_spans: spans, spans_per_s: Math.round(spans / seconds), peak_rss_mib: peakRssMiB(), queries: summary(l) };
}

/** A role in a child process: `ready` once it printed a first line, `result` its last; `stop` ends its stdin. */
function child(role: string, dir: string, seconds: number) {
  const p = spawn(process.execPath, ['--import', 'tsx', new URL(import.meta.url).pathname, role, dir, String(seconds)], {
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
if (positionals[0] === 'reader' || positionals[0] === 'writer') {
  const [role, dir, seconds] = positionals as [string, string, string];
  const r = role === 'reader' ? await reader(dir, Number(seconds)) : await writer(dir);
  process.stdout.write(`${JSON.stringify(r)}\n`);
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
  // The writer ingests and queries until the reader beside it has run for `seconds`.
  const w = child('writer', dir, 0);
  await w.ready;
  const r = await child('reader', dir, seconds).result;
  w.stop();
  const writerResult = await w.result;
  process.stderr.write(`writer: ${JSON.stringify(writerResult)}\nreader: ${JSON.stringify(r)}\n`);
  const results = { machine: machine(), load_1m: loadavg()[0], spans, seconds, open, writer: writerResult, reader: r };
  process.stderr.write(`results: ${writeResults(join('bench', 'results', 'read-only'), size, results)}\n`);
}
