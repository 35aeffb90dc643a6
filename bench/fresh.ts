// The fresh-question matrix: the questions a person exploring a large trace set asks, each asked with
// parameters no earlier question of the run used (another threshold, another model, another word), on
// a store just opened by a process started for it (the library) and a server just started (`tracelake
// serve`), one of each per run, so no cache of an earlier answer can serve it; then the same question
// asked again (repeated). Hand-written DuckDB over the same span segments answers the same parameters
// in the same run, and every answer must equal it (counts, and page ids in order). Default store
// settings throughout.
//
//   node dist/bench/fresh.js --size 1m --data-dir /work/data-1m [--runs 3] [--no-server] [--out bench/results]
//
// The store is the peer benchmark's settled template (bench/peers/store-template.ts: built in
// --data-dir when missing), copied (segments hard-linked) for every run and side.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance, type DuckDBConnection, type DuckDBValue } from '../src/vendor/duckdb.js';
import { TraceStore } from '../src/engine/trace-store.js';
import { cpuSeconds, fmt, folderBytes, jsonFromChild, machine, median, parseSize, writeResults, type Measurement } from './common.js';
import { spanSegments } from './peers/duckdb-raw-peer.js';
import { copyStore, ensureTemplate, type TemplateInfo } from './peers/store-template.js';
import { startServer } from './server-process.js';
import { DEFAULT_SEED } from './workload.js';
import { seededRandom as rng } from '../test/support/seeded.js';

const PAGE = 100;

/** One question's parameters, drawn for one ask. */
interface Params {
  model: string;
  tag: string;
  quality: number;
  tokens: number;
  word: string;
}

/** A question: its request through the API and its hand-written DuckDB form (both over `Params`). */
interface FreshQuestion {
  id: string;
  title: string;
  /** What is compared: a count, the page's ids in order, or its rows' id, name and model in order. */
  answer: 'count' | 'ids' | 'rows';
  api: (p: Params) => { op: 'count' | 'partial_search' | 'search'; body: Record<string, unknown> };
  /** SQL over the view `spans` (the span segments) and its parameters. */
  duckdb: (p: Params, metricColumn: (name: string) => string) => { sql: string; params: DuckDBValue[] };
}

const ids = { column_ids: ['id'] };
const llmBy = (quality: string) => ({ column_id: `metrics/${quality}`, ascending: false });

/**
 * The first page of llm spans by metrics/correctness over a num_input_tokens threshold, showing
 * `columns` (null: whole records, a search).
 */
function tokenPage(id: string, title: string, answer: 'ids' | 'rows', columns: string[] | null): FreshQuestion {
  return {
    id,
    title,
    answer,
    api: (p) => ({
      op: columns ? 'partial_search' : 'search',
      body: {
        filters: [
          { type: 'text', column_id: 'type', operator: 'eq', value: 'llm' },
          { type: 'number', column_id: 'metrics/num_input_tokens', operator: 'gt', value: p.tokens },
        ],
        sort: llmBy('correctness'),
        pagination: { starting_token: 0, limit: PAGE },
        ...(columns ? { select_columns: { column_ids: columns } } : {}),
      },
    }),
    duckdb: (p, m) => ({
      sql:
        `SELECT ${columns ? columns.join(', ') : '*'} FROM spans WHERE type = 'llm' AND ${m('num_input_tokens')} > $1 ` +
        `ORDER BY ${m('correctness')} DESC NULLS LAST, id DESC LIMIT ${PAGE}`,
      params: [p.tokens],
    }),
  };
}

/** The first page of ids of llm spans by metrics/correctness with one more filter (`leaf`; `sql`: its DuckDB form). */
function idPage(
  id: string,
  what: string,
  leaf: (p: Params) => Record<string, unknown>,
  sql: (p: Params) => { where: string; params: DuckDBValue[] },
): FreshQuestion {
  return {
    id,
    title: `first page of llm spans by metrics/correctness, ${what}`,
    answer: 'ids',
    api: (p) => ({
      op: 'partial_search',
      body: {
        filters: [{ type: 'text', column_id: 'type', operator: 'eq', value: 'llm' }, leaf(p)],
        sort: llmBy('correctness'),
        pagination: { starting_token: 0, limit: PAGE },
        select_columns: ids,
      },
    }),
    duckdb: (p, m) => {
      const { where, params } = sql(p);
      return {
        sql: `SELECT id FROM spans WHERE type = 'llm' AND ${where} ORDER BY ${m('correctness')} DESC NULLS LAST, id DESC LIMIT ${PAGE}`,
        params,
      };
    },
  };
}

