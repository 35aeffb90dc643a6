// Read-only SQL over the whole store (`store.data.sql`, `tracelake sql`). A query never runs on the store's
// own DuckDB instance: each one gets a fresh in-memory instance that sees a snapshot through three
// views (spans, traces, sessions) plus the catalog tables projects and runs (log streams, experiments), and nothing else:
// - rows still in memory tables (and the dead and childless sequence numbers) are copied by the
//   store's instance, in one statement (one consistent view), into a Parquet file under <data>/tmp (a
//   read-only store's scratch folder outside the data folder);
// - the views read that file and the snapshot's segments, which are the only paths allowed once
//   external access is switched off; then the configuration is locked, so SET cannot undo it;
// - extensions are neither installed nor loaded, community ones not allowed;
// - the text must be exactly one statement, and a SELECT (EXPLAIN, SUMMARIZE, FROM x... are SELECTs).
// Metric names become column names (quoted identifiers): the one place store data reaches SQL text.
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance, StatementType, type DuckDBConnection, type DuckDBValue } from '../../vendor/duckdb.js';
import type { Table } from 'apache-arrow';
import { Connection, type Database } from '../../db/database.js';
import { stringLiteral } from '../../db/sql-string.js';
import { ident, joinSql, raw, sql, type Sql } from '../../query/sql.js';
import { readerToTable } from '../../db/result-arrow.js';
import type { Catalog } from '../../catalog/catalog.js';
import { InvalidRequestError, invalid } from '../../errors.js';
import { COLUMN_NAMES, KIND_SQL, type RecordKind } from '../../record/record-columns.js';
import type { RecordStore } from '../../storage/record-store.js';
import type { Snapshot } from '../../storage/snapshot/snapshot.js';
import { EMPTY_TABLE } from '../../storage/snapshot/snapshot-source.js';

export type SqlParam = string | number | boolean | bigint | null;

export interface SqlOptions {
  /** 'rows' (default): plain objects; 'arrow': an apache-arrow Table. */
  format?: 'rows' | 'arrow';
  /** Interrupts the query after this many milliseconds (default: no limit). */
  timeoutMs?: number;
  /** Refuses a result of more rows (default 1,000,000): results are held in memory whole. */
  maxRows?: number;
}

export interface SandboxConfig {
  /** The folder work files go in (a subfolder per query, removed after it). */
  scratch: string;
  threads?: number;
  memoryLimit: string;
  /** Catalog rows the query may join with. */
  projects: { id: string; name: string }[];
  runs: { id: string; project_id: string; name: string; kind: string }[];
}

/** A query the sandbox refuses: not one statement, not a SELECT, or an error DuckDB reported. */
export class SqlError extends InvalidRequestError {
  constructor(message: string) {
    super([{ loc: ['query'], msg: message, type: 'value_error' }]);
  }
}

const VIEWS: readonly [view: string, kind: RecordKind][] = [
  ['spans', 'span'],
  ['traces', 'trace'],
  ['sessions', 'session'],
];
/** Columns of the views: the stored ones but the internal sequence number. */
const VIEW_COLUMNS = COLUMN_NAMES.filter((c) => c !== 'seq');
const COLS = raw(COLUMN_NAMES.join(', '));
/** The columns with has_children as readers see it (parents a delete left without children read false). */
const withOverride = (read: Sql) => joinSql(COLUMN_NAMES.map((c) => (c === 'has_children' ? read : ident(c))));
const SEG_COLS = withOverride(sql`(has_children AND seq NOT IN (SELECT seq FROM tracelake_childless)) AS has_children`);

/** A metric name as a quoted column name (a view takes no parameters): quotes doubled. */
const quotedName = (s: string) => raw(`"${s.replaceAll('"', '""')}"`);

