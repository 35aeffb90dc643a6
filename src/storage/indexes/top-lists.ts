// The top lists of a segment (`seg-N.top`, a small Parquet file beside it): for each metric column of
// the segment and each direction, its first TOP_LIST_ROWS rows with a value in the order a
// metric-sorted page uses (value, then id), with the narrow columns a page's keys show and simple
// filters test, and every metric's value. A fresh metric-sorted page reads one list per segment from
// here (a few thousand rows) instead of sorting the segment (query/exec/topk-cache.ts).
//
// One row per (list, rank): `list` is 2 * metric id, plus 1 for ascending; `rank` counts from 1. A
// list holds TOP_LIST_ROWS + 1 rows when the segment holds more (the reader takes the extra row as
// "truncated"). Dead rows are listed too: the file describes the segment, liveness is the reader's.
// Written aside and renamed, fsynced with its segment, before any manifest lists it (SegmentEntry.top_lists).
import { renameSync, rmSync } from 'node:fs';
import type { Connection, Row, SqlRunner } from '../../db/database.js';
import { stringLiteral } from '../../db/sql-string.js';
import { ident, int, joinSql, raw, sql, type Sql } from '../../query/sql.js';
import { fsyncPathAsync } from '../fs-util.js';
import type { SegmentEntry } from '../manifest/manifest.js';

/** Segments with fewer rows get no top lists by default (RecordStoreOptions.topListMinRows): a page reads them whole. */
export const TOP_LIST_MIN_ROWS = 65_536;

/** Rows a list keeps at least (plus one to tell a truncated list): a first page of up to 1,000 rows, with room for filters that drop some. */
export const TOP_LIST_ROWS = 2048;

/** Rows a list keeps at most. */
export const TOP_LIST_MAX_ROWS = 8192;

/** Rows the lists of one list number keep over a run's segments of a kind, when their depths allow. */
const LIST_BUDGET = 3 * TOP_LIST_MAX_ROWS;

/**
 * Rows the lists of a segment of `rows` rows keep, in a run holding `partitionRows` of its kind (itself
 * included): its share of LIST_BUDGET, at most one in 64 of its rows, from TOP_LIST_ROWS to
 * TOP_LIST_MAX_ROWS. A page with a filter admitting a share s of the best rows needs about k / s of them
 * over all of the run's segments, so deeper lists serve more selective filters: at 10M spans (two
 * segments) 2,048 rows each held too few rows of 1% filters and 8,192 enough (a metric page then took
 * 10-28 ms, not 370-400), for 0.5 µs more CPU a span at each write and 4x the file; a run of many
 * segments needs less of each (at 100M, 101 segments of 8,192 would have been +5% of the folder).
 */
/** What a segment's entry says of lists of `depth` rows on disk. */
export function listedEntry(depth: number): Pick<SegmentEntry, 'top_lists' | 'top_list_rows' | 'top_list_places' | 'top_list_filters'> {
  return { top_lists: true, top_list_places: true, top_list_filters: true, ...(depth > TOP_LIST_ROWS ? { top_list_rows: depth } : {}) };
}

export function topListRows(rows: number, partitionRows = rows): number {
  const share = Math.ceil((LIST_BUDGET * rows) / Math.max(rows, partitionRows, 1));
  return Math.min(TOP_LIST_MAX_ROWS, Math.max(TOP_LIST_ROWS, Math.min(Math.floor(rows / 64), share)));
}

/** The physical columns a list row keeps besides the metric values; `created_at` is kept as `c`, epoch µs. */
export const TOP_LIST_COLUMNS = [
  'seq',
  'created_at',
  'id',
  'type',
  'project_id',
  'run_id',
  'session_id',
  'trace_id',
  'parent_id',
  'has_children',
  'status_code',
  'model',
] as const;

/** The columns of TOP_LIST_COLUMNS a file stores (project and run are the segment's). */
const FILE_COLUMNS = TOP_LIST_COLUMNS.filter((c) => c !== 'project_id' && c !== 'run_id');

/**
 * Columns a file also keeps (SegmentEntry.top_list_filters) for filters on them to be tested on the
 * listed rows in place (metric-topk.ts fromFiles); they are not read into the cache's rows.
 */
export const TOP_LIST_FILTER_COLUMNS = ['name', 'tags'] as const;

export function topListsPath(parquetPath: string): string {
  return parquetPath.replace(/\.parquet$/, '.top');
}

/** The list number of a metric and direction. */
export const listNumber = (metricId: number, ascending: boolean): number => 2 * metricId + (ascending ? 1 : 0);