/** A count by model and tag, with a metric threshold between them or not. */
function modelTagCount(metric: boolean): FreshQuestion {
  return {
    id: metric ? 'count-3-leaves' : 'count-2-leaves',
    title: metric ? 'count: model eq AND metrics/correctness gt x AND tags contains' : 'count: model eq AND tags contains',
    answer: 'count',
    api: (p) => ({
      op: 'count',
      body: {
        filters: [
          { type: 'text', column_id: 'model', operator: 'eq', value: p.model },
          ...(metric ? [{ type: 'number', column_id: 'metrics/correctness', operator: 'gt', value: p.quality }] : []),
          { type: 'collection', column_id: 'tags', operator: 'contains', value: p.tag },
        ],
      },
    }),
    duckdb: (p, m) =>
      metric
        ? {
            sql: `SELECT count(*) AS n FROM spans WHERE model = $1 AND ${m('correctness')} > $2 AND list_contains(tags, $3)`,
            params: [p.model, p.quality, p.tag],
          }
        : { sql: 'SELECT count(*) AS n FROM spans WHERE model = $1 AND list_contains(tags, $2)', params: [p.model, p.tag] },
  };
}

export const FRESH_QUESTIONS: FreshQuestion[] = [
  modelTagCount(true),
  modelTagCount(false),
  tokenPage('page-metric-tokens', 'first page of llm spans by metrics/correctness, num_input_tokens gt x', 'ids', ['id']),
  tokenPage('page-metric-shown', 'the same page showing name and model (as the viewer asks)', 'rows', ['id', 'name', 'model']),
  tokenPage('page-metric-whole', 'the same page of whole records (a search, as the official client asks)', 'ids', null),
  idPage(
    'page-metric-model',
    'model eq',
    (p) => ({ type: 'text', column_id: 'model', operator: 'eq', value: p.model }),
    (p) => ({
      where: 'model = $1',
      params: [p.model],
    }),
  ),
  idPage(
    'page-metric-tag',
    'tags contains',
    (p) => ({ type: 'collection', column_id: 'tags', operator: 'contains', value: p.tag }),
    (p) => ({
      where: 'list_contains(tags, $1)',
      params: [p.tag],
    }),
  ),
  {
    id: 'text-count',
    title: 'count: input contains a word, any case',
    answer: 'count',
    api: (p) => ({
      op: 'count',
      body: { filters: [{ type: 'text', column_id: 'input', operator: 'contains', value: p.word, case_sensitive: false }] },
    }),
    duckdb: (p) => ({ sql: 'SELECT count(*) AS n FROM spans WHERE input ILIKE $1', params: [`%${p.word}%`] }),
  },
  {
    id: 'text-page',
    title: 'first page of the same text search (newest first)',
    answer: 'ids',
    api: (p) => ({
      op: 'partial_search',
      body: {
        filters: [{ type: 'text', column_id: 'input', operator: 'contains', value: p.word, case_sensitive: false }],
        pagination: { starting_token: 0, limit: PAGE },
        select_columns: ids,
      },
    }),
    duckdb: (p) => ({
      sql: `SELECT id FROM spans WHERE input ILIKE $1 ORDER BY created_at DESC, id DESC LIMIT ${PAGE}`,
      params: [`%${p.word}%`],
    }),
  },
];

/**
 * Hand-written DuckDB over the span segments of a store copy (one instance per run, configured as the
 * peer benchmark's hand-written peer is), which also draws parameters from the data: a model, a tag and
 * a word of a random span, so each is one a user could have seen.
 */
class RawDuck {
  private constructor(
    readonly conn: DuckDBConnection,
    readonly close: () => void,
    readonly metricIds: Record<string, number>,
    /** The span segments, and their rows (where parameters are drawn from). */
    readonly files: { path: string; rows: number }[],
  ) {}

  static async open(dir: string, metricIds: Record<string, number>): Promise<RawDuck> {
    const instance = await DuckDBInstance.create(':memory:');
    const conn = await instance.connect();
    await conn.run('SET parquet_metadata_cache = true');
    await conn.run('SET enable_object_cache = true');
    const paths = spanSegments(dir);
    const quoted = paths.map((f) => `'${f.replaceAll("'", "''")}'`);
    await conn.run(`CREATE VIEW spans AS SELECT * FROM read_parquet([${quoted.join(', ')}], union_by_name = true)`);
    const files: { path: string; rows: number }[] = [];
    for (const i of paths.keys()) {
      const got = await conn.runAndReadAll(`SELECT count(*) AS n FROM read_parquet(${quoted[i]})`);
      files.push({ path: quoted[i]!, rows: Number(got.getRowObjectsJS()[0]!['n']) });
    }
    return new RawDuck(
      conn,
      () => {
        conn.closeSync();
        instance.closeSync();
      },
      metricIds,
      files,
    );
  }

