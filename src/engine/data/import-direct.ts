// The direct import path: a Parquet, JSON lines or Arrow IPC export is read by DuckDB (Arrow through the
// tl_batches table function, as the log's batches are) and written straight into
// segments (storage/bulk-load.ts), never through the per-record JavaScript ingest or the log. The file
// is checked whole first (as the log path does), then written in batches of `batchRows` rows, each one
// atomic commit. The file path is a parameter; column names come from the column registry only.
import { open } from 'node:fs/promises';
import {
  RecordBatchReader,
  Precision,
  TimeUnit,
  Type,
  type DataType,
  type Field,
  type Float,
  type Int,
  type List,
  type Map_,
  type Timestamp,
} from 'apache-arrow';
import type { AppendKind } from '../../db/arrow-chunks.js';
import { BatchSource, type SourceColumn } from '../../db/batch-source.js';
import type { Database } from '../../db/database.js';
import { stringLiteral } from '../../db/sql-string.js';
import { ident, int, joinSql, param, raw, sql, type Sql } from '../../query/sql.js';
import type { BulkBatch } from '../../storage/segments/bulk-load.js';
import type { SourceGroup } from '../../storage/segments/bulk-pages.js';
import { rowGroupRows } from '../../storage/parquet/parquet-splice.js';
import { KIND_SQL, RECORD_COLUMNS, type RecordKind } from '../../record/record-columns.js';
import { KIND_COLUMNS } from '../../query/match-facts.js';
import { EXPORT_COLUMNS } from './export.js';
import { bad, exportColumnsOf, ID_COLUMNS, TYPE, UUID, VALID_TYPES } from './import-checks.js';

/** Rows per commit of the direct path (a segment per kind each; merges join them later). */
export const DIRECT_BATCH_ROWS = 1_000_000;

/** Where the rows come from: a SQL source with a `file_row_number` column (0-based, in file order). */
interface Source {
  readonly from: Sql;
}

/**
 * Imports export rows of a Parquet or JSON lines file through `bulk`; returns the rows written.
 * JSON lines and Arrow files are first loaded into a table of the importer's own instance (DuckDB
 * gives their rows no file position), Parquet is read where it lies.
 */
const KIND_ONLY = new Map(KIND_COLUMNS.map((c) => [c.id, c.applicable_types as readonly string[]]));

export interface DirectOptions {
  onProgress?: ((done: number, total: number | null) => void) | undefined;
  /** An Arrow file's columns as tl_batches reads them (arrowColumns). */
  arrowLayout?: readonly SourceColumn[] | undefined;
  sortRows?: number | undefined;
  /** Where JSON lines are staged as a Parquet file (the caller removes it). */
  stageFile: string;
  /**
   * End a Parquet file's batches at a row group's end when one lies in a batch's second half (the
   * default batch size only: a batch size given is kept exactly), so whole row groups can be copied.
   */
  alignBatches?: boolean | undefined;
}

export async function importDirect(
  db: Database,
  path: string,
  format: 'parquet' | 'jsonl' | 'arrow',
  bulk: (batch: BulkBatch) => Promise<number>,
  batchRows: number,
  opts: DirectOptions,
): Promise<number> {
  const { onProgress, arrowLayout, sortRows: sortRowsGiven } = opts;
  let src: Source;
  try {
    if (format === 'parquet') src = { from: sql`read_parquet(${path}, file_row_number = true)` };
    else if (format === 'jsonl') src = await stageJsonLines(db, path, opts.stageFile);
    else src = await stageArrow(db, path, arrowLayout ?? []);
  } catch (err) {
    throw bad(`${path} cannot be read as ${format}: ${(err as Error).message}`);
  }
  const present = await exportColumnsOf(db, src.from, path, format);
  const cols = RECORD_COLUMNS.filter((c) => !['seq', 'project_id', 'run_id'].includes(c.name)).map((c) => {
    if (!present.has(c.name)) return `NULL::${c.type} AS ${c.name}`;
    // Ids are stored lowercase (lookups lowercase what they are given).
    if (ID_COLUMNS.has(c.name)) return `lower(${c.name}::VARCHAR) AS ${c.name}`;
    // Kind-specific columns (model, tool_call_id, ...) only on the kinds the registry gives them, as
    // every other way in keeps them (the registry's type names are the only text written here).
    const kinds = KIND_ONLY.get(c.name);
    if (kinds)
      return `CASE WHEN list_contains([${kinds.map((k) => `'${k}'`).join(', ')}], type::VARCHAR) THEN ${c.name}::${c.type} END AS ${c.name}`;
    return `${c.name}::${c.type} AS ${c.name}`;
  });
  const check = (
    await db.all(
      sql`SELECT count(*) AS n, count(DISTINCT lower(id::VARCHAR)) AS ids,
          count(*) FILTER (WHERE id IS NULL OR NOT regexp_full_match(lower(id::VARCHAR), ${raw(UUID)}) OR created_at IS NULL
            OR type IS NULL OR NOT list_contains(${raw(VALID_TYPES)}, type::VARCHAR)) AS invalid FROM ${src.from}`,
    )
  )[0]!;
  if (Number(check['invalid']) > 0)
    throw bad(`${Number(check['invalid'])} row(s) of ${path} lack an id (a UUID), a created_at or a known type; nothing was imported`);
  const total = Number(check['n']);
  // No id twice in the file (an export's case): no batch needs its own duplicate check.
  const unique = Number(check['ids']) === total;
  // A batch's rows: file rows [lo, hi], numbered from 0.
  const select = (lo: number, hi: number) => {
    const first = param(lo);
    return sql`SELECT file_row_number - ${first} AS rn, ${raw(cols.join(', '))} FROM ${src.from} WHERE file_row_number BETWEEN ${first} AND ${hi}`;
  };
  const sortRows =
    sortRowsGiven ?? (format === 'arrow' ? DEFAULT_SORT_ROWS : await sortRowsOf(db, format === 'parquet' ? path : opts.stageFile));
  // A Parquet file with every export column may lend its row groups to segments as they are.
  const groupRows = format === 'parquet' && EXPORT_COLUMNS.every((c) => present.has(c)) ? rowGroupRows(path) : null;
  let done = 0;
  for (let start = 0; start < total; ) {
    let rows = Math.min(batchRows, total - start);
    if (groupRows && opts.alignBatches && start + rows < total) {
      let end = 0;
      for (const n of groupRows) {
        if (end + n > start + rows) break;
        end += n;
      }
      if (end - start >= rows / 2) rows = end - start;
    }
    const pages = groupRows ? { path, lo: start, groups: await cleanGroups(db, path, groupRows, start, start + rows - 1) } : undefined;
    await bulk({ db, select: select(start, start + rows - 1), rows, sortRows, unique, ...(pages ? { pages } : {}) });
    done += rows;
    start += rows;
    onProgress?.(done, total);
  }
  return done;
}

