// The one user of @duckdb/node-api for queries (src/storage/lock.ts only opens a database file to hold
// its lock; the SQL sandbox opens its own locked-down instances). Runs SQL fragments (src/query/sql.ts),
// their values bound as positional parameters, on a small pool of connections (one statement at a time
// per connection) and maps result rows once. It builds no SQL from request data.
import {
  DOUBLE,
  DuckDBInstance,
  DuckDBTypeId,
  type DuckDBDataChunk,
  type DuckDBPendingResult,
  type DuckDBType as ColumnType,
  LIST,
  listValue,
  VARCHAR,
  type DuckDBConnection,
  type DuckDBTableFunction,
  type DuckDBType,
  type DuckDBValue,
} from '../vendor/duckdb.js';
import duckdb from '@duckdb/node-bindings';
import { StorageError } from '../errors.js';
import { compile, ident, raw, sql, type Param, type Sql } from '../query/sql.js';
import { stringLiteral } from './sql-string.js';

/**
 * The C handle of a pending result, which node-api keeps in a private field (untyped in its
 * declarations): polling it is the only way to wait without running tasks on this thread, as the
 * public runTask would.
 */
function pendingHandle(pending: DuckDBPendingResult): duckdb.PendingResult | undefined {
  return pending['pending_result'];
}

export type Row = Record<string, unknown>;

/** What query execution needs of a database: run a statement, read its rows. */
export interface SqlRunner {
  all(q: Sql): Promise<Row[]>;
}

export interface DatabaseOptions {
  /** Worker threads DuckDB may use (default: all cores). */
  threads?: number;
  /** e.g. '4GB'; DuckDB's default is 80% of RAM. */
  memoryLimit?: string;
  /** Where DuckDB spills large sorts. */
  tempDirectory?: string;
  /** Connections in the pool (default 4). */
  connections?: number;
  /** A database file (default: in memory); its tables then live on disk, beyond the memory limit. */
  path?: string;
  /**
   * Freeing more than this at once returns the allocator's free pages to the system (DuckDB's
   * `allocator_bulk_deallocation_flush_threshold`, default 512 MiB: never, for our sizes). Merges set it
   * (merge.ts); the store's own database does not: at a low threshold a large text scan takes markedly
   * longer (pages given back and faulted in again for every vector of strings).
   */
  bulkFreeThreshold?: string;
  /**
   * Keep Parquet footers in memory once read (default true: reads plan from them again and again). A
   * database that reads each file once (merges) turns it off: the cache keeps the footer of every file
   * ever read, deleted ones too, until the memory limit presses (memory that grows with every segment sealed).
   */
  footerCache?: boolean;
}

export class Database {
  readonly #instance: DuckDBInstance;
  readonly #idle: DuckDBConnection[] = [];
  readonly #waiting: ((c: DuckDBConnection) => void)[] = [];
  readonly #all: DuckDBConnection[] = [];
  #closed = false;
  // Statements in flight by the epoch they started in, and work waiting for older ones to finish:
  // a file retired at epoch E may be deleted once no statement that started before E still runs
  // (it may have been planned over that file).
  #epoch = 0;
  readonly #inFlight = new Map<number, number>();
  readonly #afterDrain: { epoch: number; fn: () => void }[] = [];
  /** Whether DuckDB runs worker threads of its own (threads > 1): Connection.runPolled needs one. */
  #workers = false;

  private constructor(instance: DuckDBInstance) {
    this.#instance = instance;
  }

