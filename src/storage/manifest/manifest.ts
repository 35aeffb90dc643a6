// The manifest names the live Parquet segments, the highest sealed sequence number, the dead
// (deleted or superseded) sequence numbers and the has_children overrides of sealed rows. It is the
// one source of truth on disk: replaced atomically, and files it does not name are leftovers of an
// interrupted seal, removed on open.
import { type BigIntStats, closeSync, existsSync, fstatSync, openSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { StorageError } from '../../errors.js';
import { writeFileAtomic } from '../fs-util.js';
import type { RecordKind } from '../../record/record-columns.js';
import { PACK_FROM, packSeqs, unpackSeqs } from '../seq-pack.js';

/**
 * What a span segment's rows hold, per span type: whether some row has children, and which of the
 * `checked` columns some row sets (a column not checked is unknown). Written with the segment
 * (segments/type-facts.ts) so a planner needs no scan of it to learn which types can match.
 */
export interface TypeFacts {
  readonly checked: readonly string[];
  readonly types: Readonly<Record<string, { readonly children: boolean; readonly set: readonly string[] }>>;
}

export interface SegmentEntry {
  /** Path relative to the data folder. */
  readonly file: string;
  readonly project_id: string;
  readonly run_id: string;
  readonly kind: RecordKind;
  readonly rows: number;
  readonly bytes: number;
  readonly min_seq: number;
  readonly max_seq: number;
  readonly min_created_us: number;
  readonly max_created_us: number;
  /** Metric ids (see ManifestState.metric_ids) stored as their own DOUBLE column `m<id>` in this file. */
  readonly metrics: readonly number[];
  /** Per row group: [min created_at µs, max created_at µs, rows]; lets a query pick a time window. */
  readonly row_groups: readonly (readonly [number, number, number])[];
  /** Whether the file stores the derived tag_set column (record-columns.ts); segments of older versions do not. */
  readonly tag_set?: boolean;
  /** Span segments: per span type, which of the checked columns some row sets (type-facts.ts); older segments lack it. */
  readonly type_facts?: TypeFacts;
  /** Of `metrics`, the ids whose column holds a value in every row (segments/metric-facts.ts); older segments lack it. */
  readonly full_metrics?: readonly number[];
  /** Whether the segment's top lists (`seg-N.top`, indexes/top-lists.ts) are on disk; none is written without metrics. Older segments lack it. */
  readonly top_lists?: boolean;
  /** Rows each top list keeps when more than TOP_LIST_ROWS (indexes/top-lists.ts topListRows); absent: TOP_LIST_ROWS. */
  readonly top_list_rows?: number;
  /** Whether its top lists file keeps each row's number in the segment (`r`): a page's other columns are then read from those rows alone. */
  readonly top_list_places?: boolean;
  /** Whether its top lists file keeps each row's name and tags: filters on them are then tested on the listed rows. */
  readonly top_list_filters?: boolean;
}

export interface ManifestState {
  readonly format: 2;
  readonly generation: number;
  /** Every row with seq <= sealed_seq is in a segment (or was deleted). */
  readonly sealed_seq: number;
  /** Log files up to this number are sealed into segments (and may be deleted). */
  readonly sealed_wal: number;
  readonly next_segment: number;
  readonly segments: readonly SegmentEntry[];
  /** Sequence numbers whose rows are deleted or replaced by a newer version. */
  readonly dead: readonly number[];
  /**
   * Sequence numbers of sealed row versions whose has_children reads false (their last child was
   * deleted): overrides consulted at read time instead of rewriting the parent, folded into the file
   * (and dropped from here) when a merge rewrites the segment holding the row.
   */
  readonly childless: readonly number[];
  /**
   * Parent spans that children logged before them wait for, as [project id, run id, span id], oldest
   * first: the parent gets has_children when it arrives, even after a restart.
   */
  readonly awaited: readonly (readonly [string, string, string])[];
  /**
   * Metric name -> id. Sealed files carry each metric also as a plain DOUBLE column `m<id>` (scanning
   * one column is far faster than looking a key up in the metrics map); names never enter SQL.
   */
  readonly metric_ids: Readonly<Record<string, number>>;
}

export const EMPTY_MANIFEST: ManifestState = {
  format: 2,
  generation: 0,
  sealed_seq: 0,
  sealed_wal: 0,
  next_segment: 1,
  segments: [],
  dead: [],
  childless: [],
  awaited: [],
  metric_ids: {},
};

export function loadManifest(dir: string): ManifestState {
  const path = join(dir, 'manifest.json');
  if (!existsSync(path)) return EMPTY_MANIFEST;
  return parseManifest(path, () => readFileSync(path, 'utf8'));
}

/**
 * The manifest as a reader beside the writer sees it, and a stamp of the file it came from (null: no
 * manifest yet). The writer replaces the file whole (a rename), so a later `manifestStamp` that differs
 * means it was replaced meanwhile.
 */
export function loadManifestStamped(dir: string): { state: ManifestState; stamp: string | null } {
  const path = join(dir, 'manifest.json');
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { state: EMPTY_MANIFEST, stamp: null };
    throw new StorageError(`cannot read ${path}`, { cause: err });
  }
  try {
    const stamp = stampOf(fstatSync(fd, { bigint: true }));
    return { state: parseManifest(path, () => readFileSync(fd, 'utf8')), stamp };
  } finally {
    closeSync(fd);
  }
}

