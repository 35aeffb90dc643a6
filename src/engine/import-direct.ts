// The direct import path: a Parquet or JSON lines export is read by DuckDB and written straight into
// segments (storage/bulk-load.ts), never through the per-record JavaScript ingest or the log. The file
// is checked whole first (as the log path does), then written in batches of `batchRows` rows, each one
// atomic commit. The file path is a parameter; column names come from the column registry only.
import type { Database, Param } from '../db/database.js';
import type { BulkBatch } from '../storage/bulk-load.js';
import { RECORD_COLUMNS } from '../storage/record-columns.js';
import { EXPORT_COLUMNS } from './export.js';
import { bad, ID_COLUMNS, TYPE, UUID, VALID_TYPES } from './import.js';

/** Rows per commit of the direct path (a segment per kind each; merges join them later). */
export const DIRECT_BATCH_ROWS = 1_000_000;

/** Where the rows come from: a SQL source with a `file_row_number` column (0-based, in file order). */
interface Source {
  readonly from: string;
  readonly params: Param[];
}

/**
 * Imports export rows of a Parquet or JSON lines file through `bulk`; returns the rows written.
 * JSON lines are first loaded into a table of the importer's own instance (DuckDB gives JSON rows no
 * file position), Parquet is read where it lies.
 */
export async function importDirect(
  db: Database,
  path: string,
  format: 'parquet' | 'jsonl',
  bulk: (batch: BulkBatch) => Promise<number>,
  batchRows: number,
  onProgress?: (done: number, total: number | null) => void,
): Promise<number> {
  let src: Source;
  try {
    src = format === 'parquet' ? { from: 'read_parquet($1, file_row_number = true)', params: [path] } : await stageJsonLines(db, path);
  } catch (err) {
    throw bad(`${path} cannot be read as ${format}: ${(err as Error).message}`);
  }
  let present: Set<string>;
  try {
    present = new Set((await db.all(`DESCRIBE SELECT * FROM ${src.from}`, src.params)).map((r) => String(r['column_name'])));
  } catch (err) {
    throw bad(`${path} cannot be read as ${format}: ${(err as Error).message}`);
  }
  for (const need of ['id', 'type', 'created_at']) if (!present.has(need)) throw bad(`${path} has no column ${need}: it is not a tracelake export`);
  const cols = RECORD_COLUMNS.filter((c) => !['seq', 'project_id', 'run_id'].includes(c.name)).map((c) => {
    if (!present.has(c.name)) return `NULL::${c.type} AS ${c.name}`;
    // Ids are stored lowercase (lookups lowercase what they are given).
    if (ID_COLUMNS.has(c.name)) return `lower(${c.name}::VARCHAR) AS ${c.name}`;
    return `${c.name}::${c.type} AS ${c.name}`;
  });
  const check = (await db.all(
    `SELECT count(*) AS n, count(*) FILTER (WHERE id IS NULL OR NOT regexp_full_match(lower(id::VARCHAR), ${UUID}) OR created_at IS NULL OR type IS NULL OR NOT list_contains(${VALID_TYPES}, type::VARCHAR)) AS invalid FROM ${src.from}`,
    src.params,
  ))[0]!;
  if (Number(check['invalid']) > 0) throw bad(`${Number(check['invalid'])} row(s) of ${path} lack an id (a UUID), a created_at or a known type; nothing was imported`);
  const total = Number(check['n']);
  const lo = `$${src.params.length + 1}`;
  const hi = `$${src.params.length + 2}`;
  const select = `SELECT file_row_number - ${lo} AS rn, ${cols.join(', ')} FROM ${src.from} WHERE file_row_number BETWEEN ${lo} AND ${hi}`;
  let done = 0;
  for (let start = 0; start < total; start += batchRows) {
    const rows = Math.min(batchRows, total - start);
    await bulk({ db, select, params: [...src.params, start, start + rows - 1], rows });
    done += rows;
    onProgress?.(done, total);
  }
  return done;
}

/** Loads JSON lines of export rows into a table numbered in file order. */
async function stageJsonLines(db: Database, path: string): Promise<Source> {
  const columns = EXPORT_COLUMNS.map((c) => `${c}: '${TYPE[c]}'`).join(', ');
  await db.run('DROP TABLE IF EXISTS tl_import_stage');
  await db.run(`CREATE TABLE tl_import_stage AS SELECT row_number() OVER () - 1 AS file_row_number, * FROM read_json($1, format = 'newline_delimited', columns = {${columns}})`, [path]);
  return { from: 'tl_import_stage', params: [] };
}
