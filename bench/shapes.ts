// The shape matrix: every filter kind, with and without a `type` leaf, with and without a metric in the
// selection, sorted by time, by a metric and by text, plus a count of each filter; and the two
// questions it was first built for. Each shape runs through the tracelake library and as a hand-written
// DuckDB query over the same span segments that gives the same answer (checked), and is reported with
// both times, their ratio and the steps tracelake's plan ran. Where tracelake's answer needs roll-ups
// (a metric read for spans that have children), the hand-written query computes them too, in the
// cheapest form we know. Only ratios within one run mean anything on a shared machine.
import { DuckDBInstance, type DuckDBConnection } from '../src/vendor/duckdb.js';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TraceStore } from '../src/engine/trace-store.js';
import { BENCH_STORE } from './peers/library-load.js';
import type { LogTracesRequest } from '../src/schemas/ingest.js';
import { fmt, median, type Measurement } from './common.js';
import { spanSegments } from './peers/duckdb-raw-peer.js';
import { PAGE, spanBatches } from './workload.js';

type Obj = Record<string, unknown>;

interface FilterKind {
  name: string;
  leaf: Obj;
  /** The same test in hand-written SQL over `r` (metric value: `M`). */
  sql: string;
  /** Whether every row it admits is childless in this data (llm-only columns, has_children false). */
  childless: boolean;
  readsMetric?: boolean;
}

interface Shape {
  name: string;
  count: boolean;
  /** The page shows the metric (own value, else the roll-up): the answer includes it (`v`). */
  shows?: boolean;
  body: Obj;
  sql: string;
}

/** A shown metric value, to 9 significant digits (sums of doubles depend on the order they are read in). */
const shown = (v: unknown) => (v === null || v === undefined ? '-' : Number(v).toPrecision(9));
const q = (s: string) => `'${s.replaceAll("'", "''")}'`;
/**
 * What a page returns for each record whatever was selected (tracelake's partial records carry these
 * base fields, as the API does), so the hand-written query gives the same answer only if it reads them.
 * project_id and run_id are one value for the whole scope, so they are left out of both sides.
 */
const BASE = ['id', 'type', 'session_id', 'trace_id', 'parent_id'] as const;
const BASE_SQL = BASE.map((c) => `r.${c}`).join(', ');
const baseOf = (r: Obj) => BASE.map((c) => String(r[c] ?? '-')).join(' ');
const METRIC = 'correctness';

function filterKinds(midUs: number, traceIds: string[]): FilterKind[] {
  return [
    {
      name: 'text eq (model)',
      leaf: { type: 'text', column_id: 'model', operator: 'eq', value: 'gpt-4o' },
      sql: `r.model = 'gpt-4o'`,
      childless: true,
    },
    {
      name: 'text contains (input, any case)',
      leaf: { type: 'text', column_id: 'input', operator: 'contains', value: 'warranty', case_sensitive: false },
      sql: `contains(lower(r.input), 'warranty')`,
      childless: false,
    },
    {
      name: 'collection (tags)',
      leaf: { type: 'collection', column_id: 'tags', operator: 'contains', value: 'beta' },
      sql: `list_contains(r.tags, 'beta')`,
      childless: false,
    },
    {
      name: 'id one_of (20 traces)',
      leaf: { type: 'id', column_id: 'trace_id', operator: 'one_of', value: traceIds },
      sql: `(r.trace_id IN (${traceIds.map(q).join(', ')}) AND list_contains([${traceIds.map(q).join(', ')}], r.trace_id))`,
      childless: false,
    },
    {
      name: 'date (newer half)',
      leaf: { type: 'date', column_id: 'created_at', operator: 'gte', value: new Date(midUs / 1000).toISOString() },
      sql: `r.created_at >= make_timestamp(${midUs})`,
      childless: false,
    },
    {
      name: 'number (status 500)',
      leaf: { type: 'number', column_id: 'status_code', operator: 'eq', value: 500 },
      sql: 'r.status_code = 500',
      childless: false,
    },
    {
      name: 'metric (correctness > 0.8)',
      leaf: { type: 'number', column_id: `metrics/${METRIC}`, operator: 'gt', value: 0.8 },
      sql: 'M > 0.8',
      childless: false,
      readsMetric: true,
    },
    {
      name: 'boolean (childless)',
      leaf: { type: 'boolean', column_id: 'has_children', operator: 'eq', value: false },
      sql: 'NOT r.has_children',
      childless: true,
    },
  ];
}

const SORTS = [
  { name: 'time', api: null, sql: 'r.created_at DESC, r.id DESC', metric: false },
  { name: 'metric', api: { column_id: `metrics/${METRIC}`, ascending: false }, sql: 'M DESC NULLS LAST, r.id DESC', metric: true },
  { name: 'text', api: { column_id: 'name', ascending: true }, sql: 'r.name ASC NULLS LAST, r.id ASC', metric: false },
] as const;