  static async open(options: DatabaseOptions = {}): Promise<Database> {
    const config: Record<string, string> = {};
    if (options.threads) config['threads'] = String(options.threads);
    if (options.memoryLimit) config['memory_limit'] = options.memoryLimit;
    if (options.tempDirectory) config['temp_directory'] = options.tempDirectory;
    const db = new Database(await DuckDBInstance.create(options.path ?? ':memory:', config));
    const n = options.connections ?? 4;
    for (let i = 0; i < n; i++) {
      const c = await db.#instance.connect();
      db.#all.push(c);
      db.#idle.push(c);
    }
    // Footers of immutable segments are read once, not on every query.
    const footers = options.footerCache ?? true;
    const on = raw(footers ? 'true' : 'false');
    await db.run(sql`SET parquet_metadata_cache = ${on}`);
    await db.run(sql`SET enable_object_cache = ${on}`);
    // DuckDB's cache of file bytes also keeps what it read of local files (our segments, including those
    // merged away and deleted) until the memory limit presses; the OS page cache already holds them.
    await db.run(sql`SET enable_external_file_cache = false`);
    // Resident memory, not only DuckDB's own accounting: COPY buffers up to this much of row groups
    // waiting to be written in order (default 1.2 GiB), and freed memory goes back to the system once
    // this much is free (default 128 MiB).
    await db.run(sql`SET write_buffer_row_group_memory_limit = '64MB'`);
    await db.run(sql`SET allocator_flush_threshold = '32MB'`);
    if (options.bulkFreeThreshold)
      await db.run(sql`SET allocator_bulk_deallocation_flush_threshold = ${stringLiteral(options.bulkFreeThreshold)}`);
    db.#workers = (options.threads ?? Number((await db.all(sql`SELECT current_setting('threads') AS t`))[0]!['t'])) > 1;
    return db;
  }

  async #acquire(): Promise<DuckDBConnection> {
    if (this.#closed) throw new StorageError('database is closed');
    const c = this.#idle.pop();
    if (c) return c;
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  #release(c: DuckDBConnection): void {
    const next = this.#waiting.shift();
    if (next) next(c);
    else this.#idle.push(c);
  }

