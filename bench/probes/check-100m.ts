// Checks the 100M-span store of build-100m.ts against the 10M export it was derived from, and asks
// tracelake each peer question once (a copy of the store: segment files hard-linked, see copyStore).
// Expected answers at 100M come from the 10M export with DuckDB, by the copy scheme (ten disjoint
// copies, copy k a week later than copy k-1, ids remapped in an order-keeping way within a copy):
// - counts (count-tree, text-count, the deletes): exactly 10x the 10M count;
// - newest-first pages (page-filtered, text-page): copy 9's ids of the 10M page (copy 9 is newest);
// - pages sorted by a value (page-sorted-metric, rollup-trace): the top 100 of the 10M top 100 in all
//   ten copies (every copy orders its rows as the template does, so the union's top 100 lies there);
// - metric-columns: the 10M list.
//   node --import tsx bench/probes/check-100m.ts [--store /work/data-100m] [--base /work/h23-tmp/base-keep.parquet] [--work /work/h23-tmp/check]
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance, type DuckDBValue } from '../../src/vendor/duckdb.js';
import { TraceStore } from '../../src/engine/trace-store.js';
import { COPIES, COPY_DIGITS } from '../build-100m.js';
import { peakRssMiB } from '../common.js';
import { LibraryLoad } from '../peers/library-load.js';
import type { Answer } from '../peers/peer.js';
import { copyStore, type TemplateInfo } from '../peers/store-template.js';
import { TracelakePeer } from '../peers/tracelake-peer.js';
import { QUESTIONS, type Question } from '../workload.js';

const { values } = parseArgs({
  options: {
    store: { type: 'string', default: '/work/data-100m' },
    base: { type: 'string', default: '/work/h23-tmp/base-keep.parquet' },
    work: { type: 'string', default: '/work/h23-tmp/check' },
    out: { type: 'string', default: 'bench/results/2026-11-24-100m-check.json' },
    deletes: { type: 'string', default: '2' },
    expected: { type: 'string', default: '/work/h23-tmp/expected-100m.json' },
    'expected-only': { type: 'boolean', default: false },
  },
});
const log = (s: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${s}\n`);
const remap = (id: string, k: number) => (k === 0 ? id : `${id.slice(0, 14)}${COPY_DIGITS[k - 1]}${id.slice(15)}`);
const byKeyThenId = (a: { v: number | null; id: string }, b: { v: number | null; id: string }) =>
  a.v === b.v ? (a.id < b.id ? 1 : a.id > b.id ? -1 : 0) : a.v === null ? 1 : b.v === null ? -1 : b.v - a.v;

// ---- expected answers from the 10M export (cached in --expected: they never change) ----
const expected = new Map<string, Answer[]>();
const at10m = new Map<string, Answer[]>();
if (existsSync(values.expected!)) {
  const cached = JSON.parse(readFileSync(values.expected!, 'utf8')) as { expected: [string, Answer[]][]; at10m: [string, Answer[]][] };
  for (const [k, v] of cached.expected) expected.set(k, v);
  for (const [k, v] of cached.at10m) at10m.set(k, v);
} else {
  const db = await DuckDBInstance.create(':memory:', { threads: '2', memory_limit: '3GB' });
  const c = await db.connect();
  await c.run(
    `CREATE VIEW spans AS SELECT * FROM read_parquet('${values.base!.replaceAll("'", "''")}') WHERE type NOT IN ('trace', 'session')`,
  );
  const rows = async (sql: string, params: DuckDBValue[] = []) => (await c.runAndReadAll(sql, params)).getRowObjectsJS();
  const topOfCopies = (top: { id: string; v: number | null }[]) =>
    top
      .flatMap((r) => Array.from({ length: COPIES }, (_, k) => ({ id: remap(r.id, k), v: r.v })))
      .sort(byKeyThenId)
      .slice(0, 100)
      .map((r) => r.id);
  for (const q of QUESTIONS) {
    const t = performance.now();
    const params = q.variants[0]! as DuckDBValue[];
    if (q.id === 'delete-filter') {
      // The harness deletes variant i on run i of one copy: each count leaves out the earlier variants' rows.
      const n = Number(values.deletes);
      const exp: Answer[] = [];
      const ten: Answer[] = [];
      for (let i = 0; i < n; i++) {
        const [type, tag] = q.variants[i]! as [string, string];
        const earlier = q.variants
          .slice(0, i)
          .map((v) => `AND NOT list_contains(tags, '${String(v[1])}')`)
          .join(' ');
        const got = Number(
          (await rows(`SELECT count(*) AS n FROM spans WHERE type = $1 AND list_contains(tags, $2) ${earlier}`, [type, tag]))[0]!['n'],
        );
        ten.push({ count: got });
        exp.push({ count: got * COPIES });
      }
      at10m.set(q.id, ten);
      expected.set(q.id, exp);
    } else if (q.answer === 'count') {
      const n = Number((await rows(q.sql.duckdb, params))[0]!['n']);
      at10m.set(q.id, [{ count: n }]);
      expected.set(q.id, [{ count: n * COPIES }]);
    } else if (q.id === 'page-filtered' || q.id === 'text-page') {
      const ids = (await rows(q.sql.duckdb, params)).map((r) => String(r['id']));
      at10m.set(q.id, [{ ids }]);
      expected.set(q.id, [{ ids: ids.map((id) => remap(id, COPIES - 1)) }]);
    } else if (q.id === 'page-sorted-metric') {
      const top = (
        await rows(
          `SELECT id, metrics['correctness'] AS v FROM spans WHERE type = $1 ORDER BY v DESC NULLS LAST, id DESC LIMIT 100`,
          params,
        )
      ).map((r) => ({ id: String(r['id']), v: r['v'] === null ? null : Number(r['v']) }));
      at10m.set(q.id, [{ ids: top.map((r) => r.id) }]);
      expected.set(q.id, [{ ids: topOfCopies(top) }]);
    } else if (q.id === 'rollup-trace') {
      const top = (
        await rows(
          "SELECT trace_id AS id, sum(metrics['num_total_tokens']) AS v FROM spans WHERE metrics['num_total_tokens'] IS NOT NULL " +
            'GROUP BY trace_id ORDER BY v DESC, trace_id DESC LIMIT 100',
        )
      ).map((r) => ({ id: String(r['id']), v: Number(r['v']) }));
      at10m.set(q.id, [{ ids: top.map((r) => r.id) }]);
      expected.set(q.id, [{ ids: topOfCopies(top) }]);
    } else {
      const ids = (await rows(q.sql.duckdb, params)).map((r) => String(r['id']));
      at10m.set(q.id, [{ ids }]);
      expected.set(q.id, [{ ids }]);
    }
    log(
      `expected ${q.id}: ${JSON.stringify(expected.get(q.id)!.map((a) => a.count ?? `${a.ids!.length} ids`))} ` +
        `(${((performance.now() - t) / 1000).toFixed(1)} s)`,
    );
  }
  c.closeSync();
  writeFileSync(values.expected!, JSON.stringify({ expected: [...expected], at10m: [...at10m] }));
}
if (values['expected-only']) process.exit(0);

