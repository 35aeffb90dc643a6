// Import: records from an export (Parquet, JSON lines or an Arrow IPC file, the columns of
// EXPORT_COLUMNS) or JSON lines of v2 logging bodies, into one project and run. Export rows keep
// their ids, links, timestamps and versions, so importing twice changes nothing (a record logged
// again with its id replaces itself). Rows are written in batches, each one write-ahead-log entry:
// a crash keeps every batch whole or leaves it out. The file is checked whole before anything is
// written (ids, types and created_at present), so a bad file writes nothing.
import { randomUUID } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, openSync, readSync, closeSync, rmSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { RecordBatchReader, type RecordBatch, type Vector } from 'apache-arrow';
import { Database } from '../../db/database.js';
import { raw, sql, type Sql } from '../../query/sql.js';
import { InvalidRequestError } from '../../errors.js';
import { ALL_KINDS } from '../../query/columns.js';
import { KIND_COLUMNS } from '../../query/match-facts.js';
import { JsonText, type Draft } from '../../record/record.js';
import { fieldsFrom, isDraft } from '../../record/record-checks.js';
import type { BulkBatch } from '../../storage/segments/bulk-load.js';
import { EXPORT_COLUMNS } from './export.js';
import { arrowColumns, DIRECT_BATCH_ROWS, importDirect } from './import-direct.js';
import { bad, exportColumnsOf, ID_COLUMNS, TYPE, UUID, VALID_TYPES } from './import-checks.js';
import { SIDE_WRITERS } from '../../storage/segments/bulk-pages.js';

export type ImportFormat = 'parquet' | 'jsonl' | 'arrow';

export interface ImportOptions {
  /** Default: from the file name (.parquet, .jsonl/.ndjson/.json, .arrow/.arrows/.ipc/.feather). */
  format?: ImportFormat;
  /**
   * Records per batch: one atomic commit each. Exports go straight into segments (default 1,000,000
   * per commit); v2 bodies, and Arrow files laid out otherwise than exports, go through the log (one
   * entry each, default 10,000).
   */
  batchRows?: number;
  /** Called after each batch is durable, with records written so far and the total when known. */
  onProgress?: (done: number, total: number | null) => void;
  /**
   * Rows of a batch DuckDB sorts at a time when they come out of created_at order (default: ~128 MB
   * of them by a Parquet file's footer, else 150,000), so a sort stays within the importer's memory.
   */
  sortRows?: number;
}

export interface ImportResult {
  /** Export rows written, or v2 bodies logged. */
  records: number;
  bodies: number;
}

/** Writes drafts of one batch into the target run (durably), or logs one v2 body. */
export interface ImportSink {
  write(drafts: Draft[]): Promise<void>;
  /** Writes flat rows read by DuckDB straight into segments, one commit (the direct path); optional. */
  bulk?(batch: BulkBatch): Promise<number>;
  logBody(body: Record<string, unknown>, line: number): Promise<void>;
}

const JSON_TEXT = new Set(['tags', 'metrics', 'user_metadata', 'dataset_metadata']);
const PARSED_TEXT = new Set(['tools', 'extra']);
export function formatOf(path: string, given?: string): ImportFormat {
  if (given !== undefined) {
    if (given === 'parquet' || given === 'jsonl' || given === 'arrow') return given;
    throw new InvalidRequestError([
      { loc: ['format'], msg: 'Input should be parquet, jsonl or arrow', type: 'literal_error', input: given },
    ]);
  }
  const lower = path.toLowerCase();
  if (lower.endsWith('.parquet')) return 'parquet';
  if (/\.(jsonl|ndjson|json)$/.test(lower)) return 'jsonl';
  if (/\.(arrow|arrows|ipc|feather)$/.test(lower)) return 'arrow';
  throw bad(`cannot tell the format of ${path} from its name: give format (parquet, jsonl or arrow)`);
}

/** Kind-specific columns (model, tool_call_id, ...) and the kinds the registry gives them. */
const KIND_ONLY: ReadonlyMap<string, readonly string[]> = new Map(KIND_COLUMNS.map((c) => [c.id, c.applicable_types]));