/**
 * Row groups of the file wholly within file rows [lo, hi] that hold one kind only and that the
 * import would not change: ids already lowercase, kind-specific columns empty on other kinds.
 */
async function cleanGroups(db: Database, path: string, groupRows: readonly number[], lo: number, hi: number): Promise<SourceGroup[]> {
  const inside: { group: number; start: number; rows: number }[] = [];
  let at = 0;
  groupRows.forEach((rows, group) => {
    if (at >= lo && at + rows - 1 <= hi && rows > 0) inside.push({ group, start: at, rows });
    at += rows;
  });
  if (inside.length === 0) return [];
  // Column names and kind lists come from the registry.
  const clean = raw(
    [
      ...[...ID_COLUMNS].map((c) => `(${c} IS NULL OR ${c}::VARCHAR = lower(${c}::VARCHAR))`),
      ...[...KIND_ONLY].map(([c, kinds]) => `(${c} IS NULL OR list_contains([${kinds.map((k) => `'${k}'`).join(', ')}], type::VARCHAR))`),
    ].join(' AND '),
  );
  const kind = raw(KIND_SQL);
  const groups = sql`SELECT unnest(${inside.map((g) => g.group)}::BIGINT[]) AS i, unnest(${inside.map((g) => g.start)}::BIGINT[]) AS a,
    unnest(${inside.map((g) => g.start + g.rows - 1)}::BIGINT[]) AS b`;
  const rows = await db.all(
    sql`SELECT g.i AS i, count(*) AS n, min(${kind}) AS k0, max(${kind}) AS k1, bool_and(${clean}) AS ok
     FROM read_parquet(${path}, file_row_number = true) s JOIN (${groups}) g ON s.file_row_number BETWEEN g.a AND g.b
     WHERE s.file_row_number BETWEEN ${lo} AND ${hi} GROUP BY g.i`,
  );
  const byGroup = new Map(inside.map((g) => [g.group, g]));
  const out: SourceGroup[] = [];
  for (const r of rows) {
    const g = byGroup.get(Number(r['i']))!;
    if (r['ok'] === true && r['k0'] === r['k1'] && Number(r['n']) === g.rows) out.push({ kind: r['k0'] as RecordKind, ...g });
  }
  return out.sort((a, b) => a.group - b.group);
}

/**
 * Bytes of rows (as Parquet counts them uncompressed) sorted at a time: at 1M spans (~850 bytes a row)
 * ~150k rows, which DuckDB sorts within the importer's 1 GB without spilling.
 */
const SORT_BYTES = 128 << 20;
const DEFAULT_SORT_ROWS = 150_000;

/** Rows per in-memory sort for a Parquet file, from its footer's uncompressed sizes. */
async function sortRowsOf(db: Database, path: string): Promise<number> {
  const file = param(path);
  const r = (
    await db.all(
      sql`SELECT sum(total_uncompressed_size) AS bytes, (SELECT sum(num_rows) FROM parquet_file_metadata(${file})) AS n FROM parquet_metadata(${file})`,
    )
  )[0];
  const perRow = Number(r?.['bytes'] ?? 0) / Math.max(1, Number(r?.['n'] ?? 0));
  return perRow > 0 ? Math.max(10_000, Math.floor(SORT_BYTES / perRow)) : DEFAULT_SORT_ROWS;
}

