// The limit: hand-written DuckDB SQL over tracelake's own Parquet span segments, with nothing of
// tracelake in the query path. Spans are ingested through the tracelake library (so the files are
// exactly the ones tracelake would query), the store is closed, and the questions run as plain SQL
// over `read_parquet([...segment files])` with @duckdb/node-api directly, configured as tracelake
// configures DuckDB (Parquet footers cached). Parquet files are immutable, so the hand-written
// delete rewrites each segment without the deleted rows.
import { DuckDBInstance, type DuckDBConnection, type DuckDBValue } from '../../src/vendor/duckdb.js';
import { readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Question, SpanBatch } from '../workload.js';
import { LibraryLoad } from './library-load.js';
import type { Answer, Peer } from './peer.js';

/** Span segment files of a tracelake data folder: records/project_id=.../run_id=.../kind=span/*.parquet. */
export function spanSegments(dataDir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, inSpans: boolean): void => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p, inSpans || e.name === 'kind=span');
      else if (inSpans && e.name.endsWith('.parquet')) out.push(p);
    }
  };
  walk(join(dataDir, 'records'), false);
  return out;
}

const sqlString = (s: string) => `'${s.replaceAll("'", "''")}'`;

export class DuckDbRawPeer implements Peer {
  readonly name = 'duckdb-raw';
  #load: LibraryLoad | null = null;
  #instance: DuckDBInstance | null = null;
  #conn: DuckDBConnection | null = null;
  #files: string[] = [];
  #generation = 0;

  async setup(dir: string): Promise<void> {
    this.#load = await LibraryLoad.open(dir);
  }

  async adopt(load: LibraryLoad): Promise<void> {
    this.#load = load;
  }

  async insert(batch: SpanBatch): Promise<void> {
    await this.#load!.insert(batch);
  }

  async finishLoad(): Promise<void> {
    // Sealed and compacted as the tracelake peer does: both query the same layout of files. The
    // store is then closed so nothing of tracelake stays in memory.
    await this.#load!.settle();
    await this.#load!.store.close();
    this.#files = spanSegments(this.#load!.dir);
    this.#instance = await DuckDBInstance.create(':memory:');
    this.#conn = await this.#instance.connect();
    await this.#conn.run('SET parquet_metadata_cache = true');
    await this.#conn.run('SET enable_object_cache = true');
    await this.#createView();
  }

  async #createView(): Promise<void> {
    // Newest segment first: segments are sealed in time order, so a newest-first page fills from the
    // first row groups read, and DuckDB's top-N filter on created_at then skips older row groups by
    // their min/max (a text-search page is several times faster than oldest-first).
    const list = [...this.#files].reverse().map(sqlString).join(', ');
    await this.#conn!.run(`CREATE OR REPLACE VIEW spans AS SELECT * FROM read_parquet([${list}], hive_partitioning = false)`);
  }

  async ask(q: Question, variant: number): Promise<Answer> {
    const c = this.#conn!;
    const params = q.variants[variant % q.variants.length]! as DuckDBValue[];
    if (q.mutates) return { count: await this.#deleteWhere(q.sql.duckdb, params) };
    const rows = (await c.runAndReadAll(q.sql.duckdb, params)).getRowObjectsJS();
    if (q.answer === 'count') return { count: Number(rows[0]!['n']) };
    return { ids: rows.map((r) => String(r['id'])) };
  }

  async plan(q: Question, variant: number): Promise<string[]> {
    if (q.mutates) return ['rewrite every segment without the matching rows (COPY ... WHERE NOT predicate)'];
    const params = q.variants[variant % q.variants.length]! as DuckDBValue[];
    const rows = (await this.#conn!.runAndReadAll(`EXPLAIN ${q.sql.duckdb}`, params)).getRowObjectsJS();
    return rows
      .map((r) => String(r['explain_value']))
      .join('\n')
      .split('\n');
  }

  /** Rewrites every segment without the rows matching `predicate`; returns how many went. */
  async #deleteWhere(predicate: string, params: DuckDBValue[]): Promise<number> {
    const c = this.#conn!;
    let deleted = 0;
    this.#generation++;
    const next: string[] = [];
    for (const f of this.#files) {
      const before = Number(
        (await c.runAndReadAll(`SELECT sum(num_rows) AS n FROM parquet_file_metadata(${sqlString(f)})`)).getRowObjectsJS()[0]!['n'],
      );
      const out = f.replace(/(\.v\d+)?\.parquet$/, `.v${this.#generation}.parquet`);
      // Rows come out in file order (DuckDB preserves insertion order), so segments stay sorted.
      const written = await c.runAndReadAll(
        `COPY (SELECT * FROM read_parquet(${sqlString(f)}, hive_partitioning = false) WHERE NOT coalesce(${predicate}, false))
         TO ${sqlString(`${out}.tmp`)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 65536)`,
        params,
      );
      const kept = Number(written.getRowObjectsJS()[0]!['Count']);
      renameSync(`${out}.tmp`, out);
      rmSync(f);
      next.push(out);
      deleted += before - kept;
    }
    this.#files = next;
    await this.#createView();
    return deleted;
  }

  async diskBytes(): Promise<number> {
    // The span segments and their id files: what tracelake keeps for spans (trace and session
    // records live in other files and are not counted here, nor by the other peers).
    let total = 0;
    for (const f of this.#files) {
      total += statSync(f).size;
      const ids = f.replace(/\.parquet$/, '.ids');
      try {
        total += statSync(ids).size;
      } catch {
        // no id file (rewritten by a delete)
      }
    }
    return total;
  }

  async close(): Promise<void> {
    await this.#load?.store.close();
    this.#conn?.closeSync();
    this.#conn = null;
    this.#instance?.closeSync();
    this.#instance = null;
  }
}
