// Where a 1% delete's time goes, step by step: on a copy of a peer-benchmark template
// (store-template.ts), the peer delete question for each tag given, with every SQL statement the
// delete runs (wall time, first words), the log entry's encoding and write, the in-memory inserts of
// the marks, and the process's peak RSS. The steps are timed by wrapping the classes' methods here, so
// the probe runs unchanged on old and new code.
//   node --import tsx bench/probes/delete-timings.ts /work/data-10m [canary,eval]
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Connection } from '../../src/db/database.js';
import { compile } from '../../src/query/sql.js';
import { Appender } from '../../src/storage/memtable/appender.js';
import { MemInserter } from '../../src/storage/memtable/mem-tables.js';
import { WriteAheadLog } from '../../src/storage/wal/wal.js';
import { openCopy, type TemplateInfo } from '../peers/store-template.js';
import { QUESTIONS, questionById } from '../workload.js';

const [dataDir, tagList = 'canary,eval'] = process.argv.slice(2);
if (!dataDir) throw new Error('usage: delete-timings.ts <data-dir> [tags]');
const info = JSON.parse(readFileSync(join(dataDir, 'built.json'), 'utf8')) as TemplateInfo;

let steps: { step: string; ms: number }[] | null = null;
let t0 = 0;
const note = (step: string, from: number) =>
  steps?.push({ step: `${step} @${Math.round(from - t0)}`, ms: Math.round(performance.now() - from) });
function wrap<T extends object>(proto: T, name: string, label: (args: unknown[]) => string): void {
  const p = proto as Record<string, (...a: unknown[]) => unknown>;
  const fn = p[name]!;
  p[name] = function (this: unknown, ...args: unknown[]) {
    if (steps === null) return fn.apply(this, args);
    const t = performance.now();
    const out = fn.apply(this, args);
    if (out instanceof Promise) return out.finally(() => note(label(args), t));
    note(label(args), t);
    return out;
  };
}
const sqlHead = (args: unknown[]) => {
  const { text, params } = compile(args[0] as never);
  if (process.env['DELETE_TIMINGS_SQL'])
    appendFileSync(process.env['DELETE_TIMINGS_SQL'], `${text}\n-- params: ${JSON.stringify(params).slice(0, 300)}\n\n`);
  const bytes = params.reduce<number>((n, p) => n + (typeof p === 'string' ? p.length : Array.isArray(p) ? p.length : 1), 0);
  return `${text.replace(/\s+/g, ' ').slice(0, 110)} [${params.length} params, ${bytes} units]`;
};
wrap(Connection.prototype, 'all', (a) => `sql all: ${sqlHead(a)}`);
wrap(Connection.prototype, 'run', (a) => `sql run: ${sqlHead(a)}`);
wrap(Connection.prototype, 'runPolled', (a) => `sql polled: ${sqlHead(a)}`);
wrap(WriteAheadLog.prototype, 'append', (a) => `wal append ${(a[0] as Uint8Array).length} bytes (to durable)`);
wrap(
  MemInserter.prototype,
  'insert',
  (a) => `mem insert dead=${(a[2] as unknown[]).length} childless=${(a[3] as unknown[] | undefined)?.length ?? 0}`,
);
wrap(Appender.prototype, 'deleteSeqs', (a) => `deleteSeqs total seqs=${(a[0] as unknown[]).length}`);

/** Median wall time (ms) of a few peer questions: asked before and after the deletes, what the dead marks cost reads. */
async function reads(load: Awaited<ReturnType<typeof openCopy>>): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const id of (process.env['DELETE_TIMINGS_READS'] ?? 'count-tree,page-filtered,rollup-trace').split(',').filter(Boolean)) {
    const rq = questionById(id);
    const call = rq.api(rq.variants[0]!);
    const level = call.level === 'traces' ? 'trace' : 'span';
    const body = { ...(call.body as object), log_stream_id: load.logStreamId };
    const ask = () =>
      call.op === 'count'
        ? load.store.count(level, load.projectId, body as never)
        : load.store.partialSearch(level, load.projectId, body as never);
    await ask();
    const wall: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      await ask();
      wall.push(performance.now() - t);
    }
    out[id] = Math.round(wall.sort((a, b) => a - b)[1]!);
  }
  return out;
}

const parent = mkdtempSync(join(dataDir, '..', 'delete-timings-'));
const load = await openCopy(dataDir, info, parent);
try {
  const q = QUESTIONS.find((x) => x.id === 'delete-filter')!;
  process.stdout.write(`reads before: ${JSON.stringify(await reads(load))}\n`);
  for (const tag of tagList.split(',')) {
    const body = { ...q.api(['llm', tag]).body, log_stream_id: load.logStreamId };
    // The count a search finds before the delete: the delete must answer the same.
    const before = await load.store.records.count('span', load.projectId, body as never);
    steps = [];
    const cpu0 = process.cpuUsage();
    t0 = performance.now();
    const r = await load.store.records.delete('span', load.projectId, body as never);
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const mine = steps;
    steps = null;
    const after = await load.store.records.count('span', load.projectId, body as never);
    const out = {
      tag,
      ...r,
      countBefore: before.total_count,
      countAfter: after.total_count,
      wallMs: Math.round(ms),
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      rssMiB: Math.round(process.memoryUsage().rss / 2 ** 20),
      maxRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
      loadavg: readFileSync('/proc/loadavg', 'utf8').trim(),
    };
    process.stdout.write(`${JSON.stringify(out)}\n`);
    for (const s of mine) process.stdout.write(`  ${String(s.ms).padStart(7)} ms  ${s.step}\n`);
  }
  process.stdout.write(`reads after: ${JSON.stringify(await reads(load))}\n`);
  // The seal that follows (it carries the marks into the manifest), with its statements.
  steps = [];
  t0 = performance.now();
  await load.store.records.flush();
  const sealMs = Math.round(performance.now() - t0);
  const sealSteps = steps;
  steps = null;
  process.stdout.write(`seal after the deletes: ${sealMs} ms\n`);
  for (const s of sealSteps) if (s.ms >= 20) process.stdout.write(`  ${String(s.ms).padStart(7)} ms  ${s.step}\n`);
} finally {
  await load.store.close();
  rmSync(parent, { recursive: true, force: true });
}
