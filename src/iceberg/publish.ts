// store.iceberg: publishes the store's live records as three Iceberg v2 tables (spans, traces,
// sessions) under a target folder or S3 prefix. A publish first seals what is in memory and folds
// has_children overrides into their segments, so the files say what reads say; then it pins the
// sealed state (its segment files stay on disk until the publish ends) and publishes each table.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Connection } from '../db/database.js';
import { invalid } from '../errors.js';
import type { ManifestState } from '../storage/manifest/manifest.js';
import { Mutex } from '../storage/mutex.js';
import { dropDead, loadDead } from './deletes.js';
import { publishTable, type ExpiryOptions, type TableResult } from './publish-table.js';
import type { S3Options } from './s3-client.js';
import { KINDS } from './schema.js';
import type { Target } from './target.js';
import { LocalTarget } from './target-local.js';
import { S3Target } from './target-s3.js';

/** What the store lends the publisher. */
export interface IcebergHost {
  /** The data folder. */
  readonly dir: string;
  /** Seals rows in memory and rewrites segments holding has_children overrides. */
  prepare(): Promise<void>;
  /** The sealed state; its segment files stay on disk until release. */
  pin(): { readonly manifest: ManifestState; release(): void };
  /** Retention cutoffs (epoch µs) by run id, for one project. */
  cutoffs(projectId: string): ReadonlyMap<string, number>;
  withConnection<T>(fn: (conn: Connection) => Promise<T>): Promise<T>;
}

export interface PublishOptions {
  /** A folder, or s3://bucket/prefix (default: <data>/iceberg). Each table is a folder under it. */
  readonly to?: string;
  readonly s3?: S3Options;
  /** Snapshots kept per table at most (default 100). */
  readonly keepSnapshots?: number;
  /** Snapshots older than this many seconds expire, except the current one (default 432,000: 5 days). */
  readonly maxSnapshotAgeSeconds?: number;
}

export interface PublishResult {
  readonly to: string;
  readonly tables: Readonly<Record<'spans' | 'traces' | 'sessions', TableResult>>;
  readonly bytesSent: number;
  readonly ms: number;
}

export const DEFAULT_KEEP_SNAPSHOTS = 100;
export const DEFAULT_MAX_SNAPSHOT_AGE_SECONDS = 5 * 86_400;

export function openTarget(dir: string, to: string | undefined, s3: S3Options | undefined): Target {
  const where = to ?? join(dir, 'iceberg');
  if (where.startsWith('s3://')) {
    if (!/^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/.*)?$/.test(where))
      throw invalid(['to'], 'Input should be s3://bucket/prefix with a valid bucket name', where);
    return new S3Target(where, s3);
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(where)) throw invalid(['to'], 'Input should be a folder or an s3:// URI', where);
  return new LocalTarget(where);
}

function checkCount(name: string, v: number | undefined, min: number): void {
  if (v !== undefined && (!Number.isInteger(v) || v < min)) throw invalid([name], `Input should be a whole number of at least ${min}`, v);
}

export class Iceberg {
  readonly #host: IcebergHost;
  readonly #lock = new Mutex();

  constructor(host: IcebergHost) {
    this.#host = host;
  }

  /** Publishes a snapshot of every table; returns each table's snapshot and what was sent. */
  publish(options: PublishOptions = {}): Promise<PublishResult> {
    checkCount('keepSnapshots', options.keepSnapshots, 1);
    checkCount('maxSnapshotAgeSeconds', options.maxSnapshotAgeSeconds, 0);
    const target = openTarget(this.#host.dir, options.to, options.s3);
    return this.publishTo(target, options);
  }

  /** Publishes to a target made by the caller (tests wrap one to interrupt a publish). */
  publishTo(target: Target, options: Omit<PublishOptions, 'to' | 's3'> = {}): Promise<PublishResult> {
    return this.#lock.run(async () => {
      const started = performance.now();
      const host = this.#host;
      await host.prepare();
      const { manifest, release } = host.pin();
      try {
        const staging = join(host.dir, 'tmp', 'iceberg');
        mkdirSync(staging, { recursive: true });
        const dead = [...manifest.dead].sort((a, b) => a - b);
        const cutoffs = new Map<string, number>();
        for (const p of new Set(manifest.segments.map((g) => g.project_id)))
          for (const [run, cut] of host.cutoffs(p)) cutoffs.set(run, cut);
        const expiry: ExpiryOptions = {
          keepSnapshots: options.keepSnapshots ?? DEFAULT_KEEP_SNAPSHOTS,
          maxSnapshotAgeMs: (options.maxSnapshotAgeSeconds ?? DEFAULT_MAX_SNAPSHOT_AGE_SECONDS) * 1000,
          keepMetadataFiles: options.keepSnapshots ?? DEFAULT_KEEP_SNAPSHOTS,
        };
        const now = Date.now();
        const tables = await host.withConnection(async (conn) => {
          await loadDead(conn, dead);
          try {
            const out: Record<string, TableResult> = {};
            for (const kind of KINDS) {
              const r = await publishTable(target, {
                kind,
                dir: host.dir,
                conn,
                segments: manifest.segments.filter((g) => g.kind === kind),
                dead,
                metricIds: manifest.metric_ids,
                cutoffs,
                staging,
                expiry,
                now,
              });
              out[r.table] = r;
            }
            return out as PublishResult['tables'];
          } finally {
            await dropDead(conn);
          }
        });
        const bytesSent = Object.values(tables).reduce((n, t) => n + t.bytesSent, 0);
        return { to: target.root, tables, bytesSent, ms: Math.round(performance.now() - started) };
      } finally {
        release();
      }
    });
  }
}
