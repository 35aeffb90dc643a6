// Ingest benchmarks over the seeded generator: library ingest (reliable: true, batches of ~1,000
// spans), HTTP ingest against a real `tracelake serve` child process (several connections), and, in
// the same run, the rate at which JSON.parse alone parses the same payloads (the yardstick). The HTTP
// run goes once through the v2 JSON route and once, with the same spans, through OTLP protobuf
// (POST /v1/traces), each against a fresh server.
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { TraceStore } from '../src/engine/trace-store.js';
import { generateBatches } from '../test/support/generator.js';
import { cpuSeconds, folderBytes, parquetFiles, peakRssMiB, statusMiB, type Measurement } from './common.js';
import { otlpBody } from './otlp-bodies.js';
import { startServer, type ServerProcess } from './server-process.js';

export type HttpRoute = 'json' | 'otlp';

const BATCH = 1000;

function spansIn(batch: { spans?: unknown[] }[]): number {
  let n = 0;
  const walk = (xs: { spans?: unknown[] }[] | undefined) => {
    for (const x of xs ?? []) {
      n++;
      walk(x.spans as { spans?: unknown[] }[] | undefined);
    }
  };
  for (const t of batch) walk(t.spans as { spans?: unknown[] }[] | undefined);
  return n;
}

/** Library ingest, timed per call; JSON.parse of the same batch timed alongside. */
export async function benchLibraryIngest(spans: number, seed = 7): Promise<Measurement[]> {
  const dir = mkdtempSync(join(tmpdir(), 'tracelake-bench-'));
  const store = await TraceStore.open(dir);
  try {
    const project = store.createProject({ name: 'bench' });
    const ls = store.createLogStream(project.id, 'ingest');
    let ingestMs = 0;
    let n = 0;
    for (const batch of generateBatches({ spans, batchSpans: BATCH, seed })) {
      const t = performance.now();
      await store.logTraces(project.id, { log_stream_id: ls.id, reliable: true, traces: batch as never });
      ingestMs += performance.now() - t;
      n += spansIn(batch);
    }
    let t = performance.now();
    await store.flush(); // sealing what is left is part of the cost of ingest
    ingestMs += performance.now() - t;
    t = performance.now();
    await store.maintenance.compact(); // background work in real use; timed apart
    const compactMs = performance.now() - t;
    const disk = folderBytes(dir);
    // Read before the yardstick's pass: its request strings (~1.2 MB each, which V8 allocates in its old
    // space) and parsed copies are the benchmark's garbage, not the library's: they alone raise the
    // generator's peak by half (bench/probes/lib-mem.ts --gen-only shows it).
    const peak = peakRssMiB() ?? 0;
    let parseMs = 0;
    let bytes = 0;
    for (const batch of generateBatches({ spans, batchSpans: BATCH, seed })) {
      const body = JSON.stringify({ log_stream_id: ls.id, traces: batch });
      bytes += body.length;
      const t = performance.now();
      JSON.parse(body);
      parseMs += performance.now() - t;
    }
    return [
      { name: 'library ingest', value: (n / ingestMs) * 1000, unit: 'spans/s', spans: n, seconds: ingestMs / 1000 },
      {
        name: 'library ingest, compaction included',
        value: (n / (ingestMs + compactMs)) * 1000,
        unit: 'spans/s',
        seconds: (ingestMs + compactMs) / 1000,
      },
      { name: 'JSON.parse of the same payloads', value: (n / parseMs) * 1000, unit: 'spans/s', mb: bytes / 1e6 },
      {
        name: 'disk per span',
        value: disk / n,
        unit: 'bytes',
        note: 'whole data folder after compaction (segments, id hashes, catalog), incl. trace and session records',
      },
      { name: 'compaction after ingest', value: compactMs / 1000, unit: 's' },
      { name: 'payload per span', value: bytes / n, unit: 'bytes', note: 'JSON request bytes' },
      {
        name: 'peak RSS (library process)',
        value: peak,
        unit: 'MiB',
        note: 'VmHWM after ingest and compaction (the JSON.parse yardstick runs afterwards)',
      },
    ];
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Writes request bodies (one per line) for the HTTP benchmark, so the client does no generation while timed. */
async function writeBodies(path: string, spans: number, logStreamId: string, seed: number, route: HttpRoute): Promise<number> {
  const out = createWriteStream(path);
  let n = 0;
  for (const batch of generateBatches({ spans, batchSpans: BATCH, seed })) {
    n += spansIn(batch);
    // OTLP bodies are binary: one base64 line each (decoded by the client before it times the request).
    const line =
      route === 'otlp'
        ? `${Buffer.from(otlpBody(batch)).toString('base64')}\n`
        : `${JSON.stringify({ log_stream_id: logStreamId, reliable: true, traces: batch })}\n`;
    if (!out.write(line)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((r) => out.end(r));
  return n;
}

/** TRACELAKE_BENCH_SERVER_NODE_ARGS: Node flags for the server (e.g. --heap-growing-percent=100), for A/B runs. */
const serverNodeArgs = () => (process.env['TRACELAKE_BENCH_SERVER_NODE_ARGS'] ?? '').split(' ').filter((a) => a !== '');

interface HttpRun {
  route: HttpRoute;
  server: ServerProcess;
  dir: string;
  n: number;
  lines: AsyncIterator<string>;
  target: string;
  postHeaders: Record<string, string>;
  count: () => Promise<number>;
  ms: number;
  requests: number;
  errors: number;
  latencies: number[];
  done: boolean;
}

/** A fresh server with a project and log stream, and the request bodies of `route` written to a file. */
async function prepareHttp(route: HttpRoute, spans: number, seed: number): Promise<HttpRun> {
  const dir = mkdtempSync(join(tmpdir(), `tracelake-bench-${route}-`));
  const key = `tl_bench_${Date.now()}`;
  const server = await startServer(join(dir, 'data'), key, { nodeArgs: serverNodeArgs() });
  const headers = { 'content-type': 'application/json', 'Galileo-API-Key': key };
  const project = (await (
    await fetch(`${server.url}/projects`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench' }) })
  ).json()) as { id: string };
  const ls = (await (
    await fetch(`${server.url}/projects/${project.id}/log_streams`, { method: 'POST', headers, body: JSON.stringify({ name: 'http' }) })
  ).json()) as { id: string };
  const bodies = join(dir, 'bodies.ndjson');
  const n = await writeBodies(bodies, spans, ls.id, seed, route);
  return {
    route,
    server,
    dir,
    n,
    lines: createInterface({ input: createReadStream(bodies), crlfDelay: Infinity })[Symbol.asyncIterator](),
    target: route === 'otlp' ? `${server.url}/v1/traces` : `${server.url}/projects/${project.id}/traces`,
    postHeaders:
      route === 'otlp'
        ? { 'content-type': 'application/x-protobuf', 'Galileo-API-Key': key, project: 'bench', logstream: 'http' }
        : headers,
    count: async () =>
      (
        (await (
          await fetch(`${server.url}/projects/${project.id}/spans/count`, {
            method: 'POST',
            headers,
            body: JSON.stringify({ log_stream_id: ls.id }),
          })
        ).json()) as { total_count: number }
      ).total_count,
    ms: 0,
    requests: 0,
    errors: 0,
    latencies: [],
    done: false,
  };
}

/** Posts up to `limit` more bodies over `connections` connections; the elapsed time adds to the run's. */
async function httpRound(run: HttpRun, limit: number, connections: number): Promise<void> {
  let left = limit;
  const t0 = performance.now();
  const worker = async () => {
    while (left > 0) {
      left--;
      const next = await run.lines.next();
      if (next.done) {
        run.done = true;
        return;
      }
      const body = run.route === 'otlp' ? Buffer.from(next.value, 'base64') : next.value;
      const t = performance.now();
      const res = await fetch(run.target, { method: 'POST', headers: run.postHeaders, body });
      const answer = await res.arrayBuffer();
      run.latencies.push(performance.now() - t);
      run.requests++;
      if (res.status !== 200 || (run.route === 'otlp' && answer.byteLength > 0)) run.errors++; // (a non-empty OTLP answer: spans refused)
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  run.ms += performance.now() - t0;
}

async function finishHttp(run: HttpRun, connections: number): Promise<Measurement[]> {
  try {
    const counted = await run.count();
    const peak = peakRssMiB(run.server.pid);
    run.latencies.sort((a, b) => a - b);
    return [
      {
        name:
          run.route === 'otlp'
            ? `HTTP ingest, OTLP protobuf /v1/traces (${connections} connections)`
            : `HTTP ingest, v2 JSON route (${connections} connections, reliable)`,
        value: (run.n / run.ms) * 1000,
        unit: 'spans/s',
        spans: run.n,
        requests: run.requests,
        errors: run.errors,
        p50_ms: run.latencies[run.latencies.length >> 1],
        p99_ms: run.latencies[Math.floor(run.latencies.length * 0.99)],
        counted,
      },
      { name: `peak RSS (server process, ${run.route === 'otlp' ? 'OTLP' : 'JSON'})`, value: peak ?? 0, unit: 'MiB' },
    ];
  } finally {
    await run.server.stop();
    rmSync(run.dir, { recursive: true, force: true });
  }
}

/**
 * HTTP ingest of the same spans through the v2 JSON route (POST /projects/{id}/traces) and as OTLP
 * protobuf (POST /v1/traces), each against its own fresh `tracelake serve`: `connections` clients
 * post pre-written bodies, the two routes taking turns in rounds of `round` requests so that the
 * machine's changing load falls on both alike. Reports both rates and their ratio.
 */
export async function benchHttpIngest(spans: number, connections = 4, seed = 11, round = 8): Promise<Measurement[]> {
  const runs: HttpRun[] = [];
  try {
    runs.push(await prepareHttp('json', spans, seed));
    runs.push(await prepareHttp('otlp', spans, seed));
    while (runs.some((r) => !r.done)) for (const r of runs) if (!r.done) await httpRound(r, round, connections);
  } catch (err) {
    for (const r of runs) await r.server.stop();
    throw err;
  }
  const [json, otlp] = [await finishHttp(runs[0]!, connections), await finishHttp(runs[1]!, connections)];
  return [
    ...json,
    ...otlp,
    {
      name: 'v2 JSON route / OTLP protobuf (HTTP spans/s, same spans)',
      value: json[0]!.value / otlp[0]!.value,
      unit: '×',
      note: 'above 1: OTLP is slower (goal: at most 1.5)',
    },
  ];
}

/** Latency percentile (ms) of sorted samples. */
function pct(sorted: readonly number[], p: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

/**
 * HTTP ingest: `connections` clients post pre-written bodies to POST /projects/{id}/traces while one
 * more client reads in a loop (a filtered count, then a first page): how long reads take while the
 * server ingests, and how much memory the server process reaches. With `settleSeconds`, the server is
 * then left alone that long (its merges run once writing pauses) and its memory is reported again:
 * ingesting and compacting, as a server that logs and then idles would.
 */
export async function benchHttpIngestWithReads(spans: number, connections = 4, seed = 11, settleSeconds = 0): Promise<Measurement[]> {
  const dir = mkdtempSync(join(tmpdir(), 'tracelake-bench-http-'));
  const key = `tl_bench_${Date.now()}`;
  const server = await startServer(join(dir, 'data'), key, { nodeArgs: serverNodeArgs() });
  try {
    const headers = { 'content-type': 'application/json', 'Galileo-API-Key': key };
    const project = (await (
      await fetch(`${server.url}/projects`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench' }) })
    ).json()) as { id: string };
    const ls = (await (
      await fetch(`${server.url}/projects/${project.id}/log_streams`, { method: 'POST', headers, body: JSON.stringify({ name: 'http' }) })
    ).json()) as { id: string };
    const bodies = join(dir, 'bodies.ndjson');
    const n = await writeBodies(bodies, spans, ls.id, seed, 'json');
    // The yardstick: JSON.parse of the very bodies the server will get, timed alone.
    let parseMs = 0;
    for await (const line of createInterface({ input: createReadStream(bodies), crlfDelay: Infinity })) {
      const t = performance.now();
      JSON.parse(line);
      parseMs += performance.now() - t;
    }
    const lines = createInterface({ input: createReadStream(bodies), crlfDelay: Infinity })[Symbol.asyncIterator]();
    let errors = 0;
    let requests = 0;
    const latencies: number[] = [];
    let ingesting = true;
    const reads: number[] = [];
    const byPath: Record<string, number[]> = { 'spans/count': [], 'spans/partial_search': [] };
    let readErrors = 0;
    const reader = async () => {
      const count = JSON.stringify({
        log_stream_id: ls.id,
        filters: [{ type: 'text', column_id: 'model', operator: 'eq', value: 'gpt-4o' }],
      });
      const page = JSON.stringify({
        log_stream_id: ls.id,
        limit: 50,
        select_columns: { column_ids: ['name', 'created_at'] },
        filters: [{ type: 'text', column_id: 'name', operator: 'contains', value: 'a' }],
      });
      while (ingesting) {
        for (const [path, body] of [
          ['spans/count', count],
          ['spans/partial_search', page],
        ] as const) {
          const t = performance.now();
          const res = await fetch(`${server.url}/projects/${project.id}/${path}`, { method: 'POST', headers, body });
          await res.arrayBuffer();
          if (!ingesting) break;
          reads.push(performance.now() - t);
          byPath[path]!.push(performance.now() - t);
          if (res.status !== 200) readErrors++;
        }
      }
    };
    const t0 = performance.now();
    const cpu0 = cpuSeconds(server.pid);
    // RSS and segment files every 5 s: where memory goes as stored spans grow (the 10M run).
    const samples: { s: number; rss_mib: number | null; segments: number }[] = [];
    const sample = () =>
      samples.push({
        s: Math.round((performance.now() - t0) / 1000),
        rss_mib: statusMiB(server.pid, 'VmRSS'),
        segments: parquetFiles(join(dir, 'data')).length,
      });
    const sampler = setInterval(sample, 5000);
    const readLoop = reader();
    const worker = async () => {
      for (;;) {
        const next = await lines.next();
        if (next.done) return;
        const t = performance.now();
        const res = await fetch(`${server.url}/projects/${project.id}/traces`, { method: 'POST', headers, body: next.value });
        await res.arrayBuffer();
        latencies.push(performance.now() - t);
        requests++;
        if (res.status !== 200) errors++;
      }
    };
    await Promise.all(Array.from({ length: connections }, worker));
    const ms = performance.now() - t0;
    const cpu1 = cpuSeconds(server.pid);
    ingesting = false;
    await readLoop;
    reads.sort((a, b) => a - b);
    for (const l of Object.values(byPath)) l.sort((a, b) => a - b);
    const count = (await (
      await fetch(`${server.url}/projects/${project.id}/spans/count`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ log_stream_id: ls.id }),
      })
    ).json()) as { total_count: number };
    const peak = peakRssMiB(server.pid);
    const segmentsAfterIngest = parquetFiles(join(dir, 'data')).length;
    const settleStart = performance.now();
    while (performance.now() - settleStart < settleSeconds * 1000) await new Promise((r) => setTimeout(r, 1000));
    clearInterval(sampler);
    sample();
    const settled =
      settleSeconds > 0
        ? [
            {
              name: `peak RSS (server process, VmHWM) after ${settleSeconds} s idle: its merges included`,
              value: peakRssMiB(server.pid) ?? 0,
              unit: 'MiB',
              segments_after_ingest: segmentsAfterIngest,
              segments_after_settle: parquetFiles(join(dir, 'data')).length,
              server_cpu_s_settling: (cpuSeconds(server.pid) ?? 0) - (cpu1 ?? 0),
            },
          ]
        : [];
    latencies.sort((a, b) => a - b);
    return [
      {
        name: `HTTP ingest (${connections} connections, reliable)`,
        value: (n / ms) * 1000,
        unit: 'spans/s',
        spans: n,
        requests,
        errors,
        p50_ms: pct(latencies, 0.5),
        p99_ms: pct(latencies, 0.99),
        json_parse_spans_per_s: (n / parseMs) * 1000,
        ratio_to_json_parse: n / ms / (n / parseMs),
        counted: count.total_count,
        // The server's CPU per span while it ingested and answered the reader: what the rate would be
        // bound by on a machine of its own (the clients share these cores).
        server_cpu_us_per_span: cpu0 === null || cpu1 === null ? null : ((cpu1 - cpu0) * 1e6) / n,
        server_cores: cpu0 === null || cpu1 === null ? null : (cpu1 - cpu0) / (ms / 1000),
      },
      {
        name: 'reads during HTTP ingest (filtered count, first page)',
        value: pct(reads, 0.5),
        unit: 'ms p50',
        p95_ms: pct(reads, 0.95),
        max_ms: reads[reads.length - 1],
        reads: reads.length,
        errors: readErrors,
        count_p50_ms: pct(byPath['spans/count']!, 0.5),
        count_p95_ms: pct(byPath['spans/count']!, 0.95),
        page_p50_ms: pct(byPath['spans/partial_search']!, 0.5),
        page_p95_ms: pct(byPath['spans/partial_search']!, 0.95),
      },
      {
        name: 'peak RSS (server process, VmHWM)',
        value: peak ?? 0,
        unit: 'MiB',
        segments_after_ingest: segmentsAfterIngest,
        max_rss_sample_mib: Math.max(...samples.map((x) => x.rss_mib ?? 0)),
        rss_samples: samples,
      },
      ...settled,
    ];
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
