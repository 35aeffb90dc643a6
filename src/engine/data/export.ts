// Export: the live records of a project (or one run), optionally only a level and a filter (with the
// descendants of what matches, as a delete would take), in one schema for every format: the stored
// columns but the internal sequence number (docs/storage-format.md, "Exports"). Parquet and JSON
// lines are written by DuckDB straight from the segments (COPY streams); Arrow batches are converted
// from DuckDB's result chunks as they arrive and written to the file one at a time (arrow-file.ts),
// so memory stays bounded whatever the size.
import { randomUUID } from 'node:crypto';
import { copyFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { RecordBatch } from 'apache-arrow';
import type { Database } from '../../db/database.js';
import { ChunkToArrow } from '../../db/chunk-arrow.js';
import { ArrowConverter } from '../../db/result-arrow.js';
import { stringLiteral } from '../../db/sql-string.js';
import { EMPTY, ident, joinSql, raw, sql, type Sql } from '../../query/sql.js';
import type { Level } from '../../query/columns.js';
import type { FilterRequest } from '../../schemas/query.js';
import { COLUMN_NAMES } from '../../record/record-columns.js';
import type { RecordStore } from '../../storage/record-store.js';
import type { Snapshot } from '../../storage/snapshot/snapshot.js';
import { writeArrowFile } from './arrow-file.js';
import { EXPORT_PARQUET_OPTIONS, spliceExport } from './export-splice.js';
import type { RecordQueries, RunScope } from '../../query/exec/record-queries.js';

/** Columns of an export, in order. */
export const EXPORT_COLUMNS: readonly string[] = COLUMN_NAMES.filter((c) => c !== 'seq');

export type ExportFormat = 'parquet' | 'jsonl' | 'arrow';
export const EXPORT_FORMATS: readonly ExportFormat[] = ['parquet', 'jsonl', 'arrow'];

export interface ExportSelection extends FilterRequest {
  /** Only records of this level that match the filter, with their descendants (default: every record). */
  level?: Level;
}

export interface ExportFileOptions {
  format: ExportFormat;
  /** Called with the fraction done (0..1) now and then. */
  onProgress?: (fraction: number) => void;
}

export class Exporter {
  readonly #records: RecordStore;
  readonly #db: Database;
  readonly #queries: RecordQueries;
  readonly #dir: string;
  readonly #scratch: string;

  /** `scratch`: where a file is written before it is moved to its place (see DataHost.scratch). */
  constructor(dir: string, scratch: string, records: RecordStore, db: Database, queries: RecordQueries) {
    this.#dir = dir;
    this.#scratch = scratch;
    this.#records = records;
    this.#db = db;
    this.#queries = queries;
  }

  /** The SELECT of an export over a snapshot. */
  #query(snap: Snapshot, scope: RunScope, sel: ExportSelection): Sql {
    const where =
      sel.level === undefined ? EMPTY : sql` WHERE seq IN (SELECT seq FROM (${this.#queries.selection(snap, sel.level, scope, sel)}))`;
    const src = snap.source({
      projectId: scope.projectId,
      ...(scope.runId !== undefined ? { runId: scope.runId } : {}),
      kinds: ['span', 'trace', 'session'],
    });
    return sql`SELECT ${joinSql(EXPORT_COLUMNS.map(ident))} FROM ${src.sql}${where}`;
  }

  /** The selected records as Arrow RecordBatches (one per DuckDB chunk, ~2,048 rows), read lazily. */
  async *batches(scope: RunScope, sel: ExportSelection): AsyncGenerator<RecordBatch> {
    // A read-only store's export that meets a file removed by the writer starts again on a newer
    // snapshot, as long as it has given out nothing yet.
    for (let attempt = 0; ; attempt++) {
      let given = false;
      await this.#records.settled();
      const snap = this.#records.snapshot();
      try {
        // Validated (filter errors thrown) before the first batch is asked for.
        const q = this.#query(snap, scope, sel);
        let fast: ChunkToArrow | null | undefined;
        let conv: ArrowConverter | undefined;
        for await (const { names, types, chunk } of this.#db.stream(q)) {
          if (fast === undefined) fast = ChunkToArrow.create(names, types);
          given = true;
          if (fast && chunk) {
            yield fast.batch(chunk);
            continue;
          }
          conv ??= new ArrowConverter(names, types);
          yield conv.batch(chunk ?? { rowCount: 0, getColumns: () => names.map(() => []) });
        }
        return;
      } catch (err) {
        if (given || !this.#records.retriesAfter(err, attempt)) throw err;
      } finally {
        snap.release();
      }
      await this.#records.refresh();
    }
  }

  /** Rows an export would hold. */
  count(scope: RunScope, sel: ExportSelection): Promise<number> {
    return this.#records.read(async (snap) => {
      const q = this.#query(snap, scope, sel);
      return Number((await this.#db.all(sql`SELECT count(*) AS n FROM (${q})`))[0]!['n']);
    });
  }

  /** Writes an export file. It appears at `out` whole (written aside, then moved) or not at all. */
  async toFile(scope: RunScope, sel: ExportSelection, out: string, options: ExportFileOptions): Promise<{ rows: number }> {
    const tmp = join(this.#scratch, `export-${randomUUID()}`);
    try {
      let rows: number;
      if (options.format === 'arrow') {
        const total = await this.count(scope, sel);
        let done = 0;
        const source = this.batches(scope, sel);
        const counted = async function* () {
          for await (const b of source) {
            done += b.numRows;
            options.onProgress?.(total === 0 ? 1 : done / total);
            yield b;
          }
        };
        rows = await writeArrowFile(tmp, counted());
      } else {
        // A whole Parquet export copies the live segments' pages as they are (export-splice.ts).
        const spliced =
          options.format === 'parquet' && sel.level === undefined
            ? await this.#records.read((snap) =>
                spliceExport(snap, this.#db, this.#dir, scope, tmp, `${tmp}.rest`, (f) => options.onProgress?.(f)),
              )
            : null;
        rows =
          spliced ??
          (await this.#records.read(async (snap) => {
            const q = this.#query(snap, scope, sel);
            // ZSTD level 1: the writer's compression is most of an export's time (level 3 takes up to
            // twice as long for files only slightly smaller). Rows in any order (an export promises none), so
            // DuckDB's threads write row groups as they finish.
            const format = options.format === 'parquet' ? EXPORT_PARQUET_OPTIONS : raw('FORMAT json');
            // The path is ours (a uuid in the scratch folder), never the user's: it is the one literal here.
            const done = await this.#db.runWithProgress(
              sql`COPY (${q}) TO ${stringLiteral(tmp)} (${format})`,
              (f) => options.onProgress?.(f),
              200,
              { preserve_insertion_order: 'false' },
            );
            return Number(done[0]?.['Count'] ?? 0);
          }));
      }
      options.onProgress?.(1);
      moveFile(tmp, out);
      return { rows };
    } finally {
      rmSync(tmp, { force: true });
    }
  }
}

function moveFile(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
    copyFileSync(from, to);
  }
}