  /** Runs `fn` with one connection held, so a sequence of statements (a transaction) stays together. */
  async withConnection<T>(fn: (c: Connection) => Promise<T>): Promise<T> {
    const unpin = this.pin();
    try {
      const c = await this.#acquire();
      try {
        return await fn(new Connection(c, this.#workers));
      } finally {
        this.#release(c);
      }
    } finally {
      unpin();
    }
  }

  /**
   * Holds back work registered with `afterStatementsInFlight` from now until the returned function is
   * called: a reader pins when it takes its snapshot, so nothing the snapshot names (a file, a table)
   * is deleted before the reader is done, even if its statements start later.
   */
  pin(): () => void {
    const epoch = this.#epoch;
    this.#inFlight.set(epoch, (this.#inFlight.get(epoch) ?? 0) + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const n = this.#inFlight.get(epoch)! - 1;
      if (n === 0) this.#inFlight.delete(epoch);
      else this.#inFlight.set(epoch, n);
      this.#drain();
    };
  }

  /** A connection of its own, outside the pool (the writer's, a background task's); closed with the database. */
  async dedicated(functions: readonly DuckDBTableFunction[] = []): Promise<Connection> {
    if (this.#closed) throw new StorageError('database is closed');
    const c = await this.#instance.connect();
    for (const f of functions) c.registerTableFunction(f);
    this.#all.push(c);
    return new Connection(c, this.#workers);
  }

  /** Calls `fn` once every statement already started (or queued) and every pin taken has finished; at once if none. */
  afterStatementsInFlight(fn: () => void): void {
    this.#afterDrain.push({ epoch: ++this.#epoch, fn });
    this.#drain();
  }

  #drain(): void {
    if (this.#afterDrain.length === 0) return;
    let oldest = Infinity;
    for (const e of this.#inFlight.keys()) oldest = Math.min(oldest, e);
    while (this.#afterDrain.length > 0 && this.#afterDrain[0]!.epoch <= oldest) this.#afterDrain.shift()!.fn();
  }

  async run(q: Sql): Promise<void> {
    await this.withConnection((c) => c.run(q));
  }

  async all(q: Sql): Promise<Row[]> {
    return this.withConnection((c) => c.all(q));
  }

  /**
   * Streams a query's result chunk by chunk (up to 2,048 rows each) on a pooled connection held until
   * the iteration ends (finish it or break out: the connection and the pin go back then).
   */
  async *stream(q: Sql): AsyncGenerator<{ names: string[]; types: ColumnType[]; chunk: DuckDBDataChunk | null }> {
    const { text, params } = compile(q);
    const unpin = this.pin();
    try {
      const c = await this.#acquire();
      try {
        let result: Awaited<ReturnType<typeof c.stream>>;
        try {
          result = await c.stream(text, toValues(params), toTypes(params));
        } catch (err) {
          throw wrap(err, text);
        }
        const names = result.columnNames();
        const types = result.columnTypes();
        // A result without rows still yields once (chunk null), so callers learn its columns.
        for (let first = true; ; first = false) {
          const chunk = await result.fetchChunk();
          if (!chunk || chunk.rowCount === 0) {
            if (first) yield { names, types, chunk: null };
            return;
          }
          yield { names, types, chunk };
        }
      } finally {
        this.#release(c);
      }
    } finally {
      unpin();
    }
  }

  /** Runs a statement (returning its rows), reporting DuckDB's progress estimate (0..1) about every `everyMs`. */
  async runWithProgress(
    q: Sql,
    onProgress: (fraction: number) => void,
    everyMs = 200,
    settings: Readonly<Record<string, 'true' | 'false'>> = {},
  ): Promise<Row[]> {
    return this.withConnection(async (conn) => {
      const timer = setInterval(() => {
        const p = conn.progress;
        if (p >= 0) onProgress(p);
      }, everyMs);
      // Settings for this statement only (the connection goes back to the pool): names are ours, values booleans.
      const names = Object.keys(settings).filter((n) => /^[a-z_]+$/.test(n));
      try {
        for (const n of names) await conn.run(sql`SET ${ident(n)} = ${raw(settings[n] === 'true' ? 'true' : 'false')}`);
        return await conn.all(q);
      } finally {
        clearInterval(timer);
        for (const n of names) await conn.run(sql`RESET ${ident(n)}`).catch(() => undefined);
      }
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const c of this.#all) c.closeSync();
    this.#instance.closeSync();
  }
}

export class Connection {
  readonly #c: DuckDBConnection;
  readonly #workers: boolean;
  constructor(c: DuckDBConnection, workers = false) {
    this.#c = c;
    this.#workers = workers;
  }

  /** DuckDB's estimate of the running statement's progress, 0..1 (negative when it has none). */
  get progress(): number {
    const p = this.#c.progress.percentage;
    return p < 0 ? -1 : p / 100;
  }

  /**
   * Stops the statement running on this connection (it fails with DuckDB's interrupt error); a store
   * that closes without waiting for its seals and merges calls this.
   */
  interrupt(): void {
    this.#c.interrupt();
  }

  async run(q: Sql): Promise<void> {
    const { text, params } = compile(q);
    try {
      await this.#c.run(text, toValues(params), toTypes(params));
    } catch (err) {
      throw wrap(err, text);
    }
  }

  /**
   * Runs one statement that returns nothing, leaving its tasks to DuckDB's worker threads and checking
   * every `pollMs` whether they are done, instead of waiting inside DuckDB: a thread waiting there
   * spins on DuckDB's task queue while a worker runs the statement, and an insert from a table function
   * (tl_batches) keeps its worker waiting on callbacks into the main thread. Inserts into memory tables
   * run this way: the server spends less CPU a span and reads during ingest answer sooner. Without
   * worker threads (threads = 1) nobody would run the tasks: the statement runs as run() does.
   */
  async runPolled(q: Sql, pollMs = 1): Promise<void> {
    if (!this.#workers) return this.run(q);
    const { text, params } = compile(q);
    try {
      const prepared = await this.#c.prepare(text);
      try {
        if (params.length > 0) prepared.bind(toValues(params), toTypes(params));
        const pending = prepared.start();
        const handle = pendingHandle(pending);
        while (handle !== undefined) {
          const state = duckdb.pending_execute_check_state(handle);
          if (state === duckdb.PendingState.RESULT_READY || state === duckdb.PendingState.ERROR) break;
          await new Promise((r) => setTimeout(r, pollMs));
        }
        await pending.getResult(); // at once when ready; throws the statement's error
      } finally {
        prepared.destroySync();
      }
    } catch (err) {
      throw wrap(err, text);
    }
  }

  async all(q: Sql): Promise<Row[]> {
    const { text, params } = compile(q);
    try {
      const reader = await this.#c.runAndReadAll(text, toValues(params), toTypes(params));
      return reader.getRowObjectsJS() as Row[];
    } catch (err) {
      throw wrap(err, text);
    }
  }

  /**
   * The names of the columns a query returns, from the prepared statement: nothing runs (a LIMIT 0
   * run still planned and started the query, a sort over a memory table among them). A statement
   * whose columns hang on a parameter (a table function's, read_parquet($1)) is typed only when run:
   * its columns come from a LIMIT 0 run, which for a Parquet source reads only footers.
   */
  async columnNames(q: Sql): Promise<string[]> {
    const { text, params } = compile(q);
    try {
      const prepared = await this.#c.prepare(text);
      try {
        if (params.length > 0) prepared.bind(toValues(params), toTypes(params));
        const n = prepared.columnCount;
        if (Array.from({ length: n }, (_, i) => prepared.columnTypeId(i)).every((t) => t !== DuckDBTypeId.INVALID)) {
          return Array.from({ length: n }, (_, i) => prepared.columnName(i));
        }
      } finally {
        prepared.destroySync();
      }
      const limited = compile(sql`SELECT * FROM (${q}) LIMIT 0`);
      const reader = await this.#c.runAndReadAll(limited.text, toValues(limited.params), toTypes(limited.params));
      return reader.columnNames();
    } catch (err) {
      throw wrap(err, text);
    }
  }

  /**
   * Each chunk of a result whose columns are all 8 bytes wide and never null (BIGINT, UBIGINT, DOUBLE),
   * as one copy of each column's bytes, in result order. Millions of values are copied as buffers, not
   * converted one by one into JS values; the chunks of the materialized result are read without an
   * asynchronous step each.
   */
  async *fixedChunks(q: Sql): AsyncGenerator<Uint8Array[]> {
    const { text, params } = compile(q);
    let result: Awaited<ReturnType<DuckDBConnection['run']>>;
    try {
      result = await this.#c.run(text, toValues(params), toTypes(params));
    } catch (err) {
      throw wrap(err, text);
    }
    const wide = [DuckDBTypeId.BIGINT, DuckDBTypeId.UBIGINT, DuckDBTypeId.DOUBLE];
    const width = result.columnTypes().map((t) => (wide.includes(t.typeId) ? 8 : 0));
    if (width.some((w) => w === 0)) throw new StorageError(`fixedChunks: a column is not 8 bytes wide in ${text}`);
    for (let i = 0; i < result.chunkCount; i++) {
      const chunk = result.getChunk(i).chunk;
      const n = duckdb.data_chunk_get_size(chunk);
      yield width.map((w, c) => {
        const v = duckdb.data_chunk_get_vector(chunk, c);
        if (!allValid(duckdb.vector_get_validity(v, Math.ceil(n / 64) * 8), n))
          throw new StorageError(`fixedChunks: a null value in ${text}`);
        return duckdb.vector_get_data(v, w * n).slice(0, w * n);
      });
    }
  }

  /** A result as one array per column (no object per row: for reading many rows of few columns). */
  async columns(q: Sql): Promise<unknown[][]> {
    const { text, params } = compile(q);
    try {
      const reader = await this.#c.runAndReadAll(text, toValues(params), toTypes(params));
      return reader.getColumnsJS() as unknown[][];
    } catch (err) {
      throw wrap(err, text);
    }
  }
}

/** Whether a validity mask (null: none, every value valid) marks the first `n` values valid. */
function allValid(mask: Uint8Array | null, n: number): boolean {
  if (!mask || mask.length === 0) return true;
  for (let i = 0; i < n >> 3; i++) if (mask[i] !== 255) return false;
  const rest = n & 7;
  return rest === 0 || (mask[n >> 3]! & ((1 << rest) - 1)) === (1 << rest) - 1;
}

function toValues(params: readonly Param[]): DuckDBValue[] {
  return params.map((p) => (Array.isArray(p) ? listValue(p as DuckDBValue[]) : (p as DuckDBValue)));
}

/**
 * Types the driver cannot infer safely: an empty list (bound as VARCHAR[]; SQL casts it where needed)
 * and numbers that are not safe integers (bound as DOUBLE: 1e300 is "integral" in JS but no BIGINT).
 */
function toTypes(params: readonly Param[]): DuckDBType[] | undefined {
  const typeOf = (p: Param): DuckDBType | undefined => {
    if (Array.isArray(p) && p.length === 0) return LIST(VARCHAR);
    if (typeof p === 'number' && !Number.isSafeInteger(p)) return DOUBLE;
    if (Array.isArray(p) && typeof p[0] === 'number' && (p as number[]).some((x) => !Number.isSafeInteger(x))) return LIST(DOUBLE);
    return undefined;
  };
  const types = params.map(typeOf);
  return types.some((t) => t !== undefined) ? (types as DuckDBType[]) : undefined;
}

function wrap(err: unknown, sql: string): StorageError {
  const e = new StorageError(`query failed: ${(err as Error).message}`, { cause: err });
  (e as StorageError & { sql?: string }).sql = sql;
  return e;
}
