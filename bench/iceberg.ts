// Iceberg publish at scale: a store of N spans (the peer benchmark's generated set), its first publish,
// an incremental publish after 100k more spans (time and bytes sent each time: 0 on a local target,
// where segments are hard-linked; with --s3 the bytes uploaded to a local s3rver), and ClickHouse
// (chdb from test/deps, another process) answering a count and a filtered aggregate over the spans
// table beside tracelake's own answers to the same questions.
//   npm run build && node dist/bench/iceberg.js --size 1m [--dir DIR] [--s3] [--out bench/results/<file>.json]
// --dir reuses a store made by an earlier run (its spans are not logged again).
import { existsSync, mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { TraceStore } from '../src/engine/trace-store.js';
import type { PublishResult } from '../src/iceberg/publish.js';
import { chdbQueries, testDepsMissing } from '../test/support/chdb.js';
import { machine, parseSize } from './common.js';
import { spanBatches } from './workload.js';

const { values: a } = parseArgs({
  options: {
    size: { type: 'string' },
    dir: { type: 'string' },
    s3: { type: 'boolean' },
    out: { type: 'string' },
    more: { type: 'string' },
  },
});
const missing = testDepsMissing();
if (missing) throw new Error(missing);
const spans = parseSize(a.size ?? '1m');
const more = parseSize(a.more ?? '100k');
const dir = resolve(a.dir ?? join('bench', 'results', `iceberg-${a.size ?? '1m'}.tmp`));
const root = resolve(dir, '..');
const fresh = !existsSync(join(dir, 'manifest.json'));
mkdirSync(dir, { recursive: true });
const log = (m: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${m} (load ${loadavg()[0]!.toFixed(1)})\n`);

const store = await TraceStore.open(dir);
const projectId = store.findProjects({ name: 'iceberg-bench' })[0]?.id ?? store.createProject({ name: 'iceberg-bench' }).id;
const runId = store.listRuns(projectId).find((r) => r.name === 'bench')?.id ?? store.createLogStream(projectId, 'bench').id;

async function logSpans(n: number, seed: number): Promise<number> {
  const t0 = performance.now();
  let done = 0;
  for (const b of spanBatches({ spans: n, seed })) {
    await store.logTraces(projectId, { log_stream_id: runId, reliable: true, traces: b.traces } as never);
    done += b.rows.length;
    if (done % 500_000 < b.rows.length) log(`${done} spans logged`);
  }
  await store.flush();
  return (performance.now() - t0) / 1000;
}

const results: Record<string, unknown> = { size: spans, machine: machine(), load_before: loadavg() };
if (fresh) {
  results['log_seconds'] = await logSpans(spans, 7);
  await store.maintenance.compact();
}
let s3: { endpoint: string; close(): Promise<void> } | undefined;
let to: string | undefined;
let s3opts: { endpoint: string; accessKeyId: string; secretAccessKey: string } | undefined;
if (a.s3) {
  const { createRequire } = await import('node:module');
  const require = createRequire(resolve('test', 'deps', 'package.json'));
  const S3rver = require('s3rver') as new (o: object) => { run(): Promise<{ port: number }>; close(): Promise<void> };
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: join(root, 'iceberg-bench-s3.tmp'),
    configureBuckets: [{ name: 'lake' }],
  });
  const { port } = await server.run();
  s3 = { endpoint: `http://127.0.0.1:${port}`, close: () => server.close() };
  to = 's3://lake/bench';
  s3opts = { endpoint: s3.endpoint, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
}
const publish = async (what: string): Promise<PublishResult> => {
  const t0 = performance.now();
  const r = await store.iceberg.publish({ ...(to ? { to } : {}), ...(s3opts ? { s3: s3opts } : {}) });
  const sp = r.tables.spans;
  results[what] = {
    seconds: (performance.now() - t0) / 1000,
    bytes_sent: r.bytesSent,
    files_placed: Object.values(r.tables).reduce((n, t) => n + t.filesPlaced, 0),
    span_files: sp.dataFiles,
    span_delete_files: sp.deleteFiles,
    span_rows: sp.rows,
    load: loadavg()[0],
  };
  log(`${what}: ${JSON.stringify(results[what])}`);
  return r;
};
await publish(fresh ? 'first_publish' : 'publish_of_existing_store');
// A seed of its own each run: a reused store gets new spans, not new versions of the last run's.
results['more_log_seconds'] = await logSpans(more, fresh ? 8 : 9 + (Math.floor(Date.now() / 1000) % 100_000));
await publish('incremental_publish');

// The same two questions, tracelake and ClickHouse.
const t1 = performance.now();
const tlCount = (await store.count('span', projectId, { log_stream_id: runId })).total_count;
const tlCountMs = performance.now() - t1;
const t2 = performance.now();
const tlAgg = Number(
  (await store.data.sql("SELECT sum(num_input_tokens) AS s FROM spans WHERE type = 'llm' AND model = $1", ['gpt-4o']))[0]!['s'],
);
const tlAggMs = performance.now() - t2;
await store.close();
const from =
  to && s3
    ? `icebergS3('${s3.endpoint}/lake/bench/spans/', 'S3RVER', 'S3RVER')`
    : `icebergLocal('${join(dir, 'iceberg', 'spans').slice(root.length + 1)}')`;
const t3 = performance.now();
const ch = await chdbQueries(root, [
  `SELECT count() AS n FROM ${from}`,
  `SELECT sum(num_input_tokens) AS s FROM ${from} WHERE type = 'llm' AND model = 'gpt-4o'`,
]);
results['answers'] = {
  tracelake: { count: tlCount, count_ms: tlCountMs, llm_gpt4o_input_tokens: tlAgg, aggregate_ms: tlAggMs },
  clickhouse: {
    count: Number(ch[0]![0]!['n']),
    llm_gpt4o_input_tokens: Number(ch[1]![0]!['s']),
    both_ms_with_process_start: performance.now() - t3,
  },
};
await s3?.close();
results['load_after'] = loadavg();
console.log(JSON.stringify(results, null, 2));
if (a.out) (await import('node:fs')).writeFileSync(a.out, `${JSON.stringify(results, null, 2)}\n`);