/**
 * Stages JSON lines of export rows as a Parquet file in file order (DuckDB gives JSON rows no file
 * position; a Parquet file does): at 1M spans, writing it (LZ4) took a fraction of loading the rows
 * into a table of the importer's database file, and the direct path then reads it as any Parquet.
 */
async function stageJsonLines(db: Database, path: string, stageFile: string): Promise<Source> {
  const columns = raw(EXPORT_COLUMNS.map((c) => `${c}: '${TYPE[c]}'`).join(', '));
  // The stage path is ours (a uuid under <data>/tmp): the one literal here; the user's path is a parameter.
  await db.run(
    sql`COPY (SELECT * FROM read_json(${path}, format = 'newline_delimited', columns = {${columns}}))
        TO ${stringLiteral(stageFile)} (FORMAT parquet, COMPRESSION lz4_raw)`,
  );
  return { from: sql`read_parquet(${stageFile}, file_row_number = true)` };
}

/** The column kind an Arrow field of an export maps to, or null when its layout is not the one tl_batches copies. */
function kindOfField(f: Field, expected: string): AppendKind | null {
  const t = f.type;
  const utf8 = (x: DataType) => x.typeId === Type.Utf8;
  switch (expected) {
    case 'utf8':
      return utf8(t) ? 'utf8' : null;
    case 'i32':
      return t.typeId === Type.Int && (t as Int).bitWidth === 32 && (t as Int).isSigned ? 'i32' : null;
    case 'i64':
      return t.typeId === Type.Int && (t as Int).bitWidth === 64 && (t as Int).isSigned ? 'i64' : null;
    case 'f64':
      return t.typeId === Type.Float && (t as Float).precision === Precision.DOUBLE ? 'f64' : null;
    case 'bool':
      return t.typeId === Type.Bool ? 'bool' : null;
    case 'ts':
      return t.typeId === Type.Timestamp && (t as Timestamp).unit === TimeUnit.MICROSECOND ? 'ts' : null;
    case 'tags':
      return t.typeId === Type.List && utf8((t as List).children[0]!.type) ? 'tags' : null;
    case 'map_f64':
    case 'map_utf8': {
      if (t.typeId !== Type.Map) return null;
      const [k, v] = (t as Map_).children[0]!.type.children as Field[];
      const valueOk =
        expected === 'map_f64' ? v!.type.typeId === Type.Float && (v!.type as Float).precision === Precision.DOUBLE : utf8(v!.type);
      return utf8(k!.type) && valueOk ? (expected as AppendKind) : null;
    }
    default:
      return null;
  }
}

/**
 * The columns of an Arrow IPC export as tl_batches reads them, or null when a field is unknown or laid
 * out otherwise (such a file goes through the log path, which converts value by value).
 */
export async function arrowColumns(path: string): Promise<SourceColumn[] | null> {
  const handle = await open(path, 'r');
  try {
    let reader: Awaited<ReturnType<typeof RecordBatchReader.from>>;
    try {
      reader = await RecordBatchReader.from(handle);
      await reader.open();
    } catch {
      return null; // the log path reports what is wrong with the file
    }
    const out: SourceColumn[] = [];
    for (const f of reader.schema.fields) {
      const col = RECORD_COLUMNS.find((c) => c.name === f.name && c.name !== 'seq');
      const kind = col ? kindOfField(f, col.kind) : null;
      if (!kind) return null;
      out.push({ name: f.name, kind });
    }
    return out;
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** Loads an Arrow IPC export into a table of the importer's instance, batch by batch, through tl_batches. */
export async function stageArrow(db: Database, path: string, columns: readonly SourceColumn[]): Promise<Source> {
  const source = new BatchSource(columns);
  const conn = await db.dedicated(source.functions);
  await conn.run(sql`DROP TABLE IF EXISTS tl_import_stage`);
  // Column names are the registry's (arrowColumns matched them), as are their types.
  const defs = columns.map((c) => sql`${ident(c.name)} ${raw(RECORD_COLUMNS.find((r) => r.name === c.name)!.type)}`);
  await conn.run(sql`CREATE TABLE tl_import_stage (${joinSql(defs)})`);
  // Read through a file handle: from a stream, apache-arrow buffers a whole IPC file in memory (about
  // twice its size); with random access it reads the footer, then one batch at a time.
  const handle = await open(path, 'r');
  try {
    const reader = await RecordBatchReader.from(handle);
    for await (const batch of reader) {
      if (batch.numRows === 0) continue;
      const key = source.addBatches([batch]);
      try {
        // The key is our own counter, never file data.
        await conn.run(sql`INSERT INTO tl_import_stage SELECT * FROM ${raw(source.batchesFn)}(${int(Number(key))})`);
      } finally {
        source.release(key);
      }
    }
  } finally {
    await handle.close().catch(() => undefined);
  }
  // rowid numbers a table's rows in the order they were appended (nothing is deleted from it).
  return { from: sql`(SELECT rowid AS file_row_number, * FROM tl_import_stage)` };
}
