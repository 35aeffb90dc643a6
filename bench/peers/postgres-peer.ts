// PostgreSQL 15 with JSONB, the server store of Phoenix and of older Langfuse: a `spans` table with
// uuid ids, timestamptz and real columns for type, name, status and model, and one JSONB `attributes`
// column for the rest (input, output, tags, metrics, metadata...). A careful user's indexes: B-trees
// on time, trace and type, a GIN index on the tags, and an expression B-tree on the metric they sort
// by, all present before loading (spans arrive continuously). Memory settings sized for this 24 GiB
// machine. Spans are loaded with COPY, one per batch, through one long-lived psql process (the `pg`
// package has no COPY FROM without an extra package); queries go through `pg`.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import type { Question, SpanBatch, SpanRow } from '../workload.js';
import type { Answer, Peer } from './peer.js';
import { PeerUnavailableError } from './peer.js';
import { startPgCluster, type PgCluster } from './pg-cluster.js';
import { attributesOf } from './sqlite-peer.js';

const SCHEMA = [
  `CREATE TABLE spans (
     id uuid PRIMARY KEY,
     trace_id uuid NOT NULL,
     parent_id uuid,
     session_id uuid,
     type text NOT NULL,
     name text NOT NULL,
     created_at timestamptz NOT NULL,
     status_code integer,
     model text,
     attributes jsonb NOT NULL
   )`,
  'CREATE INDEX spans_created_at ON spans (created_at)',
  'CREATE INDEX spans_trace_id ON spans (trace_id)',
  'CREATE INDEX spans_type ON spans (type)',
  `CREATE INDEX spans_tags ON spans USING gin ((attributes->'tags'))`,
  `CREATE INDEX spans_correctness ON spans (((attributes->'metrics'->>'correctness')::float8) DESC NULLS LAST, id DESC)`,
];

const COLUMNS = 'id, trace_id, parent_id, session_id, type, name, created_at, status_code, model, attributes';

/** Settings a careful operator gives a 2-core, 24 GiB machine (the rest stays default). */
export const PG_SETTINGS: Record<string, string> = {
  shared_buffers: "'2GB'",
  effective_cache_size: "'12GB'",
  work_mem: "'64MB'",
  maintenance_work_mem: "'1GB'",
  max_wal_size: "'8GB'",
  random_page_cost: '1.1',
};

/** One field of COPY's text format: backslash, newline, carriage return and tab escaped; \N is NULL. */
function copyField(v: string | number | null | undefined): string {
  if (v === null || v === undefined) return '\\N';
  const s = String(v);
  return /[\\\n\r\t]/.test(s)
    ? s.replace(/[\\\n\r\t]/g, (c) => (c === '\\' ? '\\\\' : c === '\n' ? '\\n' : c === '\r' ? '\\r' : '\\t'))
    : s;
}

/** Epoch microseconds -> an ISO timestamp with all six fractional digits. */
function isoMicros(us: number): string {
  const ms = Math.floor(us / 1000);
  return `${new Date(ms).toISOString().slice(0, 23)}${String(us - ms * 1000).padStart(3, '0')}Z`;
}

function copyLine(r: SpanRow): string {
  return [
    r.id,
    r.trace_id,
    r.parent_id,
    r.session_id,
    r.type,
    r.name,
    isoMicros(r.created_at),
    r.status_code,
    r.model,
    JSON.stringify(attributesOf(r)),
  ]
    .map(copyField)
    .join('\t');
}

/** A psql process reading a script from stdin; `send` resolves once psql has executed up to a marker. */
class PsqlPipe {
  readonly #child: ChildProcessWithoutNullStreams;
  #out = '';
  #err = '';
  #exited: string | null = null;
  #waiters: { marker: string; resolve: () => void; reject: (e: Error) => void }[] = [];
  #n = 0;

