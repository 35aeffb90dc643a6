// Scoring benchmark (not a timed test): N spans logged over HTTP (loopback, the v2 traces route, a few
// connections) into a log stream without scorers and into one with two deterministic scorers enabled
// (bleu and rouge on every llm span), the ingest rate of each and their ratio (goal: scoring costs at
// most 10% of the rate), the time online scoring takes to catch up once logging stops, and the rate
// of recompute_metrics (bleu over every llm span of the stream logged without scorers, as a job over
// HTTP, polled until done).
// Run: `npx tsc -p tsconfig.json && node dist/bench/scoring.js [SPANS]` (default 100,000; 1,000,000 for the goal).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TraceStore } from '../src/engine/trace-store.js';
import { buildServer } from '../src/server/build-server.js';

const SPANS_PER_TRACE = 10;
const TRACES_PER_REQUEST = 100;
const CONNECTIONS = 4;
const WORDS = 'the a weather report says it is sunny rain snow in paris lyon oslo today tomorrow cold warm'.split(' ');

function sentence(seed: number, n: number): string {
  const out: string[] = [];
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    out.push(WORDS[x % WORDS.length]!);
  }
  return out.join(' ');
}

function requestBody(logStreamId: string, r: number): string {
  const traces = Array.from({ length: TRACES_PER_REQUEST }, (_, t) => {
    const k = r * TRACES_PER_REQUEST + t;
    return {
      type: 'trace',
      name: `trace-${k}`,
      input: sentence(k, 8),
      spans: Array.from({ length: SPANS_PER_TRACE - 1 }, (_, s) => ({
        type: 'llm',
        name: `llm-${s}`,
        input: sentence(k * 31 + s, 12),
        output: sentence(k * 17 + s, 16),
        dataset_output: sentence(k * 17 + s + (s % 3), 16),
      })),
    };
  });
  return JSON.stringify({ log_stream_id: logStreamId, traces });
}

interface Run {
  ingestSeconds: number;
  spansPerSecond: number;
  catchUpSeconds: number;
}

async function logOver(url: string, key: string, projectId: string, logStreamId: string, requests: number): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      for (;;) {
        const r = next++;
        if (r >= requests) return;
        const res = await fetch(`${url}/v2/projects/${projectId}/traces`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'Galileo-API-Key': key },
          body: requestBody(logStreamId, r),
        });
        if (res.status !== 200) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
        await res.arrayBuffer();
      }
    }),
  );
  return (performance.now() - t0) / 1000;
}

async function open(dir: string) {
  const store = await TraceStore.open(dir, { pipelineDepth: 0 });
  const user = store.users.create({ email: `bench${Date.now()}@local` });
  const project = store.createProject({ name: 'bench' });
  store.catalog.addProjectMember(project.id, user.id, 'owner');
  const key = store.users.createApiKey(user.id).key;
  const app = buildServer({ store, logger: false, viewer: false });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { store, app, url, key, projectId: project.id };
}

async function main(): Promise<void> {
  const spans = Number(process.argv[2] ?? 100_000);
  const requests = Math.ceil(spans / (SPANS_PER_TRACE * TRACES_PER_REQUEST));
  const results: Record<string, Run> = {};
  let recompute: { records: number; seconds: number; recordsPerSecond: number } | null = null;
  for (const mode of ['without', 'with'] as const) {
    const dir = mkdtempSync(join(tmpdir(), 'tracelake-bench-scoring-'));
    const { store, app, url, key, projectId } = await open(dir);
    try {
      const stream = store.createLogStream(projectId, mode);
      if (mode === 'with') store.catalog.setRunScorerSettings(projectId, stream.id, { scorers: [{ name: 'bleu' }, { name: 'rouge' }] });
      const ingestSeconds = await logOver(url, key, projectId, stream.id, requests);
      const t1 = performance.now();
      await store.scorers.idle();
      const catchUpSeconds = (performance.now() - t1) / 1000;
      results[mode] = { ingestSeconds, spansPerSecond: (requests * TRACES_PER_REQUEST * SPANS_PER_TRACE) / ingestSeconds, catchUpSeconds };
      process.stderr.write(`${mode} scorers: ${JSON.stringify(results[mode])}\n`);
      if (mode === 'without') {
        const t2 = performance.now();
        const res = await fetch(`${url}/v2/projects/${projectId}/recompute_metrics`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'Galileo-API-Key': key },
          body: JSON.stringify({ scorer_ids: ['bleu'], log_stream_id: stream.id }),
        });
        const job = (await res.json()) as { id: string };
        let done: { status: string; steps_total: number; counts: Record<string, number> };
        for (;;) {
          const r = await fetch(`${url}/v2/projects/${projectId}/jobs/${job.id}`, { headers: { 'Galileo-API-Key': key } });
          done = (await r.json()) as typeof done;
          if (done.status === 'completed' || done.status === 'failed') break;
          await new Promise((r) => setTimeout(r, 200));
        }
        const seconds = (performance.now() - t2) / 1000;
        recompute = { records: done.steps_total, seconds, recordsPerSecond: done.steps_total / seconds };
        process.stderr.write(`recompute_metrics: ${JSON.stringify({ ...recompute, status: done.status, counts: done.counts })}\n`);
      }
    } finally {
      await app.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const ratio = results['with']!.spansPerSecond / results['without']!.spansPerSecond;
  process.stdout.write(
    `${JSON.stringify({ spans, ...results, ingestRateRatio: ratio, slowdownPercent: (1 - ratio) * 100, recompute }, null, 2)}\n`,
  );
}

await main();