/** FROM (with the roll-up a metric read over spans with children needs) and the metric expression. */
function from(col: string, rollUp: boolean): { with: string; from: string; m: string } {
  if (!rollUp) return { with: '', from: 'spans r', m: `r.${col}` };
  return {
    with: `WITH RECURSIVE d AS (SELECT id, parent_id, trace_id, has_children, ${col} AS v FROM spans),
      par AS (SELECT id, parent_id FROM d WHERE has_children AND parent_id <> trace_id),
      up(anc, v) AS (SELECT parent_id, v FROM d WHERE v IS NOT NULL AND parent_id <> trace_id
        UNION ALL SELECT p.parent_id, up.v FROM up JOIN par p ON p.id = up.anc),
      ru AS (SELECT anc AS id, avg(v) AS v FROM up GROUP BY anc) `,
    from: 'spans r LEFT JOIN ru ON ru.id = r.id',
    m: `coalesce(r.${col}, ru.v)`,
  };
}

/**
 * A page that shows the metric: the page's rows, then (as tracelake's metric_info does) the roll-up
 * of the metric for rows on it that have children but no value of their own, from the spans of their
 * traces only. When `full` holds every span's roll-up already (a metric filter or sort), the page reads
 * it from there.
 */
function shownPage(col: string, where: string, order: string, full: ReturnType<typeof from>, rollUp: boolean): string {
  if (!rollUp)
    return (
      `${full.with}SELECT ${BASE_SQL}, r.${col} AS v FROM ${full.from} WHERE ${where.replaceAll('M', full.m)} ` +
      `ORDER BY ${order.replaceAll('M', full.m)} LIMIT ${PAGE}`
    );
  if (full.with)
    return (
      `${full.with}SELECT ${BASE_SQL}, ${full.m} AS v FROM ${full.from} WHERE ${where.replaceAll('M', full.m)} ` +
      `ORDER BY ${order.replaceAll('M', full.m)} LIMIT ${PAGE}`
    );
  const key = order.includes('created_at') ? 'r.created_at' : 'r.name';
  return `WITH RECURSIVE p AS (SELECT ${BASE_SQL}, ${key}, r.has_children, r.${col} AS own FROM spans r WHERE ${where} ORDER BY ${order} LIMIT ${PAGE}),
    d AS (SELECT id, parent_id, trace_id, ${col} AS v FROM spans WHERE trace_id IN (SELECT trace_id FROM p WHERE has_children AND own IS NULL)),
    up(anc, v) AS (SELECT parent_id, v FROM d WHERE v IS NOT NULL AND parent_id <> trace_id
      UNION ALL SELECT d.parent_id, up.v FROM up JOIN d ON d.id = up.anc WHERE d.parent_id <> d.trace_id),
    ru AS (SELECT anc, avg(v) AS v FROM up GROUP BY anc)
    SELECT ${BASE_SQL}, coalesce(r.own, CASE WHEN r.has_children THEN ru.v END) AS v FROM p r LEFT JOIN ru ON ru.anc = r.id ORDER BY ${order}`;
}

function shapes(kinds: FilterKind[], col: string): Shape[] {
  const out: Shape[] = [];
  const typeLeaf = { type: 'text', column_id: 'type', operator: 'eq', value: 'llm' };
  for (const k of kinds) {
    for (const typed of [false, true]) {
      const leaves = typed ? [typeLeaf, k.leaf] : [k.leaf];
      const where = typed ? `r.type = 'llm' AND ${k.sql}` : k.sql;
      const childless = typed || k.childless;
      const name = `${k.name}${typed ? ' + type' : ''}`;
      const c = from(col, Boolean(k.readsMetric) && !childless);
      out.push({
        name: `count: ${name}`,
        count: true,
        body: { filters: leaves },
        sql: `${c.with}SELECT count(*) AS n FROM ${c.from} WHERE ${where.replaceAll('M', c.m)}`,
      });
      for (const selected of [false, true]) {
        for (const sort of SORTS) {
          const f = from(col, (Boolean(k.readsMetric) || sort.metric) && !childless);
          out.push({
            name: `page: ${name}, by ${sort.name}${selected ? ', with metric' : ''}`,
            count: false,
            shows: selected,
            body: {
              filters: leaves,
              ...(sort.api ? { sort: sort.api } : {}),
              pagination: { starting_token: 0, limit: PAGE },
              select_columns: { column_ids: ['id'], ...(selected ? { metric_columns_names: [METRIC] } : {}) },
            },
            sql: selected
              ? shownPage(col, where, sort.sql, f, !childless)
              : `${f.with}SELECT ${BASE_SQL} FROM ${f.from} WHERE ${where.replaceAll('M', f.m)} ORDER BY ${sort.sql.replaceAll('M', f.m)} LIMIT ${PAGE}`,
          });
        }
      }
    }
  }
  return out;
}