  metricColumn = (name: string): string => {
    const id = this.metricIds[name];
    if (id === undefined) throw new Error(`no metric ${name} in the store`);
    return `m${id}`;
  };

  async rows(sql: string, params: DuckDBValue[] = []): Promise<Record<string, unknown>[]> {
    return (await this.conn.runAndReadAll(sql, params)).getRowObjectsJS() as Record<string, unknown>[];
  }

  /** Parameters from a random span or two, and thresholds from `r` (never asked before in this run). */
  async draw(r: () => number): Promise<Params> {
    const n = this.files.reduce((a, f) => a + f.rows, 0);
    const at = async (where: string) => {
      for (;;) {
        let row = Math.floor(r() * n);
        const file = this.files.find((f) => (row -= f.rows) < 0)!;
        const got = await this.rows(
          `SELECT model, tags, input FROM read_parquet(${file.path}) WHERE file_row_number = ${row + file.rows} AND ${where}`,
        );
        if (got.length > 0) return got[0]!;
      }
    };
    const llm = await at('model IS NOT NULL AND len(tags) > 0');
    const words = [
      ...String((await at("input IS NOT NULL AND regexp_matches(input, '[A-Za-z]{6,}')"))['input']).matchAll(/[A-Za-z]{6,}/g),
    ].map((m) => m[0]);
    const word = words[Math.floor(r() * words.length)]!;
    // Any case: each letter upper or lower at random.
    const mixed = [...word].map((c) => (r() < 0.5 ? c.toUpperCase() : c.toLowerCase())).join('');
    const tags = llm['tags'] as string[];
    return {
      model: String(llm['model']),
      tag: tags[Math.floor(r() * tags.length)]!,
      quality: Math.round((0.3 + r() * 0.65) * 10_000) / 10_000,
      tokens: 50 + Math.floor(r() * 1500),
      word: mixed,
    };
  }

  async answer(q: FreshQuestion, p: Params): Promise<{ ms: number; cpuMs: number; value: number | string[] }> {
    const { sql, params } = q.duckdb(p, this.metricColumn);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const rows = await this.rows(sql, params);
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    return {
      ms,
      cpuMs: (cpu.user + cpu.system) / 1000,
      value: q.answer === 'count' ? Number(rows[0]!['n']) : rows.map((x) => shown(q, x)),
    };
  }
}

/** A page record as compared: its id, or with its name and model for a question answering rows. */
const shown = (q: FreshQuestion, r: Record<string, unknown>) =>
  q.answer === 'rows' ? `${String(r['id'])}\t${String(r['name'])}\t${String(r['model'])}` : String(r['id']);

type Asker = (q: FreshQuestion, p: Params) => Promise<{ ms: number; cpuMs: number; value: number | string[] }>;

function libraryAsker(store: TraceStore, info: TemplateInfo): Asker {
  return async (q, p) => {
    const { op, body } = q.api(p);
    const b = { ...body, log_stream_id: info.logStreamId };
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const value =
      op === 'count'
        ? (await store.count('span', info.projectId, b)).total_count
        : (await (op === 'search' ? store.search('span', info.projectId, b) : store.partialSearch('span', info.projectId, b))).records.map(
            (r) => shown(q, r),
          );
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    return { ms, cpuMs: (cpu.user + cpu.system) / 1000, value };
  };
}