  constructor(psql: string, cluster: PgCluster) {
    this.#child = spawn(
      psql,
      ['-h', cluster.socketDir, '-p', String(cluster.port), '-U', cluster.user, '-d', 'postgres', '-X', '-q', '-v', 'ON_ERROR_STOP=1'],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    this.#child.stdout.setEncoding('utf8');
    this.#child.stderr.setEncoding('utf8');
    this.#child.stdout.on('data', (d: string) => {
      this.#out += d;
      this.#settle();
    });
    this.#child.stderr.on('data', (d: string) => {
      this.#err = (this.#err + d).slice(-4000);
    });
    this.#child.on('error', (err) => {
      // e.g. no psql binary: fail the waiting batch instead of crashing the process
      this.#exited = `psql failed: ${err.message}`;
      for (const w of this.#waiters.splice(0)) w.reject(new Error(this.#exited));
    });
    this.#child.on('close', (code) => {
      this.#exited ??= `psql exited with ${code}: ${this.#err.trim()}`;
      for (const w of this.#waiters.splice(0)) w.reject(new Error(this.#exited));
    });
    this.#child.stdin.on('error', () => {
      // surfaced through 'close'
    });
  }

  #settle(): void {
    while (this.#waiters.length > 0 && this.#out.includes(this.#waiters[0]!.marker)) {
      const w = this.#waiters.shift()!;
      this.#out = this.#out.slice(this.#out.indexOf(w.marker) + w.marker.length);
      w.resolve();
    }
  }

  async send(script: string): Promise<void> {
    if (this.#exited) throw new Error(this.#exited);
    const marker = `__tracelake_done_${++this.#n}__`;
    const done = new Promise<void>((resolve, reject) => this.#waiters.push({ marker, resolve, reject }));
    const ok = this.#child.stdin.write(`${script}\\echo ${marker}\n`);
    if (!ok) await new Promise<void>((r) => this.#child.stdin.once('drain', () => r()));
    await done;
  }

  async end(): Promise<void> {
    if (this.#exited || this.#child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      this.#child.once('close', () => resolve());
      this.#child.stdin.end();
    });
  }
}

export interface PostgresPeerOptions {
  /** Install Debian's postgresql package when missing (root only). */
  install?: boolean;
}

export class PostgresPeer implements Peer {
  readonly name = 'postgres';
  readonly #options: PostgresPeerOptions;
  #cluster: PgCluster | null = null;
  #client: pg.Client | null = null;
  #psql: PsqlPipe | null = null;

  constructor(options: PostgresPeerOptions = {}) {
    this.#options = options;
  }

  get version(): string | null {
    return this.#cluster?.version ?? null;
  }

  async setup(_dir: string): Promise<void> {
    // The cluster lives in its own temp folder: it must be owned by the server user.
    this.#cluster = await startPgCluster({ install: this.#options.install, settings: PG_SETTINGS });
    const c = this.#cluster;
    this.#client = new pg.Client({ host: c.socketDir, port: c.port, user: c.user, database: 'postgres' });
    try {
      await this.#client.connect();
    } catch (err) {
      throw new PeerUnavailableError(`cannot connect to the PostgreSQL server: ${(err as Error).message}`, { cause: err });
    }
    for (const sql of SCHEMA) await this.#client.query(sql);
    const psql = existsSync(join(c.binDir, 'psql')) ? join(c.binDir, 'psql') : 'psql';
    this.#psql = new PsqlPipe(psql, c);
  }

  async insert(batch: SpanBatch): Promise<void> {
    let data = '';
    for (const r of batch.rows) data += `${copyLine(r)}\n`;
    await this.#psql!.send(`COPY spans (${COLUMNS}) FROM STDIN;\n${data}\\.\n`);
  }

  async finishLoad(): Promise<void> {
    await this.#psql!.end();
    this.#psql = null;
    // Statistics for the planner and a visibility map for index-only scans, as autovacuum would do.
    await this.#client!.query('VACUUM ANALYZE spans');
  }

  async ask(q: Question, variant: number): Promise<Answer> {
    const values = [...q.variants[variant % q.variants.length]!];
    const r = await this.#client!.query({ text: q.sql.postgres, values });
    if (q.mutates) return { count: r.rowCount ?? 0 };
    if (q.answer === 'count') return { count: Number((r.rows[0] as { n: string }).n) };
    return { ids: (r.rows as { id: string }[]).map((x) => x.id) };
  }

  /** EXPLAIN output for a question (README, and checking which indexes serve it). */
  async plan(q: Question, variant = 0): Promise<string[]> {
    const r = await this.#client!.query({ text: `EXPLAIN ${q.sql.postgres}`, values: [...q.variants[variant % q.variants.length]!] });
    return (r.rows as { 'QUERY PLAN': string }[]).map((x) => x['QUERY PLAN']);
  }

  async diskBytes(): Promise<number> {
    // Heap, TOAST (where large JSONB goes, compressed) and every index.
    const r = await this.#client!.query(`SELECT pg_total_relation_size('spans') AS n`);
    return Number((r.rows[0] as { n: string }).n);
  }

  serverPids(): number[] {
    return this.#cluster?.pids() ?? [];
  }

  async close(): Promise<void> {
    try {
      await this.#psql?.end();
      await this.#client?.end().catch(() => undefined);
    } finally {
      this.#psql = null;
      this.#client = null;
      await this.#cluster?.stop();
      this.#cluster = null;
    }
  }
}
