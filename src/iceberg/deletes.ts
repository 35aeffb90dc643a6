// Dead rows of a segment as an Iceberg position delete file. A row is dead when its seq is in the
// store's dead list (deleted, or replaced by a newer version) or its run's retention has expired it
// (created_at before the cutoff). Positions are row numbers in the segment, as Parquet readers count
// them. One delete file per data file, holding all of its dead positions (the shape Iceberg v3's
// deletion vectors take): a reader joins at most one delete file to a data file.
import type { Connection } from '../db/database.js';
import { sqlString } from '../db/sql-string.js';

/** Iceberg's reserved field ids of a position delete file's columns. */
const FILE_PATH_ID = 2147483546;
const POS_ID = 2147483545;

export interface DeadPositions {
  readonly count: number;
  /** md5 of the positions in order: the same set of positions, the same digest. */
  readonly digest: string;
}

/** Where a segment's dead rows are, for this publish: the dead seqs table and the run's cutoff. */
function deadWhere(cutoffUs: number | undefined): string {
  if (cutoffUs !== undefined && !Number.isSafeInteger(cutoffUs)) throw new Error(`bad retention cutoff ${cutoffUs}`);
  // The cutoff is the store's own number (checked above); the dead seqs are a table of this connection.
  return `seq IN (SELECT seq FROM tl_iceberg_dead)${cutoffUs === undefined ? '' : ` OR created_at < make_timestamp(${cutoffUs})`}`;
}

/** Loads the dead seqs into a temporary table of this connection (one per publish). */
export async function loadDead(conn: Connection, dead: readonly number[]): Promise<void> {
  await conn.run('CREATE OR REPLACE TEMP TABLE tl_iceberg_dead AS SELECT unnest($1::BIGINT[]) AS seq', [dead as number[]]);
}

export async function dropDead(conn: Connection): Promise<void> {
  await conn.run('DROP TABLE IF EXISTS tl_iceberg_dead');
}

export async function deadPositions(conn: Connection, segment: string, cutoffUs: number | undefined): Promise<DeadPositions> {
  const rows = await conn.all(
    `SELECT count(*) AS n, coalesce(md5(string_agg(file_row_number::VARCHAR, ',' ORDER BY file_row_number)), '') AS h
     FROM read_parquet($1, hive_partitioning = false, file_row_number = true) WHERE ${deadWhere(cutoffUs)}`,
    [segment],
  );
  return { count: Number(rows[0]!['n']), digest: String(rows[0]!['h']) };
}

/** Writes the position delete file of a segment at `out` (a local path); `dataUri` is the data file as manifests name it. */
export async function writeDeleteFile(conn: Connection, segment: string, cutoffUs: number | undefined, dataUri: string, out: string): Promise<void> {
  await conn.run(
    `COPY (SELECT $2::VARCHAR AS file_path, file_row_number::BIGINT AS pos
           FROM read_parquet($1, hive_partitioning = false, file_row_number = true) WHERE ${deadWhere(cutoffUs)} ORDER BY pos)
     TO ${sqlString(out)} (FORMAT parquet, COMPRESSION zstd, FIELD_IDS {file_path: ${FILE_PATH_ID}, pos: ${POS_ID}})`,
    [segment, dataUri],
  );
}
