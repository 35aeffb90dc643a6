// What a publish remembers about a table between runs, beside Iceberg's own metadata: for each file
// the current snapshot names, the sequence number and snapshot that added it (Iceberg entries keep
// them), the files no longer named with the last sequence number that named them (expiry removes them
// once no kept snapshot is that old), and hints that let the next publish rescan only segments whose
// dead rows may have changed. Written as `metadata/v<N>.tracelake.json` before `v<N>.metadata.json`,
// so a committed version always has its state; a version written without one is read as a fresh start.

export interface DeletesState {
  readonly rel: string;
  readonly bytes: number;
  /** Dead positions in it, and a digest of them (the file name holds the digest). */
  readonly count: number;
  readonly digest: string;
  readonly sequenceNumber: number;
  readonly snapshotId: number;
}

export interface DataFileState {
  readonly rel: string;
  /** The store's segment (relative to the data folder). */
  readonly segment: string;
  readonly project_id: string;
  readonly run_id: string;
  readonly rows: number;
  readonly bytes: number;
  readonly sequenceNumber: number;
  readonly snapshotId: number;
  readonly deletes: DeletesState | null;
}

export interface TableState {
  readonly format: 1;
  /** The store's dead seqs when it was published (sorted): new ones tell which segments to rescan. */
  readonly dead: readonly number[];
  /** Retention cutoffs (epoch µs) by run id when it was published. */
  readonly cutoffs: Readonly<Record<string, number>>;
  /** Live data files by their path under the target. */
  readonly files: Readonly<Record<string, DataFileState>>;
  /** Files the current snapshot no longer names, with the last sequence number that named them. */
  readonly retired: Readonly<Record<string, number>>;
  /** Metric id -> column name given in the schema (kept once given). */
  readonly metricColumns: Readonly<Record<string, string>>;
}

export const EMPTY_TABLE_STATE: TableState = { format: 1, dead: [], cutoffs: {}, files: {}, retired: {}, metricColumns: {} };

export function parseTableState(bytes: Buffer | null): TableState | null {
  if (!bytes) return null;
  try {
    const s = JSON.parse(bytes.toString('utf8')) as TableState;
    return s.format === 1 ? s : null;
  } catch {
    return null;
  }
}

export const stateRel = (table: string, version: number): string => `${table}/metadata/v${version}.tracelake.json`;
export const metadataRel = (table: string, version: number): string => `${table}/metadata/v${version}.metadata.json`;

/** The highest committed metadata version among listed files (0: none). */
export function latestVersion(table: string, listed: Iterable<string>): number {
  let best = 0;
  const re = new RegExp(`^${table}/metadata/v(\\d+)\\.metadata\\.json$`);
  for (const rel of listed) {
    const m = re.exec(rel);
    if (m && Number(m[1]) > best) best = Number(m[1]);
  }
  return best;
}
