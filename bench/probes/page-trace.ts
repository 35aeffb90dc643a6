// Where a first page's time goes while the library ingests (reads during ingest): four
// writers log ~1,000-span requests (`reliable: true`, as the HTTP benchmark's clients do) while one
// reader asks the benchmark's filtered count and first page in a loop. For each page: its time, the
// segments and memory tables its snapshot lists, the plan's steps, and each statement's time (from
// the call to its result, so waiting for a pooled connection and for the main thread is inside it).
// One JSON line: the page p50/p95 and the slowest pages in detail.
//   node dist/bench/probes/page-trace.js [spans=600000]
// TL_OPTS='{"memTableBytes":16777216}' passes store options.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TraceStore } from '../../src/engine/trace-store.js';
import { watchStatements } from '../statement-times.js';
import { generateBatches } from '../../test/support/generator.js';

const spans = Number(process.argv[2] ?? 600_000);
const opts = JSON.parse(process.env['TL_OPTS'] ?? '{}') as Record<string, unknown>;
const dir = mkdtempSync(join(tmpdir(), 'tracelake-pagetrace-'));
let steps: readonly string[] = [];
const store = await TraceStore.open(dir, { ...opts, onPlan: (s) => (steps = s) });
const project = store.createProject({ name: 'bench' });
const ls = store.createLogStream(project.id, 'ingest');

// Statement times of the page being traced.
type Stmt = { sql: string; ms: number; mem: number; files: number };
let stmts: Stmt[] | null = null;
watchStatements(({ text: sql, params, ms }) => {
  if (!stmts) return;
  const files = params.flat().filter((v) => typeof v === 'string' && v.endsWith('.parquet')).length;
  stmts.push({ sql: sql.replace(/\s+/g, ' ').slice(0, 80), ms: Math.round(ms), mem: new Set(sql.match(/mem_\d+/g) ?? []).size, files });
});

const batches = generateBatches({ spans, batchSpans: 1000, seed: 11 });
let ingesting = true;
const writer = async () => {
  for (;;) {
    const next = batches.next();
    if (next.done) return;
    await store.logTraces(project.id, { log_stream_id: ls.id, reliable: true, traces: next.value as never });
  }
};
const pages: { ms: number; segments: number; steps: readonly string[]; stmts: Stmt[] }[] = [];
const counts: number[] = [];
const reader = async () => {
  while (ingesting) {
    let t = performance.now();
    await store.count('span', project.id, {
      log_stream_id: ls.id,
      filters: [{ type: 'text', column_id: 'model', operator: 'eq', value: 'gpt-4o' }],
    } as never);
    counts.push(performance.now() - t);
    let segments = -1;
    try {
      segments = (JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { segments: unknown[] }).segments.length;
    } catch {
      // no manifest yet
    }
    const mine: Stmt[] = [];
    stmts = mine;
    t = performance.now();
    await store.partialSearch('span', project.id, {
      log_stream_id: ls.id,
      limit: 50,
      select_columns: { column_ids: ['name', 'created_at'] },
      filters: [{ type: 'text', column_id: 'name', operator: 'contains', value: 'a' }],
    } as never);
    pages.push({ ms: performance.now() - t, segments, steps, stmts: mine });
    stmts = null;
  }
};
const r = reader();
await Promise.all([writer(), writer(), writer(), writer()]);
ingesting = false;
await r;
await store.close();
rmSync(dir, { recursive: true, force: true });
const pct = (xs: number[], p: number) => Math.round([...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? 0);
const ms = pages.map((p) => p.ms);
console.log(
  JSON.stringify({
    spans,
    opts,
    pages: pages.length,
    page_p50: pct(ms, 0.5),
    page_p95: pct(ms, 0.95),
    count_p50: pct(counts, 0.5),
    slowest: [...pages]
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 3)
      .map((p) => ({ ...p, ms: Math.round(p.ms) })),
    median: [...pages].sort((a, b) => a.ms - b.ms)[Math.floor(pages.length / 2)],
  }),
);
