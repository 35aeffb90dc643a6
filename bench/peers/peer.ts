// The one interface every store in the peer benchmark implements (SQLite, PostgreSQL, raw DuckDB over
// tracelake's Parquet, and tracelake itself once the lead plugs it in). The harness drives it:
// setup -> insert (per batch, timed) -> finishLoad (timed) -> diskBytes -> ask (timed) -> close.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Question, SpanBatch } from '../workload.js';
import type { LibraryLoad } from './library-load.js';

/** What a question returns: a count, or the ids of a first page in order. */
export interface Answer {
  count?: number;
  ids?: string[];
}

export interface Peer {
  /** Unique name in tables and results; 'tracelake' is the one every ratio is taken against. */
  readonly name: string;
  /** Creates the store in `dir` (an empty folder the harness owns and removes afterwards). Throws
   * PeerUnavailableError when the store cannot run on this machine. */
  setup(dir: string): Promise<void>;
  /** Takes a store already holding the set (a copy of a settled template, `--data-dir`) instead of
   * setup + insert; finishLoad still follows. Only peers that load through the tracelake library. */
  adopt?(load: LibraryLoad): Promise<void>;
  /** Stores one batch durably (as the peer's users would: a transaction, a COPY, a logged request). */
  insert(batch: SpanBatch): Promise<void>;
  /** Whatever must happen before queries (index statistics, sealing); timed as part of ingest. */
  finishLoad(): Promise<void>;
  /** Answers a question with the given variant's parameters. */
  ask(question: Question, variant: number): Promise<Answer>;
  /** Bytes the stored spans take on disk, indexes included. */
  diskBytes(): Promise<number>;
  /** The plan the store picks for a question (EXPLAIN), to see which indexes serve it. */
  plan?(question: Question, variant: number): Promise<string[]>;
  /** Other processes whose memory belongs to this peer (a database server), for the peak-memory figure. */
  serverPids?(): number[];
  /** Stops and releases everything; must be safe after a failed setup. */
  close(): Promise<void>;
}

/** Thrown by `setup` when a peer cannot run here; the harness records the reason and goes on. */
export class PeerUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PeerUnavailableError';
  }
}

/** Total size of the files under `dir` whose path passes `keep`. */
export function folderBytes(dir: string, keep: (path: string) => boolean = () => true): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) total += folderBytes(p, keep);
    else if (e.isFile() && keep(p)) total += statSync(p).size;
  }
  return total;
}