// ---- tracelake at 100M, on a copy ----
const info = JSON.parse(readFileSync(join(values.store!, 'built.json'), 'utf8')) as TemplateInfo;
if (existsSync(values.work!)) rmSync(values.work!, { recursive: true, force: true });
const dir = join(values.work!, 'tracelake');
let t = performance.now();
const linked = copyStore(join(values.store!, 'tracelake'), dir);
const copyMs = performance.now() - t;
const manifestBytes = statSync(join(dir, 'manifest.json')).size;
const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as {
  segments: { kind: string; rows: number; row_groups: unknown[] }[];
  dead: unknown[];
};
const before = process.memoryUsage();
t = performance.now();
const store = await TraceStore.open(dir, info.open ?? {});
const openMs = performance.now() - t;
const afterOpen = process.memoryUsage();
const peer = new TracelakePeer();
await peer.adopt(LibraryLoad.adopt(dir, store, info.projectId, info.logStreamId));
const results: Record<string, unknown>[] = [];
let ok = true;
const same = (a: Answer, b: Answer) => a.count === b.count && JSON.stringify(a.ids ?? null) === JSON.stringify(b.ids ?? null);
const ask = async (q: Question, variant: number, exp: Answer) => {
  const load = loadavg()[0]!;
  const t0 = performance.now();
  const cpu = process.cpuUsage();
  const got = await peer.ask(q, variant);
  const u = process.cpuUsage(cpu);
  const ms = performance.now() - t0;
  const agree = same(got, exp);
  ok &&= agree;
  const r = {
    question: q.id,
    variant,
    ms,
    cpuMs: (u.user + u.system) / 1000,
    load,
    agree,
    got: got.count ?? `${got.ids!.length} ids`,
    expected: exp.count ?? `${exp.ids!.length} ids`,
    ...(agree ? {} : { gotIds: got.ids?.slice(0, 5), expectedIds: exp.ids?.slice(0, 5) }),
  };
  results.push(r);
  log(
    `${q.id}[${variant}]: ${ms.toFixed(0)} ms (${r.cpuMs.toFixed(0)} CPU ms, load ${load.toFixed(1)}) ` +
      `${agree ? 'AGREES' : '!!! DIFFERS'}: ${String(r.got)} vs ${String(r.expected)}`,
  );
};
try {
  for (const q of QUESTIONS.filter((x) => !x.mutates)) await ask(q, 0, expected.get(q.id)![0]!);
  // Asked twice more: the first ask of a question fills caches (top-k lists, footers).
  for (const q of QUESTIONS.filter((x) => !x.mutates)) await ask(q, 0, expected.get(q.id)![0]!);
  const del = QUESTIONS.find((x) => x.mutates)!;
  for (let i = 0; i < Number(values.deletes); i++) await ask(del, i, expected.get(del.id)![i]!);
} finally {
  t = performance.now();
  await store.close();
  results.push({ question: 'close', ms: performance.now() - t });
}
const facts = {
  store: values.store,
  loaded: info.loaded,
  copyMs,
  linked,
  openMs,
  rssAfterOpenMiB: afterOpen.rss / 2 ** 20,
  arrayBuffersAfterOpenMiB: afterOpen.arrayBuffers / 2 ** 20,
  arrayBuffersBeforeMiB: before.arrayBuffers / 2 ** 20,
  peakRssMiB: peakRssMiB(),
  manifestBytes,
  segments: manifest.segments.length,
  spanSegments: manifest.segments.filter((s) => s.kind === 'span').length,
  rowGroups: manifest.segments.reduce((n, s) => n + s.row_groups.length, 0),
  deadBefore: manifest.dead.length,
};
log(JSON.stringify(facts));
writeFileSync(
  values.out!,
  `${JSON.stringify(
    {
      when: new Date().toISOString(),
      allAgree: ok,
      facts,
      at10m: Object.fromEntries([...at10m].map(([k, v]) => [k, v.map((a) => a.count ?? a.ids)])),
      results,
    },
    null,
    2,
  )}\n`,
);
rmSync(values.work!, { recursive: true, force: true });
log(ok ? 'every answer agrees with the 10M-derived expectation' : '!!! SOME ANSWERS DIFFER');
process.exitCode = ok ? 0 : 1;
