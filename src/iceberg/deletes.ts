// Dead rows of a segment as an Iceberg position delete file. A row is dead when its seq is in the
// store's dead list (deleted, or replaced by a newer version) or its run's retention has expired it
// (created_at before the cutoff). Positions are row numbers in the segment, as Parquet readers count
// them. One delete file per data file, holding all of its dead positions (the shape Iceberg v3's
// deletion vectors take): a reader joins at most one delete file to a data file.
import type { Connection } from '../db/database.js';
import { stringLiteral } from '../db/sql-string.js';
import { EMPTY, int, sql, type Sql } from '../query/sql.js';

/** Iceberg's reserved field ids of a position delete file's columns. */
const FILE_PATH_ID = 2147483546;
const POS_ID = 2147483545;

export interface DeadPositions {
  readonly count: number;
  /** md5 of the positions in order: the same set of positions, the same digest. */
  readonly digest: string;
}

/** Where a segment's dead rows are, for this publish: the dead seqs table and the run's cutoff. */
function deadWhere(cutoffUs: number | undefined): Sql {
  // The cutoff is the store's own number (int() refuses anything but a safe integer); the dead seqs
  // are a table of this connection.
  const expired = cutoffUs === undefined ? EMPTY : sql` OR created_at < make_timestamp(${int(cutoffUs)})`;
  return sql`seq IN (SELECT seq FROM tl_iceberg_dead)${expired}`;
}

/** Loads the dead seqs into a temporary table of this connection (one per publish). */
export async function loadDead(conn: Connection, dead: readonly number[]): Promise<void> {
  await conn.run(sql`CREATE OR REPLACE TEMP TABLE tl_iceberg_dead AS SELECT unnest(${dead}::BIGINT[]) AS seq`);
}

export async function dropDead(conn: Connection): Promise<void> {
  await conn.run(sql`DROP TABLE IF EXISTS tl_iceberg_dead`);
}

export async function deadPositions(conn: Connection, segment: string, cutoffUs: number | undefined): Promise<DeadPositions> {
  const rows = await conn.all(
    sql`SELECT count(*) AS n, coalesce(md5(string_agg(file_row_number::VARCHAR, ',' ORDER BY file_row_number)), '') AS h
     FROM read_parquet(${segment}, hive_partitioning = false, file_row_number = true) WHERE ${deadWhere(cutoffUs)}`,
  );
  return { count: Number(rows[0]!['n']), digest: String(rows[0]!['h']) };
}

/** Writes the position delete file of a segment at `out` (a local path); `dataUri` is the data file as manifests name it. */
export async function writeDeleteFile(
  conn: Connection,
  segment: string,
  cutoffUs: number | undefined,
  dataUri: string,
  out: string,
): Promise<void> {
  await conn.run(
    sql`COPY (SELECT ${dataUri}::VARCHAR AS file_path, file_row_number::BIGINT AS pos
           FROM read_parquet(${segment}, hive_partitioning = false, file_row_number = true) WHERE ${deadWhere(cutoffUs)} ORDER BY pos)
     TO ${stringLiteral(out)} (FORMAT parquet, COMPRESSION zstd, FIELD_IDS {file_path: ${int(FILE_PATH_ID)}, pos: ${int(POS_ID)}})`,
  );
}