function httpAsker(server: { url: string; pid: number }, key: string, info: TemplateInfo): Asker {
  return async (q, p) => {
    const { op, body } = q.api(p);
    const cpu0 = cpuSeconds(server.pid) ?? 0;
    const t0 = performance.now();
    const res = await fetch(`${server.url}/projects/${info.projectId}/spans/${op}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'Galileo-API-Key': key },
      body: JSON.stringify({ ...body, log_stream_id: info.logStreamId }),
    });
    const json = (await res.json()) as { total_count?: number; records?: Record<string, unknown>[]; detail?: unknown };
    const ms = performance.now() - t0;
    if (!res.ok) throw new Error(`${q.id}: HTTP ${res.status} ${JSON.stringify(json.detail)}`);
    // The server's CPU in /proc ticks of 10 ms: coarse for one question, summed over runs in the report.
    const cpuMs = ((cpuSeconds(server.pid) ?? 0) - cpu0) * 1000;
    return { ms, cpuMs, value: op === 'count' ? json.total_count! : json.records!.map((r) => shown(q, r)) };
  };
}

interface Sample {
  question: string;
  side: 'library' | 'server';
  run: number;
  params: Params;
  fresh: { ms: number; cpuMs: number };
  repeated: { ms: number; cpuMs: number };
  duckdb: { ms: number; cpuMs: number };
  agrees: boolean;
  answer: number;
}

const same = (a: number | string[], b: number | string[]) => JSON.stringify(a) === JSON.stringify(b);

/** Asks every question once fresh and once again, and hand-written DuckDB with the same parameters. */
async function askAll(
  side: Sample['side'],
  run: number,
  ask: Asker,
  raw: RawDuck,
  r: () => number,
  log: (s: string) => void,
): Promise<Sample[]> {
  const out: Sample[] = [];
  // Parameters for every question first: drawing them reads the data, and must not warm the store.
  // One at a time: draws share `r`, and concurrent draws would take its numbers in whatever order
  // their reads finish, so one seed would not give one set of questions.
  const params: Params[] = [];
  for (const _ of FRESH_QUESTIONS) params.push(await raw.draw(r));
  for (const [i, q] of FRESH_QUESTIONS.entries()) {
    const p = params[i]!;
    const fresh = await ask(q, p);
    const repeated = await ask(q, p);
    const duck = await raw.answer(q, p);
    const agrees = same(fresh.value, duck.value) && same(repeated.value, duck.value);
    const answer = typeof duck.value === 'number' ? duck.value : duck.value.length;
    if (!agrees)
      log(
        `DISAGREE ${side} ${q.id} ${JSON.stringify(p)}: ${JSON.stringify(fresh.value).slice(0, 200)} vs ${JSON.stringify(duck.value).slice(0, 200)}`,
      );
    log(
      `run ${run} ${side} ${q.id}: fresh ${fmt(fresh.ms)} ms, again ${fmt(repeated.ms)} ms, duckdb ${fmt(duck.ms)} ms (answer ${answer}) ${JSON.stringify(p)}`,
    );
    out.push({
      question: q.id,
      side,
      run,
      params: p,
      fresh: { ms: fresh.ms, cpuMs: fresh.cpuMs },
      repeated: { ms: repeated.ms, cpuMs: repeated.cpuMs },
      duckdb: { ms: duck.ms, cpuMs: duck.cpuMs },
      agrees,
      answer,
    });
  }
  return out;
}

/** One run's library side: the copy at `libDir` opened and asked (in the process that calls this). */
async function libraryRun(libDir: string, run: number, seed: number, info: TemplateInfo, log: (s: string) => void): Promise<Sample[]> {
  const t0 = performance.now();
  const store = await TraceStore.open(libDir);
  log(`run ${run}: library store opened in ${fmt(performance.now() - t0)} ms`);
  const raw = await RawDuck.open(libDir, JSON.parse(readFileSync(join(libDir, 'manifest.json'), 'utf8')).metric_ids);
  try {
    return await askAll('library', run, libraryAsker(store, info), raw, rng(seed * 7919 + run * 2 + 1), log);
  } finally {
    await store.close();
    raw.close();
  }
}

/** libraryRun in a new process of this module. */
function libraryRunInChild(libDir: string, run: number, seed: number, info: TemplateInfo): Promise<Sample[]> {
  return jsonFromChild<Sample[]>(import.meta.url, ['library-run', libDir, String(run), String(seed), JSON.stringify(info)]);
}

export async function benchFresh(opts: {
  spans: number;
  dataDir: string;
  runs: number;
  server: boolean;
  seed: number;
  log: (s: string) => void;
}): Promise<{ samples: Sample[]; measurements: Measurement[]; table: string; disk: number }> {
  const info = await ensureTemplate(opts.dataDir, opts.spans, DEFAULT_SEED, 5000, opts.log);
  const template = join(opts.dataDir, 'tracelake');
  const disk = folderBytes(template);
  const samples: Sample[] = [];
  const key = 'tl_fresh_bench_key_0123456789abcdef';
  for (let run = 0; run < opts.runs; run++) {
    const work = mkdtempSync(join(tmpdir(), 'tracelake-fresh-'));
    try {
      // The library: a copy opened now in a process started for it, asked at once (as the server side
      // is: in one process every run after the first found its code compiled).
      const libDir = join(work, 'lib');
      copyStore(template, libDir);
      samples.push(...(await libraryRunInChild(libDir, run, opts.seed, info)));
      if (opts.server) {
        const srvDir = join(work, 'srv');
        copyStore(template, srvDir);
        const server = await startServer(srvDir, key);
        // The hand-written reference for the server's answers, over the library's copy (the same files).
        const raw = await RawDuck.open(libDir, JSON.parse(readFileSync(join(libDir, 'manifest.json'), 'utf8')).metric_ids);
        try {
          // As the viewer does before any question: one authenticated request lists the projects, so the
          // first question is a query (a key new to the process costs a scrypt check there, once).
          const listed = await fetch(`${server.url}/projects/all`, { headers: { 'Galileo-API-Key': key } });
          if (!listed.ok) throw new Error(`listing projects: HTTP ${listed.status}`);
          await listed.arrayBuffer();
          samples.push(...(await askAll('server', run, httpAsker(server, key, info), raw, rng(opts.seed * 7919 + run * 2 + 2), opts.log)));
        } finally {
          await server.stop();
          raw.close();
        }
      }
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
  const measurements: Measurement[] = [];
  const lines = [
    `| question | side | fresh (ms) | fresh CPU (ms) | repeated (ms) | hand-written DuckDB (ms) | fresh / DuckDB | answers agree |`,
    '|---|---|---:|---:|---:|---:|---:|---|',
  ];
  for (const q of FRESH_QUESTIONS) {
    for (const side of ['library', 'server'] as const) {
      const s = samples.filter((x) => x.question === q.id && x.side === side);
      if (s.length === 0) continue;
      const fresh = median(s.map((x) => x.fresh.ms));
      const cpu = median(s.map((x) => x.fresh.cpuMs));
      const again = median(s.map((x) => x.repeated.ms));
      const duck = median(s.map((x) => x.duckdb.ms));
      const agree = s.every((x) => x.agrees);
      const range = (xs: number[]) => `${fmt(Math.min(...xs))}-${fmt(Math.max(...xs))}`;
      const freshCell = `${fmt(fresh)} (${range(s.map((x) => x.fresh.ms))})`;
      lines.push(
        `| ${q.title} | ${side} | ${freshCell} | ${fmt(cpu)} | ${fmt(again)} | ${fmt(duck)} | ${(fresh / duck).toFixed(2)} | ${agree ? 'yes' : 'NO'} |`,
      );
      measurements.push({
        name: `${q.id} (${side})`,
        value: fresh,
        unit: 'ms',
        fresh_cpu_ms: cpu,
        repeated_ms: again,
        duckdb_ms: duck,
        agrees: agree ? 1 : 0,
        samples: s,
      });
    }
  }
  return { samples, measurements, table: lines.join('\n'), disk };
}

if (import.meta.url === `file://${process.argv[1]}` && process.argv[2] === 'library-run') {
  const [libDir, run, seed, info] = process.argv.slice(3) as [string, string, string, string];
  const samples = await libraryRun(libDir, Number(run), Number(seed), JSON.parse(info) as TemplateInfo, (s) =>
    process.stderr.write(`${s}\n`),
  );
  process.stdout.write(`${JSON.stringify(samples)}\n`);
} else if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      size: { type: 'string', default: '1m' },
      'data-dir': { type: 'string' },
      runs: { type: 'string', default: '3' },
      'no-server': { type: 'boolean', default: false },
      seed: { type: 'string', default: String(Date.now() % 1_000_000) },
      out: { type: 'string', default: 'bench/results' },
    },
  });
  if (!values['data-dir']) throw new Error('--data-dir is required (the settled store template, built there when missing)');
  const size = values.size!;
  const started = new Date().toISOString();
  const r = await benchFresh({
    spans: parseSize(size),
    dataDir: values['data-dir'],
    runs: Number(values.runs),
    server: !values['no-server'],
    seed: Number(values.seed),
    log: (s) => process.stderr.write(`${s}\n`),
  });
  const table = `### Fresh questions, ${size} spans (${started.slice(0, 10)}; store ${fmt(r.disk / 2 ** 20)} MiB on disk)\n\n${r.table}`;
  process.stdout.write(`${table}\n`);
  const file = writeResults(values.out!, `${size}-fresh`, {
    size,
    started,
    seed: Number(values.seed),
    machine: machine(),
    disk_bytes: r.disk,
    results: { fresh: r.measurements },
    table,
  });
  process.stderr.write(`wrote ${file}\n`);
  if (r.samples.some((s) => !s.agrees)) process.exitCode = 1;
}
