// After an open, once questions pause, the live segments' Parquet footers, and their top lists files',
// are read once in the background: DuckDB keeps the footers it has read (parquet_metadata_cache), so a
// new process's later questions do not wait on opening and parsing them. A batch's files are held (as a merge holds its
// inputs) so a drop committed meanwhile leaves them until read.
import { join } from 'node:path';
import { sql } from '../../query/sql.js';
import { topListsPath } from '../indexes/top-lists.js';
import type { StoreState } from '../store-state.js';

/** Segments whose footers one statement reads. */
const BATCH = 64;

/** Reads the footer (and its top lists file's) of every segment found at open and still live, once; stops between batches when `stopped`. Never throws. */
export async function warmFooters(s: StoreState, stopped: () => boolean): Promise<void> {
  // The segments found at open: those sealed or merged since wrote their footers in this process and
  // are not kept (seals and merges cache none).
  const found = new Set(s.manifest.segments.map((g) => g.file));
  // After a pause in questions (the open counts as one): questions asked at once read the footers they
  // need themselves, faster than beside a warm-up of them all.
  await s.quiet('questions', stopped, performance.now());
  const segments = s.manifest.segments.filter((g) => found.has(g.file));
  for (let i = 0; i < segments.length && !stopped(); i += BATCH) {
    const part = segments.slice(i, i + BATCH);
    const release = s.use(part.map((g) => g.file));
    try {
      const files = part.map((g) => join(s.dir, g.file));
      // count(*) reads row counts from the footers; union_by_name reads every file's schema.
      await s.db.all(sql`SELECT count(*) AS n FROM read_parquet(${files}, hive_partitioning = false, union_by_name = true)`);
      const lists = part.filter((g) => g.top_lists === true).map((g) => topListsPath(join(s.dir, g.file)));
      if (lists.length > 0 && !stopped()) await s.db.all(sql`SELECT count(*) AS n FROM read_parquet(${lists}, union_by_name = true)`);
    } catch {
      // A damaged or vanished file is the questions' to report; warming only saves time.
      return;
    } finally {
      release();
    }
  }
}
