// SQLite through better-sqlite3, the local default of Phoenix and MLflow: one `spans` table with real
// columns for what every query touches (ids, type, name, time, status, model) and one JSON
// `attributes` text column for the rest (input, output, tags, metrics, metadata...), as such tools
// store span attributes. A careful user's setup: WAL journal, synchronous=NORMAL, a 256 MiB page
// cache, one transaction per batch with a prepared statement, and indexes on time, trace, type and
// the one metric they sort by (an expression index, SQLite's way to index a JSON field).
// Indexes exist before loading: a trace store receives spans continuously into an indexed table.
import Database from 'better-sqlite3';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Param, Question, SpanBatch, SpanRow } from '../workload.js';
import type { Answer, Peer } from './peer.js';

const SCHEMA = [
  `CREATE TABLE spans (
     id TEXT PRIMARY KEY,
     trace_id TEXT NOT NULL,
     parent_id TEXT,
     session_id TEXT,
     type TEXT NOT NULL,
     name TEXT NOT NULL,
     created_at INTEGER NOT NULL, -- epoch microseconds
     status_code INTEGER,
     model TEXT,
     attributes TEXT NOT NULL     -- JSON
   )`,
  'CREATE INDEX spans_created_at ON spans (created_at)',
  'CREATE INDEX spans_trace_id ON spans (trace_id)',
  'CREATE INDEX spans_type ON spans (type)',
  `CREATE INDEX spans_correctness ON spans (json_extract(attributes, '$.metrics.correctness'), id)`,
];

/** Record fields that are real columns (or tracelake bookkeeping); everything else goes to `attributes`. */
const COLUMN_FIELDS = new Set([
  'id',
  'trace_id',
  'parent_id',
  'session_id',
  'type',
  'name',
  'created_at',
  'status_code',
  'model',
  'seq',
  'project_id',
  'run_id',
]);

/** The JSON attributes of a record: every field that has a value and no column of its own. */
export function attributesOf(r: SpanRow): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(r)) if (v !== undefined && v !== null && !COLUMN_FIELDS.has(k)) out[k] = v;
  return out;
}

/** better-sqlite3 binds ?1, ?2... from an object keyed by number. */
function bindings(params: readonly Param[]): Record<number, Param> {
  const out: Record<number, Param> = {};
  params.forEach((p, i) => {
    out[i + 1] = p;
  });
  return out;
}

export class SqlitePeer implements Peer {
  readonly name = 'sqlite';
  #db: Database.Database | null = null;
  #file = '';
  #insertMany: ((rows: readonly SpanRow[]) => void) | null = null;

  async setup(dir: string): Promise<void> {
    this.#file = join(dir, 'spans.sqlite');
    const db = new Database(this.#file);
    this.#db = db;
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('cache_size = -262144');
    db.pragma('temp_store = MEMORY');
    for (const sql of SCHEMA) db.exec(sql);
    const insert = db.prepare(
      'INSERT INTO spans (id, trace_id, parent_id, session_id, type, name, created_at, status_code, model, attributes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    this.#insertMany = db.transaction((rows: readonly SpanRow[]) => {
      for (const r of rows) {
        insert.run(
          r.id,
          r.trace_id,
          r.parent_id ?? null,
          r.session_id ?? null,
          r.type,
          r.name,
          r.created_at,
          r.status_code ?? null,
          r.model ?? null,
          JSON.stringify(attributesOf(r)),
        );
      }
    });
  }

  async insert(batch: SpanBatch): Promise<void> {
    this.#insertMany!(batch.rows);
  }

  async finishLoad(): Promise<void> {
    const db = this.#db!;
    db.exec('ANALYZE');
    // Fold the WAL into the database file so disk size and reads see the settled state.
    db.pragma('wal_checkpoint(TRUNCATE)');
  }

  async ask(q: Question, variant: number): Promise<Answer> {
    const db = this.#db!;
    const params = bindings(q.variants[variant % q.variants.length]!);
    const stmt = db.prepare(q.sql.sqlite);
    if (q.mutates) return { count: stmt.run(params).changes };
    if (q.answer === 'count') return { count: Number((stmt.get(params) as { n: number }).n) };
    return { ids: (stmt.all(params) as { id: string }[]).map((r) => r.id) };
  }

  /** The query plan SQLite picks (for the README and for checking that indexes are used). */
  async plan(q: Question, variant = 0): Promise<string[]> {
    const rows = this.#db!.prepare(`EXPLAIN QUERY PLAN ${q.sql.sqlite}`).all(bindings(q.variants[variant % q.variants.length]!)) as {
      detail: string;
    }[];
    return rows.map((r) => r.detail);
  }

  async diskBytes(): Promise<number> {
    this.#db!.pragma('wal_checkpoint(TRUNCATE)');
    let total = 0;
    for (const f of [this.#file, `${this.#file}-wal`, `${this.#file}-shm`]) if (existsSync(f)) total += statSync(f).size;
    return total;
  }

  async close(): Promise<void> {
    this.#db?.close();
    this.#db = null;
    this.#insertMany = null;
  }
}