/**
 * Writes the lists of the segment at `abs` (its metric columns are `m<id>` for `metrics`) and fsyncs
 * the file (the caller fsyncs the folder). Nothing is written for a segment without metrics.
 * Two statements: one pass finds each list's values (max_by/min_by of the value alone, four times
 * cheaper than of (value, id), whose string comparisons cost most), hence its last value T; the
 * second reads once the rows at or past some list's T and keeps each list's best by (value, id), a
 * top-k each, not a sort (many rows may tie at T). Passing the rows' numbers through JavaScript and
 * back cost as much as both. The second keeps of each row past T only what ranks it (id and the
 * metric values): rows tied at a scorer's T of 1 or 0 are millions at 10M, and with every listed
 * column they filled the store's memory limit; the listed rows' other columns are then read for them
 * alone. A NaN value (no threshold can be told from it) takes the one-pass way.
 */
export async function writeTopLists(conn: Connection, abs: string, metrics: readonly number[], depth = TOP_LIST_ROWS): Promise<boolean> {
  if (metrics.length === 0) return false;
  const n = depth + 1;
  // Metric ids are the manifest's numbers, never user text.
  const ids = metrics.map((m) => Math.trunc(m));
  const lists = ids.flatMap((m) => [false, true].map((ascending) => ({ m, ascending, no: listNumber(m, ascending) })));
  const src = sql`read_parquet(${abs}, hive_partitioning = false, file_row_number = true)`;
  const [found] = await conn.all(
    sql`SELECT ${joinSql(
      lists.map(({ m, ascending, no }) => {
        const col = ident(`m${m}`);
        return sql`${raw(ascending ? 'min_by' : 'max_by')}(${col}, ${col}, ${int(n)}) FILTER (WHERE ${col} IS NOT NULL) AS ${ident(`v${no}`)}`;
      }),
    )} FROM ${src}`,
  );
  const plans = lists.map((l) => {
    const vals = ((found?.[`v${l.no}`] as unknown[] | null) ?? []).map(Number);
    return { ...l, t: vals.at(-1), nan: vals.some((x) => Number.isNaN(x)) };
  });
  if (plans.some((p) => p.nan)) return writeOnePass(conn, abs, ids, depth);
  const kept = plans.filter((p) => p.t !== undefined);
  const at = (ascending: boolean) => raw(ascending ? '<=' : '>=');
  const values = ids.map((m) => ident(`m${m}`));
  const ranked = kept.map(({ m, ascending, no, t }) => {
    const col = ident(`m${m}`);
    const d = raw(ascending ? 'ASC' : 'DESC');
    return sql`SELECT ${int(no)}::SMALLINT AS list, (row_number() OVER (ORDER BY ${col} ${d}, id ${d}))::SMALLINT AS rank, ${joinSql([...values, raw('r')])}
      FROM (SELECT * FROM t WHERE ${col} ${at(ascending)} ${t!} ORDER BY ${col} ${d}, id ${d} LIMIT ${int(n)})`;
  });
  // The rows past some list's T keep only what ranks them; the listed rows' other columns are read after.
  const stored = [...FILE_COLUMNS, ...TOP_LIST_FILTER_COLUMNS];
  const cols = stored.map((c) => (c === 'created_at' ? sql`epoch_us(created_at) AS c` : ident(c)));
  const listed = stored.map((c) => (c === 'created_at' ? raw('c') : ident(c)));
  await writeAside(
    conn,
    abs,
    depth,
    sql`WITH t AS MATERIALIZED (SELECT ${joinSql([raw('id'), ...values, raw('file_row_number AS r')])} FROM ${src}
        WHERE ${joinSql(
          kept.map(({ m, ascending, t }) => sql`${ident(`m${m}`)} ${at(ascending)} ${t!}`),
          ' OR ',
        )}),
      l AS MATERIALIZED (${joinSql(ranked, ' UNION ALL ')})
      SELECT l.list, l.rank, ${joinSql([...listed.map((c) => sql`f.${c}`), ...values.map((v) => sql`l.${v}`), raw('l.r')])} FROM l
        JOIN (SELECT ${joinSql([...cols, raw('file_row_number AS r')])} FROM ${src} WHERE file_row_number IN (SELECT r FROM l)) f USING (r)
        ORDER BY list, rank`,
  );
  return true;
}

