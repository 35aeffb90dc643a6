// A bulk load's segment made of its source's own pages: when a kind's rows of a batch are whole row
// groups of the source Parquet file that hold only that kind and need no change (ids already
// lowercase, kind-only columns empty elsewhere: an export of segments is this), the segment copies
// those column chunks byte for byte (parquet-splice.ts) and DuckDB writes only the columns the store
// adds (seq, project_id, run_id, the shredded metrics, tag_set), one small file per row group so
// the row counts line up. At 1M spans, re-encoding every column was ~9 of an import's ~11 CPU s.
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Connection, Database, Param } from '../../db/database.js';
import { spliceGroups, type GroupSources } from '../parquet/parquet-splice.js';
import { TAG_SET_COLUMN, TAG_SET_SQL, type RecordKind } from '../../record/record-columns.js';
import { sqlString } from '../../db/sql-string.js';

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
  readonly select: string;
  readonly params: readonly Param[];
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
    const opts = `FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL ${w.compressionLevel}`;
    // The template: the segment's columns as a COPY writes them, no rows.
    await conn.run(`COPY (SELECT COLUMNS(lambda c: c <> '${TAG_SET_COLUMN}'), ${TAG_SET_SQL} AS ${TAG_SET_COLUMN} FROM (${w.select}) LIMIT 0) TO ${sqlString(template)} (${opts})`, w.params);
    const shredded = w.metrics.map(([, id], i) => `, metrics[$${8 + i}] AS m${id}`).join('');
    const groups: GroupSources[] = w.groups.map((g) => {
      const side = join(w.scratch, `pages-${tag}-${g.group}.parquet`);
      sides.push(side);
      return [{ path: side, group: 0 }, { path: w.pages.path, group: g.group }];
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
async function writeSide(conn: Connection, w: PageSegment, g: SourceGroup, side: string, opts: string, shredded: string): Promise<void> {
  await conn.run(
    `COPY (SELECT ($1 + file_row_number - $2)::BIGINT AS seq, $3::VARCHAR AS project_id, $4::VARCHAR AS run_id${shredded}, ${TAG_SET_SQL} AS ${TAG_SET_COLUMN}
     FROM (SELECT file_row_number, metrics::MAP(VARCHAR, DOUBLE) AS metrics, tags::VARCHAR[] AS tags FROM read_parquet($5, file_row_number = true) WHERE file_row_number BETWEEN $6 AND $7))
     TO ${sqlString(side)} (${opts}, ROW_GROUP_SIZE ${Math.max(g.rows, 1) * 2})`,
    [w.base, w.pages.lo, w.projectId, w.runId, w.pages.path, g.start, g.start + g.rows - 1, ...w.metrics.map(([name]) => name)],
  );
}
