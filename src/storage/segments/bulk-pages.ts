// A bulk load's segment made of its source's own pages: when a kind's rows of a batch are whole row
// groups of the source Parquet file that hold only that kind and need no change (ids already
// lowercase, kind-only columns empty elsewhere: an export of segments is this), the segment copies
// those column chunks byte for byte (parquet-splice.ts) and DuckDB writes only the columns the store
// adds (seq, project_id, run_id, the shredded metrics, tag_set), one small file per row group so
// the row counts line up. At 1M spans, re-encoding every column was ~9 of an import's ~11 CPU s.
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Connection, Database } from '../../db/database.js';
import { ident, int, joinSql, raw, sql, type Sql } from '../../query/sql.js';
import { spliceGroups, type GroupSources } from '../parquet/parquet-splice.js';
import { TAG_SET_COLUMN, TAG_SET_SQL, type RecordKind } from '../../record/record-columns.js';
import { stringLiteral } from '../../db/sql-string.js';
import { withTagSet } from './segments.js';

/** A row group of the source the batch may take as it is. */
export interface SourceGroup {
  kind: RecordKind;
  /** Its index in the source file. */
  group: number;
  /** Its first file row (file_row_number) and its rows. */
  start: number;
  rows: number;
}

/** Where a batch's rows lie in a Parquet file, and which of its row groups need no change. */
export interface BatchPages {
  path: string;
  /** The file row of the batch's row 0 (rn = file_row_number - lo). */
  lo: number;
  groups: readonly SourceGroup[];
}

/** Side files written at once (the importer's instance has this many connections besides the segment's). */
export const SIDE_WRITERS = 2;

export interface PageSegment {
  /** The importer's instance (for the side files' extra connections). */
  readonly db: Database;
  readonly pages: BatchPages;
  readonly groups: readonly SourceGroup[];
  /** The kind's full SELECT as a COPY would write it (its columns and types are the template's). */
  readonly select: Sql;
  /** The batch's first sequence number, the target project and run, and the kind's metrics as [name, column id]. */
  readonly base: number;
  readonly projectId: string;
  readonly runId: string;
  readonly metrics: readonly (readonly [string, number])[];
  readonly compressionLevel: number;
  readonly scratch: string;
}

/** Writes the segment file at `abs` from the source's pages and DuckDB's added columns. */
export async function writePageSegment(conn: Connection, abs: string, w: PageSegment): Promise<void> {
  mkdirSync(w.scratch, { recursive: true });
  const tag = randomUUID();
  const template = join(w.scratch, `pages-${tag}-template.parquet`);
  const sides: string[] = [];
  try {
    const opts = sql`FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL ${int(w.compressionLevel)}`;
    // The template: the segment's columns as a COPY writes them, no rows.
    await conn.run(sql`COPY (${withTagSet(w.select)} LIMIT 0) TO ${stringLiteral(template)} (${opts})`);
    const shredded = joinSql(
      w.metrics.map(([name, id]) => sql`, metrics[${name}] AS ${ident(`m${id}`)}`),
      '',
    );
    const groups: GroupSources[] = w.groups.map((g) => {
      const side = join(w.scratch, `pages-${tag}-${g.group}.parquet`);
      sides.push(side);
      return [
        { path: side, group: 0 },
        { path: w.pages.path, group: g.group },
      ];
    });
    // Each reads one row group, which DuckDB scans on one thread: SIDE_WRITERS at a time, on
    // connections of their own (the importer's instance has them), keep its threads busy.
    let next = 0;
    const worker = async (c: Connection) => {
      try {
        for (let i = next++; i < w.groups.length; i = next++) await writeSide(c, w, w.groups[i]!, sides[i]!, opts, shredded);
      } catch (err) {
        next = w.groups.length; // the other writers stop too
        throw err;
      }
    };
    // Every writer has stopped before the files are removed (below).
    const done = await Promise.allSettled([worker(conn), ...Array.from({ length: SIDE_WRITERS - 1 }, () => w.db.withConnection(worker))]);
    for (const d of done) if (d.status === 'rejected') throw d.reason;
    spliceGroups(abs, template, groups);
  } finally {
    rmSync(template, { force: true });
    for (const f of sides) rmSync(f, { force: true });
  }
}

/** Writes the added columns of one source row group: one row group, as many rows. */
async function writeSide(conn: Connection, w: PageSegment, g: SourceGroup, side: string, opts: Sql, shredded: Sql): Promise<void> {
  const rows = sql`SELECT file_row_number, metrics::MAP(VARCHAR, DOUBLE) AS metrics, tags::VARCHAR[] AS tags
    FROM read_parquet(${w.pages.path}, file_row_number = true) WHERE file_row_number BETWEEN ${g.start} AND ${g.start + g.rows - 1}`;
  await conn.run(
    sql`COPY (SELECT (${w.base} + file_row_number - ${w.pages.lo})::BIGINT AS seq, ${w.projectId}::VARCHAR AS project_id,
     ${w.runId}::VARCHAR AS run_id${shredded}, ${raw(TAG_SET_SQL)} AS ${raw(TAG_SET_COLUMN)}
     FROM (${rows}))
     TO ${stringLiteral(side)} (${opts}, ROW_GROUP_SIZE ${int(Math.max(g.rows, 1) * 2)})`,
  );
}