/** One export row (column -> value as DuckDB or Arrow gives it) as a draft for the store. */
function toDraft(get: (col: string) => unknown): Draft {
  const type = String(get('type'));
  const fields = fieldsFrom((col) => {
    // Placed by the import's target run and the log.
    if (col === 'seq' || col === 'project_id' || col === 'run_id') return undefined;
    // Kind-specific columns only on the kinds the registry gives them, as every other way in keeps
    // them: a record never shows them elsewhere, so a filter must not see them.
    if (KIND_ONLY.get(col)?.includes(type) === false) return undefined;
    const v = get(col);
    if (v === null || v === undefined) return undefined;
    if (JSON_TEXT.has(col)) return typeof v === 'string' ? parseOr(v) : v;
    // JSON text stays text (the store keeps it as it is): no parse and stringify again.
    if (PARSED_TEXT.has(col) && typeof v === 'string') return new JsonText(v);
    if ((col === 'input' || col === 'output') && typeof v === 'string' && get(`${col}_json`) === true) return new JsonText(v);
    return v;
  });
  // The file was checked whole before (ids, types and created_at present).
  if (!isDraft(fields)) throw bad('an export row lacks an id, a type or a created_at; nothing more was imported');
  return fields;
}

function parseOr(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The SELECT list reading an export through DuckDB: timestamps as epoch µs, nested values as JSON text. */
function selectList(present: ReadonlySet<string>): string {
  return EXPORT_COLUMNS.map((c) => {
    if (!present.has(c)) return `NULL::${TYPE[c]} AS ${c}`;
    if (c === 'created_at' || c === 'updated_at') return `epoch_us(${c}::TIMESTAMP) AS ${c}`;
    if (JSON_TEXT.has(c)) return `to_json(${c})::VARCHAR AS ${c}`;
    // Ids are stored lowercase (lookups lowercase what they are given).
    if (ID_COLUMNS.has(c)) return `lower(${c}::VARCHAR) AS ${c}`;
    return `${c}::${TYPE[c]} AS ${c}`;
  }).join(', ');
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Rows gathered into batches of `size`, each written through the sink (one durable write) as it fills. */
class DraftBatcher {
  #pending: Draft[] = [];
  #done = 0;

  constructor(
    private readonly sink: ImportSink,
    private readonly size: number,
    private readonly progress: (done: number) => void,
  ) {}

  async add(draft: Draft): Promise<void> {
    this.#pending.push(draft);
    if (this.#pending.length >= this.size) await this.#flush();
  }

  /** Writes what is left; returns the rows written. */
  async finish(): Promise<number> {
    if (this.#pending.length > 0) await this.#flush();
    return this.#done;
  }

  async #flush(): Promise<void> {
    await this.sink.write(this.#pending);
    this.#done += this.#pending.length;
    this.#pending = [];
    this.progress(this.#done);
  }
}

export class Importer {
  readonly #db: Database;
  readonly #stageDir: string;

  /** `stageDir`: where JSON lines are staged as Parquet for the direct path (removed when done). */
  constructor(db: Database, stageDir: string) {
    this.#db = db;
    this.#stageDir = stageDir;
  }

  async run(path: string, sink: ImportSink, options: ImportOptions = {}): Promise<ImportResult> {
    if (!existsSync(path) || !statSync(path).isFile()) throw bad(`no file at ${path}`);
    const format = formatOf(path, options.format);
    // Arrow files go straight into segments when laid out as exports are (else value by value, through the log).
    const layout = sink.bulk !== undefined && format === 'arrow' ? await arrowColumns(path) : null;
    const direct = sink.bulk !== undefined && (format !== 'arrow' || layout !== null) && !(format === 'jsonl' && firstLineIsBody(path));
    const batchRows = options.batchRows ?? (direct ? DIRECT_BATCH_ROWS : 10_000);
    if (!Number.isInteger(batchRows) || batchRows <= 0)
      throw new InvalidRequestError([
        { loc: ['batchRows'], msg: 'Input should be a positive integer', type: 'value_error', input: batchRows },
      ]);
    if (options.sortRows !== undefined && (!Number.isInteger(options.sortRows) || options.sortRows <= 0))
      throw new InvalidRequestError([
        { loc: ['sortRows'], msg: 'Input should be a positive integer', type: 'value_error', input: options.sortRows },
      ]);
    if (direct) {
      const stage = join(this.#stageDir, `import-${randomUUID()}.parquet`);
      try {
        return {
          records: await importDirect(this.#db, path, format, (b) => sink.bulk!(b), batchRows, {
            onProgress: options.onProgress,
            arrowLayout: layout ?? undefined,
            sortRows: options.sortRows,
            stageFile: stage,
            alignBatches: options.batchRows === undefined,
          }),
          bodies: 0,
        };
      } finally {
        rmSync(stage, { force: true });
      }
    }
    if (format === 'arrow') return { records: await this.#arrow(path, sink, batchRows, options), bodies: 0 };
    if (format === 'jsonl' && firstLineIsBody(path)) return { records: 0, bodies: await this.#bodies(path, sink, options) };
    return { records: await this.#flat(path, format, sink, batchRows, options), bodies: 0 };
  }

  /** Parquet or JSON lines of export rows, read by DuckDB (the path is a parameter, never SQL text). */
  async #flat(path: string, format: 'parquet' | 'jsonl', sink: ImportSink, batchRows: number, options: ImportOptions): Promise<number> {
    let from: Sql;
    if (format === 'parquet') {
      from = sql`read_parquet(${path})`;
    } else {
      const columns = raw(EXPORT_COLUMNS.map((c) => `${c}: '${TYPE[c]}'`).join(', '));
      from = sql`read_json(${path}, format = 'newline_delimited', columns = {${columns}})`;
    }
    const present = await exportColumnsOf(this.#db, from, path, format);
    const rows = sql`SELECT ${raw(selectList(present))} FROM ${from}`;
    const check = (
      await this.#db.all(
        sql`SELECT count(*) AS n, count(*) FILTER (WHERE id IS NULL OR NOT regexp_full_match(id, ${raw(UUID)})
            OR created_at IS NULL OR type IS NULL OR NOT list_contains(${raw(VALID_TYPES)}, type)) AS invalid FROM (${rows})`,
      )
    )[0]!;
    if (Number(check['invalid']) > 0)
      throw bad(`${Number(check['invalid'])} row(s) of ${path} lack an id (a UUID), a created_at or a known type; nothing was imported`);
    const total = Number(check['n']);
    const out = new DraftBatcher(sink, batchRows, (done) => options.onProgress?.(done, total));
    for await (const { names, chunk } of this.#db.stream(rows)) {
      if (!chunk) break;
      const cols = chunk.getColumns();
      const index = new Map(names.map((n, i) => [n, i]));
      for (let r = 0; r < chunk.rowCount; r++) await out.add(toDraft((c) => cols[index.get(c)!]![r]));
    }
    return out.finish();
  }

  /** An Arrow IPC file (or stream) of export rows, read batch by batch. */
  async #arrow(path: string, sink: ImportSink, batchRows: number, options: ImportOptions): Promise<number> {
    let names: Set<string>;
    const handle = await open(path, 'r');
    try {
      const reader = await RecordBatchReader.from(handle);
      await reader.open();
      names = new Set(reader.schema.fields.map((f) => f.name));
    } catch (err) {
      throw bad(`${path} cannot be read as Arrow IPC: ${(err as Error).message}`);
    } finally {
      await handle.close().catch(() => undefined);
    }
    for (const need of ['id', 'type', 'created_at'])
      if (!names.has(need)) throw bad(`${path} has no column ${need}: it is not a tracelake export`);
    // Checked whole first (a second pass), so a bad file writes nothing.
    await this.#arrowPass(path, async (batch) => {
      for (let r = 0; r < batch.numRows; r++) {
        const id = batch.getChild('id')!.get(r);
        const type = batch.getChild('type')!.get(r);
        if (
          typeof id !== 'string' ||
          !UUID_RE.test(id) ||
          batch.getChild('created_at')!.get(r) === null ||
          !(ALL_KINDS as readonly string[]).includes(type)
        )
          throw bad(`a row of ${path} lacks an id (a UUID), a created_at or a known type; nothing was imported`);
      }
    });
    const out = new DraftBatcher(sink, batchRows, (done) => options.onProgress?.(done, null));
    await this.#arrowPass(path, async (batch) => {
      const getters = new Map<string, (r: number) => unknown>();
      for (const col of EXPORT_COLUMNS) {
        const v = batch.getChild(col);
        if (v) getters.set(col, arrowGetter(col, v));
      }
      for (let r = 0; r < batch.numRows; r++) await out.add(toDraft((c) => getters.get(c)?.(r) ?? null));
    });
    return out.finish();
  }

  /** Every batch of the file in turn. Through a file handle: from a stream, apache-arrow buffers a whole IPC file. */
  async #arrowPass(path: string, fn: (batch: RecordBatch) => Promise<void>): Promise<void> {
    const handle = await open(path, 'r');
    try {
      const reader = await RecordBatchReader.from(handle);
      for await (const batch of reader) await fn(batch);
    } finally {
      await handle.close().catch(() => undefined);
    }
  }

  /** JSON lines of v2 logging bodies ({traces: [...]} or {trace_id, parent_id, spans: [...]}), each logged as sent. */
  async #bodies(path: string, sink: ImportSink, options: ImportOptions): Promise<number> {
    // Parsed whole first (bounded by the file, not by memory: only the count is kept), so a line that
    // is not JSON refuses the import before anything is logged.
    let lineNo = 0;
    for await (const line of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) {
      lineNo++;
      if (line.trim() === '') continue;
      let body: unknown;
      try {
        body = JSON.parse(line);
      } catch (err) {
        throw bad(`line ${lineNo} of ${path} is not JSON: ${(err as Error).message}; nothing was imported`);
      }
      if (
        typeof body !== 'object' ||
        body === null ||
        Array.isArray(body) ||
        !(Array.isArray((body as Record<string, unknown>)['traces']) || Array.isArray((body as Record<string, unknown>)['spans']))
      ) {
        throw bad(`line ${lineNo} of ${path} is not a v2 logging body (no traces or spans list); nothing was imported`);
      }
    }
    const total = lineNo;
    let n = 0;
    lineNo = 0;
    for await (const line of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) {
      lineNo++;
      if (line.trim() === '') continue;
      await sink.logBody(JSON.parse(line) as Record<string, unknown>, lineNo);
      n++;
      options.onProgress?.(lineNo, total);
    }
    return n;
  }
}