/** The two questions the matrix was first built for ("issue 1", "issue 2"), as asked and with the variant found fast. */
function issueShapes(col: string): Shape[] {
  const model = { type: 'text', column_id: 'model', operator: 'eq', value: 'gpt-4o' };
  const metric = { type: 'number', column_id: `metrics/${METRIC}`, operator: 'gt', value: 0.5 };
  const tags = { type: 'collection', column_id: 'tags', operator: 'contains', value: 'prod' };
  const type = { type: 'text', column_id: 'type', operator: 'eq', value: 'llm' };
  const countSql = (typed: boolean) =>
    `SELECT count(*) AS n FROM spans r WHERE ${typed ? "r.type = 'llm' AND " : ''}r.model = 'gpt-4o' AND r.${col} > 0.5 AND list_contains(r.tags, 'prod')`;
  const page = (sel: Obj) => ({
    filters: [type],
    sort: { column_id: `metrics/${METRIC}`, ascending: false },
    pagination: { starting_token: 0, limit: PAGE },
    select_columns: sel,
  });
  const pageSql = (select: string) =>
    `SELECT ${select} FROM spans r WHERE r.type = 'llm' ORDER BY r.${col} DESC NULLS LAST, r.id DESC LIMIT ${PAGE}`;
  return [
    { name: 'issue 1: count model + metric + tags', count: true, body: { filters: [model, metric, tags] }, sql: countSql(false) },
    { name: 'issue 1, fast variant: + type llm', count: true, body: { filters: [type, model, metric, tags] }, sql: countSql(true) },
    {
      name: 'issue 2: llm page by metric, selecting the metric',
      count: false,
      shows: true,
      body: page({ metric_columns_names: [METRIC] }),
      sql: pageSql(`${BASE_SQL}, r.${col} AS v`),
    },
    { name: 'issue 2, fast variant: selecting id only', count: false, body: page({ column_ids: ['id'] }), sql: pageSql(BASE_SQL) },
  ];
}

export interface ShapeResult {
  name: string;
  tracelake_ms: number;
  duckdb_ms: number;
  ratio: number;
  tracelake_cpu_ms: number;
  duckdb_cpu_ms: number;
  cpu_ratio: number;
  steps: string;
}

/**
 * `keep`: a folder that holds the store between runs (made on the first run, reused after, never
 * removed), so old and new builds can be compared on the same files without logging them again.
 */