/** The lists in one pass: max_by/min_by of (value, id) keep each list's rows; then one read of them. */
async function writeOnePass(conn: Connection, abs: string, ids: readonly number[], depth: number): Promise<boolean> {
  const n = int(depth + 1);
  const lists = ids.flatMap((m) => {
    const col = ident(`m${m}`);
    return [
      sql`max_by(file_row_number, {v: ${col}, id: id}, ${n}) FILTER (WHERE ${col} IS NOT NULL) AS ${ident(`l${listNumber(m, false)}`)}`,
      sql`min_by(file_row_number, {v: ${col}, id: id}, ${n}) FILTER (WHERE ${col} IS NOT NULL) AS ${ident(`l${listNumber(m, true)}`)}`,
    ];
  });
  const pairs = ids.flatMap((m) =>
    [false, true].map((asc) => sql`{list: ${int(listNumber(m, asc))}, rows: ${ident(`l${listNumber(m, asc)}`)}}`),
  );
  const cols = [...FILE_COLUMNS, ...TOP_LIST_FILTER_COLUMNS].map((c) =>
    c === 'created_at' ? sql`epoch_us(t.created_at) AS c` : sql`t.${ident(c)}`,
  );
  const values = ids.map((m) => sql`t.${ident(`m${m}`)}`);
  await writeAside(
    conn,
    abs,
    depth,
    sql`WITH l AS (SELECT ${joinSql(lists)} FROM read_parquet(${abs}, hive_partitioning = false, file_row_number = true)),
        k AS (SELECT unnest([${joinSql(pairs)}]) AS x FROM l),
        p AS (SELECT x.list AS list, unnest(list_transform(x.rows, lambda r, i: {r: r, rank: i}), recursive := true) FROM k)
        SELECT p.list::SMALLINT AS list, p.rank::SMALLINT AS rank, ${joinSql([...cols, ...values, raw('p.r AS r')])}
        FROM p JOIN (SELECT * FROM read_parquet(${abs}, hive_partitioning = false, file_row_number = true)
                     WHERE file_row_number IN (SELECT r FROM p)) t ON t.file_row_number = p.r
        ORDER BY p.list, p.rank`,
  );
  return true;
}

/** COPY of `rows` to the segment's top lists file: written aside, fsynced, renamed. */
async function writeAside(conn: Connection, abs: string, depth: number, rows: Sql): Promise<void> {
  const tmp = `${topListsPath(abs)}.tmp`;
  try {
    await conn.run(sql`COPY (${rows}) TO ${stringLiteral(tmp)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${int(depth + 1)})`);
    await fsyncPathAsync(tmp);
    renameSync(tmp, topListsPath(abs));
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/**
 * One list of the segment at `abs` (best first, at most `rows` + 1 rows): its metric's value as `v`,
 * the narrow columns (`c` for created_at; only `columns` of them when given) and the `m<id>` columns
 * of `values`; throws when the file is missing or damaged. The rows come as one JSON text (DuckDB
 * writes doubles exactly): converting each value to JavaScript cost twice as much. A value JSON cannot
 * hold (NaN, infinities) takes the plain read.
 */
export async function readTopList(
  db: SqlRunner,
  abs: string,
  metricId: number,
  ascending: boolean,
  rows: number,
  values: readonly number[] = [],
  columns?: readonly string[],
): Promise<Row[]> {
  const narrow = FILE_COLUMNS.filter((c) => c !== 'created_at' && (!columns || columns.includes(c)));
  const names = [
    ...narrow.map((c) => [c, c] as const),
    ...(!columns || columns.includes('created_at') ? [['c', 'c'] as const] : []),
    ['v', `m${Math.trunc(metricId)}`] as const,
    ...values.map((m) => [`m${Math.trunc(m)}`, `m${Math.trunc(m)}`] as const),
  ];
  const picked = sql`SELECT rank, ${joinSql(names.map(([as, col]) => sql`${ident(col)} AS ${ident(as)}`))}
    FROM read_parquet(${topListsPath(abs)}, hive_partitioning = false)
    WHERE list = ${int(listNumber(metricId, ascending))} ORDER BY rank LIMIT ${int(rows + 1)}`;
  // The struct's keys are our column names (no user text).
  const struct = raw(`{${names.map(([as]) => `${as}: "${as}"`).join(', ')}}`);
  const [got] = await db.all(sql`SELECT to_json(list(${struct} ORDER BY rank))::VARCHAR AS j FROM (${picked})`);
  const text = got?.['j'];
  if (typeof text !== 'string') return [];
  try {
    return JSON.parse(text) as Row[];
  } catch {
    return db.all(sql`SELECT * EXCLUDE (rank) FROM (${picked})`);
  }
}

/** The values of metrics `ids` of a list's first `rows` rows, one array per metric, in list order. */
export async function readTopValues(
  db: SqlRunner,
  abs: string,
  metricId: number,
  ascending: boolean,
  rows: number,
  ids: readonly number[],
): Promise<unknown[][]> {
  const got = (await readTopList(db, abs, metricId, ascending, rows, ids, [])).slice(0, rows);
  return ids.map((m) => got.map((r) => r[`m${Math.trunc(m)}`]));
}

export function removeTopLists(abs: string): void {
  rmSync(topListsPath(abs), { force: true });
  rmSync(`${topListsPath(abs)}.tmp`, { force: true });
}