/** A JSON lines file whose first line is a v2 logging body rather than an export row. */
function firstLineIsBody(path: string): boolean {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(1 << 16);
    let text = '';
    for (let pos = 0; ; ) {
      const n = readSync(fd, buf, 0, buf.length, pos);
      if (n === 0) break;
      pos += n;
      text += buf.toString('utf8', 0, n);
      const nl = text.indexOf('\n');
      if (nl >= 0 || text.length > 64 << 20) {
        text = nl >= 0 ? text.slice(0, nl) : text;
        break;
      }
    }
    const first = parseOr(text.trim()) as Record<string, unknown> | null;
    return (
      typeof first === 'object' &&
      first !== null &&
      (Array.isArray(first['traces']) || Array.isArray(first['spans'])) &&
      !('created_at' in first && 'type' in first && 'id' in first)
    );
  } finally {
    closeSync(fd);
  }
}

/** Reads one column of an Arrow batch as the values toDraft expects (timestamps as exact epoch µs). */
function arrowGetter(col: string, v: Vector): (r: number) => unknown {
  if (col === 'created_at' || col === 'updated_at') {
    const data = v.data[0]!;
    const values = data.values as BigInt64Array;
    return (r) => (v.isValid(r) ? Number(values[data.offset + r]) : null);
  }
  if (JSON_TEXT.has(col)) {
    return (r) => {
      const x = v.get(r);
      if (x === null || x === undefined) return null;
      return col === 'tags' ? [...(x as Iterable<unknown>)] : (x as { toJSON(): unknown }).toJSON();
    };
  }
  if (ID_COLUMNS.has(col)) return (r) => (typeof v.get(r) === 'string' ? (v.get(r) as string).toLowerCase() : v.get(r));
  return (r) => v.get(r);
}

/**
 * Imports a file through `sink`. The file is read on a DuckDB instance of its own: a long read on the
 * store's instance would hold a transaction open across every batch written, and each insert then
 * costs more the longer the read goes on.
 */
export async function importFile(
  path: string,
  sink: ImportSink,
  reader: { tempDirectory: string; threads?: number },
  options: ImportOptions,
): Promise<ImportResult> {
  // The direct path sorts each kind's rows in DuckDB: room for that, spilling to <data>/tmp past it.
  // A database file of its own (under <data>/tmp, which a crash leaves to the sweep on open) keeps
  // JSON lines and Arrow rows loaded for the direct path on disk rather than in memory.
  const file = join(reader.tempDirectory, `import-${randomUUID()}.duckdb`);
  mkdirSync(reader.tempDirectory, { recursive: true });
  const db = await Database.open({
    path: file,
    connections: 1 + SIDE_WRITERS,
    memoryLimit: '1GB',
    tempDirectory: reader.tempDirectory,
    ...(reader.threads ? { threads: reader.threads } : {}),
  });
  try {
    return await new Importer(db, reader.tempDirectory).run(path, sink, options);
  } finally {
    await db.close();
    for (const f of [file, `${file}.wal`]) rmSync(f, { force: true });
  }
}