export async function benchShapes(
  spans: number,
  runs = 3,
  match?: string,
  keep?: string,
): Promise<{ results: ShapeResult[]; measurements: Measurement[]; table: string }> {
  const dir = keep ?? mkdtempSync(join(tmpdir(), 'tracelake-shapes-'));
  const idsFile = join(dir, 'shapes-ids.json');
  const reuse = keep !== undefined && existsSync(idsFile);
  if (keep !== undefined) mkdirSync(keep, { recursive: true });
  let steps: readonly string[] = [];
  const store = await TraceStore.open(join(dir, 'tracelake'), { ...BENCH_STORE, onPlan: (s) => (steps = s) });
  let conn: DuckDBConnection | null = null;
  let instance: DuckDBInstance | null = null;
  try {
    let projectId: string;
    let runId: string;
    if (reuse) ({ projectId, runId } = JSON.parse(readFileSync(idsFile, 'utf8')) as { projectId: string; runId: string });
    else {
      projectId = store.createProject({ name: 'shapes' }).id;
      runId = store.createLogStream(projectId, 'bench').id;
      for (const b of spanBatches({ spans }))
        await store.logTraces(projectId, { log_stream_id: runId, reliable: true, traces: b.traces } as unknown as LogTracesRequest);
      await store.flush();
      await store.maintenance.compact();
      if (keep !== undefined) writeFileSync(idsFile, JSON.stringify({ projectId, runId }));
    }
    const files = spanSegments(join(dir, 'tracelake'));
    const ids = JSON.parse(readFileSync(join(dir, 'tracelake', 'manifest.json'), 'utf8')).metric_ids as Record<string, number>;
    const col = `m${ids[METRIC]}`;
    instance = await DuckDBInstance.create(':memory:');
    conn = await instance.connect();
    await conn.run('SET parquet_metadata_cache = true');
    await conn.run(
      `CREATE VIEW spans AS SELECT * FROM read_parquet([${[...files].reverse().map(q).join(', ')}], hive_partitioning = false, union_by_name = true)`,
    );
    const c = conn;
    const one = async (sql: string) => (await c.runAndReadAll(sql)).getRowObjectsJS();
    const midUs = Number((await one('SELECT epoch_us(quantile_disc(created_at, 0.5)) AS m FROM spans'))[0]!['m']);
    const traceIds = (await one('SELECT DISTINCT trace_id FROM spans ORDER BY trace_id LIMIT 20')).map((r) => String(r['trace_id']));
    const all = [...issueShapes(col), ...shapes(filterKinds(midUs, traceIds), col)].filter(
      (s) => match === undefined || match.split('|').some((m) => s.name.includes(m)),
    );
    const results: ShapeResult[] = [];
    for (const s of all) {
      const viaStore = async () => {
        const body = { ...s.body, log_stream_id: runId };
        if (s.count) return [String((await store.count('span', projectId, body)).total_count)];
        const records = (await store.partialSearch('span', projectId, body)).records;
        return records.map((r) =>
          s.shows ? `${baseOf(r)} ${shown((r['metric_info'] as Record<string, { value?: unknown }> | null)?.[METRIC]?.value)}` : baseOf(r),
        );
      };
      const viaSql = async () =>
        (await one(s.sql)).map((r) => (s.count ? String(r['n']) : s.shows ? `${baseOf(r)} ${shown(r['v'])}` : baseOf(r)));
      const a = await viaStore();
      const planned = steps.join(' → ');
      const b = await viaSql();
      if (JSON.stringify(a) !== JSON.stringify(b))
        throw new Error(
          `shape "${s.name}": tracelake and hand-written DuckDB disagree (${a.length} vs ${b.length} rows; first ${a[0]} vs ${b[0]})`,
        );
      const tl: number[] = [];
      const raw: number[] = [];
      const tlCpu: number[] = [];
      const rawCpu: number[] = [];
      // Wall time and the process's CPU time (DuckDB's threads run in this process): on a shared
      // machine a plan of several statements waits for a core before each, so wall ratios swing with
      // the load while CPU ratios say what each side costs.
      const timed = async (f: () => Promise<unknown>, wall: number[], cpu: number[]) => {
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        await f();
        wall.push(performance.now() - t0);
        const c = process.cpuUsage(c0);
        cpu.push((c.user + c.system) / 1000);
      };
      for (let i = 0; i < runs; i++) {
        await timed(viaStore, tl, tlCpu);
        await timed(viaSql, raw, rawCpu);
      }
      const r: ShapeResult = {
        name: s.name,
        tracelake_ms: median(tl),
        duckdb_ms: median(raw),
        ratio: median(tl) / median(raw),
        tracelake_cpu_ms: median(tlCpu),
        duckdb_cpu_ms: median(rawCpu),
        cpu_ratio: median(tlCpu) / Math.max(median(rawCpu), 0.001),
        steps: planned,
      };
      results.push(r);
      process.stderr.write(
        `  ${r.name}: ${fmt(r.tracelake_ms)} ms vs ${fmt(r.duckdb_ms)} ms (${r.ratio.toFixed(2)}x; CPU ${r.cpu_ratio.toFixed(2)}x) [${planned}]\n`,
      );
    }
    const lines = [
      '| shape | tracelake ms | hand-written DuckDB ms | ratio | CPU ms: tracelake / DuckDB | CPU ratio | plan steps |',
      '|---|---:|---:|---:|---:|---:|---|',
    ];
    for (const r of [...results].sort((x, y) => y.ratio - x.ratio))
      lines.push(
        `| ${r.name} | ${fmt(r.tracelake_ms)} | ${fmt(r.duckdb_ms)} | ${r.ratio.toFixed(2)} | ` +
          `${fmt(r.tracelake_cpu_ms)} / ${fmt(r.duckdb_cpu_ms)} | ${r.cpu_ratio.toFixed(2)} | ${r.steps} |`,
      );
    const above = (f: (r: ShapeResult) => number) => results.filter((r) => f(r) > 1.5).length;
    lines.push('', `${results.length} shapes: ${above((r) => r.ratio)} above 1.5x by wall time, ${above((r) => r.cpu_ratio)} by CPU time.`);
    const measurements = results.map((r) => ({
      name: r.name,
      value: r.tracelake_ms,
      unit: 'ms',
      duckdb_ms: r.duckdb_ms,
      ratio: r.ratio,
      tracelake_cpu_ms: r.tracelake_cpu_ms,
      duckdb_cpu_ms: r.duckdb_cpu_ms,
      cpu_ratio: r.cpu_ratio,
      steps: r.steps,
    }));
    return { results, measurements, table: lines.join('\n') };
  } finally {
    conn?.closeSync();
    instance?.closeSync();
    await store.close();
    if (keep === undefined) rmSync(dir, { recursive: true, force: true });
  }
}
