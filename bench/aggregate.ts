// The aggregate API over one log stream of the benchmark span set: an hourly series of traces with
// their p50/p95 duration and token sums (each trace's own, else its spans' roll-up) over the whole
// stream; llm spans' count, tokens and cost grouped by model; the overview's first chart (traces in
// auto buckets with latency percentiles), as the viewer asks it; and, for comparison, the hourly
// series over every span (where spans with children read roll-ups).
// Each question runs once to warm up, then --runs times; median (min-max) in ms. The store is a copy
// of a template (bench/peers/store-template.ts), built on first use in --data-dir.
//
//   npm run build && node dist/bench/aggregate.js --size 1m --data-dir /work/data-1m [--runs 5]
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fmt, median, parseSize } from './common.js';
import { ensureTemplate, openCopy } from './peers/store-template.js';
import { DEFAULT_SEED } from './workload.js';

const { values } = parseArgs({
  options: { size: { type: 'string', default: '1m' }, 'data-dir': { type: 'string' }, runs: { type: 'string', default: '5' } },
});
const spans = parseSize(values.size!);
const dataDir = values['data-dir'] ?? join(tmpdir(), `tracelake-aggregate-${values.size}`);
const runs = Number(values.runs);
const log = (s: string) => process.stderr.write(`${s}\n`);

const info = await ensureTemplate(dataDir, spans, DEFAULT_SEED, 5000, log);
const parent = mkdtempSync(join(tmpdir(), 'tracelake-aggregate-run-'));
const load = await openCopy(dataDir, info, parent);
const { store, projectId, logStreamId } = load;
const tokens = [
  { op: 'sum', column_id: 'metrics/num_input_tokens', alias: 'input_tokens' },
  { op: 'sum', column_id: 'metrics/num_output_tokens', alias: 'output_tokens' },
];
const questions: [string, 'span' | 'trace', Record<string, unknown>][] = [
  [
    'hourly series: count, p50/p95 duration, token sums (traces)',
    'trace',
    {
      group_by: [{ column_id: 'created_at', interval: '1h' }],
      measures: [
        { op: 'count' },
        { op: 'p50', column_id: 'metrics/duration_ns', alias: 'p50' },
        { op: 'p95', column_id: 'metrics/duration_ns', alias: 'p95' },
        ...tokens,
      ],
    },
  ],
  [
    'grouped by model: count, token sums, cost (llm spans)',
    'span',
    {
      filters: [{ type: 'text', column_id: 'type', operator: 'eq', value: 'llm' }],
      group_by: ['model'],
      measures: [{ op: 'count' }, ...tokens, { op: 'sum', column_id: 'metrics/cost' }],
    },
  ],
  [
    'overview first chart: traces, p50/p95/p99 latency in auto buckets',
    'trace',
    {
      group_by: [{ column_id: 'created_at', interval: 'auto' }],
      measures: [
        { op: 'count' },
        { op: 'p50', column_id: 'metrics/duration_ns', alias: 'p50' },
        { op: 'p95', column_id: 'metrics/duration_ns', alias: 'p95' },
        { op: 'p99', column_id: 'metrics/duration_ns', alias: 'p99' },
      ],
    },
  ],
  [
    'hourly series: count, p50/p95 duration, token sums (every span)',
    'span',
    {
      group_by: [{ column_id: 'created_at', interval: '1h' }],
      measures: [
        { op: 'count' },
        { op: 'p50', column_id: 'metrics/duration_ns', alias: 'p50' },
        { op: 'p95', column_id: 'metrics/duration_ns', alias: 'p95' },
        ...tokens,
      ],
    },
  ],
];
const results: Record<string, unknown>[] = [];
try {
  for (const [name, level, body] of questions) {
    const ask = () => store.aggregate(level, projectId, { log_stream_id: logStreamId, ...body } as never);
    const first = await ask();
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      await ask();
      times.push(performance.now() - t);
    }
    const row = {
      question: name,
      rows: first.rows.length,
      interval: first.interval ?? null,
      median_ms: Number(median(times).toFixed(1)),
      min_ms: Number(Math.min(...times).toFixed(1)),
      max_ms: Number(Math.max(...times).toFixed(1)),
    };
    results.push(row);
    log(`${name}: ${fmt(row.median_ms)} ms (${fmt(row.min_ms)}-${fmt(row.max_ms)}), ${row.rows} rows`);
  }
} finally {
  await store.close();
  rmSync(parent, { recursive: true, force: true });
}
process.stdout.write(`${JSON.stringify({ size: values.size, spans: info.loaded ?? spans, load_average: loadavg(), results }, null, 2)}\n`);