/** store.data.sql once the store is known open: checks the params, then runs the query over a snapshot with the catalog's projects and runs. */
export function storeSql(
  catalog: Catalog,
  records: RecordStore,
  db: Database,
  cfg: Omit<SandboxConfig, 'projects' | 'runs'>,
  query: string,
  params: readonly SqlParam[],
  options: SqlOptions,
): Promise<Record<string, unknown>[] | Table> {
  if (!Array.isArray(params)) throw invalid(['params'], 'Input should be an array', params);
  params.forEach((p, i) => {
    if (p !== null && !['string', 'number', 'boolean', 'bigint'].includes(typeof p))
      throw invalid(['params', i], 'Input should be a string, number, boolean or null', p);
  });
  const projects = catalog.projects().map((p) => ({ id: p.id, name: p.name }));
  const runs = projects.flatMap((p) => catalog.runs(p.id).map((r) => ({ id: r.id, project_id: r.project_id, name: r.name, kind: r.kind })));
  return records.read((snap) => runSandboxed(db, snap, { ...cfg, projects, runs }, query, params, options));
}

/** Runs one read-only query; see the file comment for what it can reach. */
export async function runSandboxed(
  db: Database,
  snap: Snapshot,
  cfg: SandboxConfig,
  query: string,
  params: readonly SqlParam[],
  options: SqlOptions,
): Promise<Record<string, unknown>[] | Table> {
  if (typeof query !== 'string' || query.trim() === '') throw new SqlError('Input should be a non-empty SQL string');
  const work = join(cfg.scratch, `sql-${randomUUID()}`);
  mkdirSync(work, { recursive: true });
  const memFile = join(work, 'memory.parquet');
  let instance: DuckDBInstance | undefined;
  let conn: DuckDBConnection | undefined;
  try {
    const memMetrics = await dumpMemory(db, snap, memFile);
    instance = await DuckDBInstance.create(':memory:', {
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'false',
      allow_community_extensions: 'false',
      memory_limit: cfg.memoryLimit,
      temp_directory: work,
      ...(cfg.threads ? { threads: String(cfg.threads) } : {}),
    });
    conn = await instance.connect();
    // Our statements go through the same runner as the store's; the user's query runs on `conn` itself.
    const setup = new Connection(conn);
    const allowed = [memFile];
    await setup.run(sql`CREATE TABLE tracelake_dead AS SELECT seq FROM read_parquet(${stringLiteral(memFile)}) WHERE dead_`);
    await setup.run(sql`CREATE TABLE tracelake_childless AS SELECT seq FROM read_parquet(${stringLiteral(memFile)}) WHERE childless_`);
    // Retention: runs whose records expire, and from when (the views leave expired rows out).
    const cutoffs = new Map(cfg.projects.flatMap((p) => [...snap.cutoffs(p.id)]));
    await setup.run(sql`CREATE TABLE tracelake_expiry (run_id VARCHAR, cutoff BIGINT)`);
    if (cutoffs.size > 0)
      await setup.run(
        sql`INSERT INTO tracelake_expiry SELECT * FROM (SELECT unnest(${[...cutoffs.keys()]}::VARCHAR[]), unnest(${[...cutoffs.values()]}::BIGINT[]))`,
      );
    for (const [view, kind] of VIEWS) allowed.push(...(await createView(setup, snap, view, kind, memFile, memMetrics, cutoffs)));
    await catalogTables(setup, cfg);
    await setup.run(sql`SET allowed_paths = [${joinSql(allowed.map(stringLiteral))}]`);
    await setup.run(sql`SET allowed_directories = [${stringLiteral(work)}]`);
    await setup.run(sql`SET enable_external_access = false`);
    await setup.run(sql`SET lock_configuration = true`);
    return await runOne(conn, query, params, options);
  } finally {
    conn?.closeSync();
    instance?.closeSync();
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Live rows of the memory tables and every dead sequence number, in one COPY (one consistent view of
 * rows and tombstones). Metrics are also shredded to columns x0, x1... (names bound as parameters).
 */
async function dumpMemory(db: Database, snap: Snapshot, file: string): Promise<Map<string, string>> {
  const names = [...new Set(VIEWS.flatMap(([, k]) => [...snap.memMetricNames(k)]))].sort();
  const aliases = new Map(names.map((n, i) => [n, `x${i}`]));
  // One fragment for every table: the names are bound once.
  const shred = joinSql(
    names.map((n, i) => sql`, metrics[${n}] AS ${ident(`x${i}`)}`),
    '',
  );
  // The empty table gives the file its columns when no memory table has rows.
  const memCols = withOverride(sql`(has_children AND seq NOT IN ${snap.childlessSeqs}) AS has_children`);
  const parts = [EMPTY_TABLE, ...snap.memTableNames()].map(
    (t) =>
      sql`(SELECT ${memCols}${shred}, ${raw(KIND_SQL)} AS kind_, false AS dead_ FROM ${ident(t)} WHERE ${snap.memBound} AND seq NOT IN ${snap.deadSeqs})`,
  );
  parts.push(sql`(SELECT seq, true AS dead_ FROM ${snap.deadSeqs})`);
  parts.push(sql`(SELECT seq, true AS childless_ FROM ${snap.childlessSeqs})`);
  await db.run(sql`COPY (${joinSql(parts, ' UNION ALL BY NAME ')}) TO ${stringLiteral(file)} (FORMAT parquet)`);
  return aliases;
}

/** One view over the live segments of a kind and the memory rows of that kind; returns the files it reads. */
async function createView(
  conn: Connection,
  snap: Snapshot,
  view: string,
  kind: RecordKind,
  memFile: string,
  memMetrics: Map<string, string>,
  cutoffs: ReadonlyMap<string, number>,
): Promise<string[]> {
  const segments = snap.segmentsOfKind(kind).filter((s) => !(cutoffs.has(s.run_id) && s.max_created_us < cutoffs.get(s.run_id)!));
  const files = segments.map((s) => snap.path(s));
  const names = [...new Set([...segments.flatMap((s) => s.metrics.map((id) => nameOf(snap, id))), ...snap.memMetricNames(kind)])]
    .filter((n): n is string => n !== undefined)
    .sort();
  // Column names are case-insensitive in DuckDB: a metric clashing with a column (or another metric)
  // gets no column of its own (it stays in the metrics map).
  const taken = new Set(VIEW_COLUMNS.map((c) => c.toLowerCase()));
  const metrics = names.filter((n) => {
    const key = n.toLowerCase();
    if (taken.has(key) || n.length === 0 || /[\u0000-\u001f]/.test(n)) return false;
    taken.add(key);
    return true;
  });
  const inSegments = new Set(segments.flatMap((s) => s.metrics));
  const mv = (i: number) => ident(`mv${i}`);
  const segCols = metrics.map((n, i) => {
    const id = snap.metricIds[n];
    return id !== undefined && inSegments.has(id) ? sql`${ident(`m${id}`)} AS ${mv(i)}` : sql`NULL::DOUBLE AS ${mv(i)}`;
  });
  const memCols = metrics.map((n, i) =>
    memMetrics.has(n) ? sql`${ident(memMetrics.get(n)!)} AS ${mv(i)}` : sql`NULL::DOUBLE AS ${mv(i)}`,
  );
  const extra = (cols: Sql[]) =>
    joinSql(
      cols.map((c) => sql`, ${c}`),
      '',
    );
  // A view takes no parameters: its paths and kind are written as literals (the store's own).
  const parts: Sql[] = [];
  if (files.length > 0)
    parts.push(
      sql`SELECT ${SEG_COLS}${extra(segCols)}
          FROM read_parquet([${joinSql(files.map(stringLiteral))}], hive_partitioning = false, union_by_name = true)
          WHERE seq NOT IN (SELECT seq FROM tracelake_dead)`,
    );
  parts.push(
    sql`SELECT ${COLS}${extra(memCols)} FROM read_parquet(${stringLiteral(memFile)}, union_by_name = true) WHERE NOT dead_ AND kind_ = ${stringLiteral(kind)}`,
  );
  const select = joinSql([...VIEW_COLUMNS.map(ident), ...metrics.map((n, i) => sql`${mv(i)} AS ${quotedName(n)}`)]);
  const live = sql`NOT EXISTS (SELECT 1 FROM tracelake_expiry e WHERE e.run_id = u.run_id AND epoch_us(u.created_at) < e.cutoff)`;
  await conn.run(sql`CREATE VIEW ${ident(view)} AS SELECT ${select} FROM (${joinSql(parts, ' UNION ALL ')}) u WHERE ${live}`);
  return files;
}

function nameOf(snap: Snapshot, id: number): string | undefined {
  for (const [n, i] of Object.entries(snap.metricIds)) if (i === id) return n;
  return undefined;
}

async function catalogTables(conn: Connection, cfg: SandboxConfig): Promise<void> {
  await conn.run(sql`CREATE TABLE projects (id VARCHAR, name VARCHAR)`);
  await conn.run(sql`CREATE TABLE runs (id VARCHAR, project_id VARCHAR, name VARCHAR, kind VARCHAR)`);
  if (cfg.projects.length > 0) {
    await conn.run(
      sql`INSERT INTO projects SELECT * FROM
          (SELECT unnest(${cfg.projects.map((p) => p.id)}::VARCHAR[]), unnest(${cfg.projects.map((p) => p.name)}::VARCHAR[]))`,
    );
  }
  if (cfg.runs.length > 0) {
    const col = (k: 'id' | 'project_id' | 'name' | 'kind') => sql`unnest(${cfg.runs.map((r) => r[k])}::VARCHAR[])`;
    await conn.run(sql`INSERT INTO runs SELECT * FROM (SELECT ${col('id')}, ${col('project_id')}, ${col('name')}, ${col('kind')})`);
  }
}

async function runOne(
  conn: DuckDBConnection,
  query: string,
  params: readonly SqlParam[],
  options: SqlOptions,
): Promise<Record<string, unknown>[] | Table> {
  const timer = options.timeoutMs ? setTimeout(() => conn.interrupt(), options.timeoutMs) : undefined;
  try {
    let extracted: Awaited<ReturnType<typeof conn.extractStatements>>;
    try {
      extracted = await conn.extractStatements(query);
    } catch (err) {
      throw new SqlError((err as Error).message);
    }
    if (extracted.count !== 1) throw new SqlError(`exactly one statement is allowed (found ${extracted.count})`);
    let prepared: Awaited<ReturnType<typeof extracted.prepare>>;
    try {
      prepared = await extracted.prepare(0);
    } catch (err) {
      throw new SqlError((err as Error).message);
    }
    const type = prepared.statementType;
    if (type !== StatementType.SELECT && type !== StatementType.EXPLAIN)
      throw new SqlError(`only read-only queries (SELECT) are allowed, not ${StatementType[type] ?? type}`);
    if (params.length !== prepared.parameterCount)
      throw new SqlError(`the query has ${prepared.parameterCount} parameter(s), ${params.length} given`);
    try {
      if (params.length > 0) prepared.bind(params.map((p) => p as DuckDBValue));
      const maxRows = options.maxRows ?? 1_000_000;
      const reader = await prepared.streamAndReadUntil(maxRows + 1);
      if (reader.currentRowCount > maxRows)
        throw new SqlError(`the result has more than ${maxRows} rows: aggregate, add a LIMIT, or use export`);
      return options.format === 'arrow' ? readerToTable(reader) : (reader.getRowObjectsJS() as Record<string, unknown>[]);
    } catch (err) {
      throw err instanceof SqlError ? err : new SqlError((err as Error).message);
    }
  } finally {
    if (timer) clearTimeout(timer);
  }
}
