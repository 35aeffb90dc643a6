// Questions on a rolled-up metric (a parent's tokens are the sum of its descendants'), as the viewer
// asks them: its spans table sorted by the Tokens column either way (50 rows of the default columns,
// and the same page as whole records, what the official client's search sends), and spans filtered
// by tokens above a threshold (their count, and the first page newest first). Through the library (a
// fresh open of a linked copy per ask) and the server over HTTP; with --base, another checkout's build
// asks the same in turns. Prints each ask's time, its plan and a digest of the answer (equal digests:
// equal answers). Last, spans sorted by a scorer metric (correctness, an average) both ways.
//   node dist/bench/probes/rolled-metrics.js TEMPLATE_DIR [--base CHECKOUT] [--rounds 2] [--tokens 5000]
// Run from the checkout root (after npm run build). TEMPLATE_DIR holds the fresh matrix's template
// (built.json and tracelake/); the copy goes to /tmp.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { copyStore } from '../peers/store-template.js';
import { startServer } from '../server-process.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { base: { type: 'string' }, rounds: { type: 'string' }, tokens: { type: 'string' } },
});
const template = positionals[0];
if (!template) throw new Error('usage: rolled-metrics.js TEMPLATE_DIR [--base CHECKOUT] [--rounds 2] [--tokens 5000]');
const info = JSON.parse(readFileSync(join(template, 'built.json'), 'utf8')) as { projectId: string; logStreamId: string };
const here = process.cwd(); // run from the checkout's root, as the other probes are
const builds = [here, ...(values.base ? [resolve(values.base)] : [])];
const columns = [
  'type',
  'name',
  'input',
  'output',
  'created_at',
  'metrics/duration_ns',
  'metrics/num_total_tokens',
  'status_code',
  'tags',
  'error_message',
];
const key = 'tl_rolled_sort_probe_key_0123456789';
const over = [{ type: 'number', column_id: 'metrics/num_total_tokens', operator: 'gt', value: Number(values.tokens ?? 5000) }];

const body = (ascending: boolean, metric = 'num_total_tokens') => ({
  log_stream_id: info.logStreamId,
  filters: [],
  sort: { column_id: `metrics/${metric}`, ascending },
  limit: 50,
});
const digest = (records: Record<string, unknown>[]) =>
  createHash('md5')
    .update(JSON.stringify(records.map((r) => [r['id'], r['input'], r['metrics']])))
    .digest('hex')
    .slice(0, 8);

async function library(build: string, dir: string, ascending: boolean, whole: boolean, metric?: string): Promise<string> {
  const { TraceStore } = (await import(join(build, 'dist/src/engine/trace-store.js'))) as typeof import('../../src/engine/trace-store.js');
  let steps: readonly string[] = [];
  const store = await TraceStore.open(dir, { onPlan: (s) => (steps = s) });
  try {
    const t0 = performance.now();
    const page = whole
      ? await store.search('span', info.projectId, body(ascending, metric) as never)
      : await store.partialSearch('span', info.projectId, { ...body(ascending, metric), select_columns: { column_ids: columns } } as never);
    const ms = performance.now() - t0;
    return `${ms.toFixed(0)} ms ${digest(page.records)} ${steps.join(' -> ')}`;
  } finally {
    await store.close();
  }
}

async function filtered(build: string, dir: string): Promise<string> {
  const { TraceStore } = (await import(join(build, 'dist/src/engine/trace-store.js'))) as typeof import('../../src/engine/trace-store.js');
  const plans: string[] = [];
  const store = await TraceStore.open(dir, { onPlan: (s) => plans.push(s.join(' -> ')) });
  try {
    const scope = { log_stream_id: info.logStreamId, filters: over };
    let t0 = performance.now();
    const count = await store.count('span', info.projectId, scope as never);
    const countMs = performance.now() - t0;
    t0 = performance.now();
    const page = await store.partialSearch('span', info.projectId, {
      ...scope,
      limit: 50,
      select_columns: { column_ids: columns },
    } as never);
    const pageMs = performance.now() - t0;
    return `count ${countMs.toFixed(0)} ms (${count.total_count}), page ${pageMs.toFixed(0)} ms ${digest(page.records)} ${plans.join('; ')}`;
  } finally {
    await store.close();
  }
}

async function server(build: string, dir: string, ascending: boolean): Promise<string> {
  const s = await startServer(dir, key, { cli: join(build, 'dist/src/cli.js') });
  try {
    const headers = { 'content-type': 'application/json', 'Galileo-API-Key': key };
    await (await fetch(`${s.url}/projects/all`, { headers })).arrayBuffer();
    const t0 = performance.now();
    const res = await fetch(`${s.url}/projects/${info.projectId}/spans/partial_search`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ ...body(ascending), select_columns: { column_ids: columns } }),
    });
    const page = (await res.json()) as { records: Record<string, unknown>[] };
    return `${(performance.now() - t0).toFixed(0)} ms ${res.status} ${digest(page.records)}`;
  } finally {
    await s.stop();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'tracelake-rolled-'));
try {
  copyStore(join(template, 'tracelake'), dir);
  for (let round = 1; round <= Number(values.rounds ?? 2); round++) {
    for (const build of builds) {
      for (const ascending of [false, true]) {
        const way = ascending ? 'asc ' : 'desc';
        for (const whole of [false, true])
          console.log(`${round} ${build} ${way} library ${whole ? 'whole' : 'shown'}: ${await library(build, dir, ascending, whole)}`);
        console.log(`${round} ${build} ${way} server  shown: ${await server(build, dir, ascending)}`);
      }
      console.log(`${round} ${build} tokens > ${over[0]!.value} library: ${await filtered(build, dir)}`);
      // A scorer metric (an average roll-up) whose best and worst values many spans share.
      for (const ascending of [false, true])
        console.log(
          `${round} ${build} correctness ${ascending ? 'asc ' : 'desc'} library shown: ${await library(build, dir, ascending, false, 'correctness')}`,
        );
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