/** The stamp of the manifest file now (see loadManifestStamped). */
export function manifestStamp(dir: string): string | null {
  try {
    return stampOf(statSync(join(dir, 'manifest.json'), { bigint: true }));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

// An inode alone can be reused by the next file; with its change time and size a replaced file differs.
const stampOf = (st: BigIntStats): string => `${st.ino}:${st.ctimeNs}:${st.mtimeNs}:${st.size}`;

function parseManifest(path: string, read: () => string): ManifestState {
  try {
    const m = JSON.parse(read()) as Omit<ManifestState, 'format' | 'dead'> & { format: number; dead?: number[]; dead_packed?: string };
    // Format 1 (NDJSON log files, no sealed_wal) is read as format 2; its log files are converted on open.
    // Format 3 is format 2 with the dead seqs packed (see saveManifest).
    if (m.format !== 1 && m.format !== 2 && m.format !== 3) throw new Error(`unknown manifest format ${String(m.format)}`);
    const { dead_packed, ...rest } = m;
    return {
      ...rest,
      format: 2,
      dead: m.format === 3 && dead_packed !== undefined ? unpackSeqs(dead_packed) : (m.dead ?? []),
      sealed_wal: m.sealed_wal ?? 0,
      metric_ids: m.metric_ids ?? {},
      childless: m.childless ?? [],
      awaited: m.awaited ?? [],
      segments: m.segments.map((g) => ({ ...g, metrics: g.metrics ?? [], row_groups: g.row_groups ?? [] })),
    };
  } catch (err) {
    throw new StorageError(`cannot read ${path}`, { cause: err });
  }
}

/** Writes the manifest atomically; returns its size in bytes. */
export function saveManifest(dir: string, state: ManifestState): number {
  // Many dead seqs (a large delete's) are packed, under format 3 so that older versions refuse the file
  // instead of reading it without its dead seqs; few stay a JSON array under format 2.
  const { dead, ...rest } = state;
  const text = JSON.stringify(dead.length >= PACK_FROM ? { ...rest, format: 3, dead_packed: packSeqs(dead) } : state);
  writeFileAtomic(join(dir, 'manifest.json'), text);
  return Buffer.byteLength(text);
}

/** Rows of the segments of `of`'s run and kind, but those in `except` (files). */
export function partitionRows(
  segments: readonly SegmentEntry[],
  of: Pick<SegmentEntry, 'project_id' | 'run_id' | 'kind'>,
  except: ReadonlySet<string> = new Set(),
): number {
  if (except.size === 0) return rowsByPartition(segments).get(partitionKey(of.project_id, of.run_id, of.kind)) ?? 0;
  let n = 0;
  for (const g of segments)
    if (g.project_id === of.project_id && g.run_id === of.run_id && g.kind === of.kind && !except.has(g.file)) n += g.rows;
  return n;
}

/** Rows per partition of a manifest's segment list, summed once per list (lists are never changed in place). */
const partitionSums = new WeakMap<readonly SegmentEntry[], Map<string, number>>();
function rowsByPartition(segments: readonly SegmentEntry[]): Map<string, number> {
  let sums = partitionSums.get(segments);
  if (!sums) {
    sums = new Map();
    for (const g of segments) {
      const k = partitionKey(g.project_id, g.run_id, g.kind);
      sums.set(k, (sums.get(k) ?? 0) + g.rows);
    }
    partitionSums.set(segments, sums);
  }
  return sums;
}

export function partitionKey(projectId: string, runId: string, kind?: RecordKind): string {
  return `project_id=${projectId}/run_id=${runId}/${kind ? `kind=${kind}` : ''}`;
}
