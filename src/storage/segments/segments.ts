// Immutable Parquet segments on disk: writing one (COPY, fsync, row-group time stats, id hashes, text and child indexes, top lists),
// reading their id hashes back, and removing them. Paths below the data folder are ours (catalog ids
// and a counter); the folder itself is the operator's and may hold quotes, so COPY's target (which
// takes no parameter) is written as a quoted literal.
import { readdirSync, readFileSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import type { Connection } from '../../db/database.js';
import { stringLiteral } from '../../db/sql-string.js';
import { EMPTY, int, raw, sql, type Sql } from '../../query/sql.js';
import { ensureDirDurable, fsyncFile, fsyncPathAsync } from '../fs-util.js';
import type { ManifestState, SegmentEntry } from '../manifest/manifest.js';
import { TAG_SET_COLUMN, TAG_SET_SQL, type RecordKind } from '../../record/record-columns.js';
import { fieldIdsOption } from '../../record/field-ids.js';
import { childIndexPath, childRowsPath, removeChildIndex, writeChildIndex } from '../indexes/child-index.js';
import { IdFilter, idFilterPath, readIdFilter, writeIdFilter } from '../indexes/id-filter.js';
import type { IndexedSegment } from '../indexes/id-index.js';
import { measureFullMetrics } from './metric-facts.js';
import { measureTypeFacts } from './type-facts.js';
import { removeTextIndex, textIndexPath, tokenIndexPath, writeTextIndex } from '../indexes/text-index.js';
import { mergedTextIndex, type MergedFrom } from '../indexes/text-merge.js';
import { removeValueIndex, valueIndexPath, writeValueIndex } from '../indexes/value-index.js';
import { listedEntry, removeTopLists, topListRows, topListsPath, writeTopLists } from '../indexes/top-lists.js';

export interface SegmentFile {
  readonly rel: string;
  readonly abs: string;
}

export function segmentPath(dir: string, partition: string, number: number): SegmentFile {
  const rel = join('records', partition, `seg-${String(number).padStart(9, '0')}.parquet`);
  return { rel, abs: join(dir, rel) };
}

export function idsPath(path: string): string {
  return path.replace(/\.parquet$/, '.ids');
}

export interface WriteSegment {
  readonly file: SegmentFile;
  readonly projectId: string;
  readonly runId: string;
  readonly kind: RecordKind;
  /** The SELECT whose rows (already in order) become the file. */
  readonly select: Sql;
  /**
   * Writes the file at the path instead of a COPY of `select` (the same columns, in order): a bulk load
   * that copies pages of its source. May throw SpliceMismatch before the segment exists (nothing is left).
   */
  readonly write?: (abs: string) => Promise<void>;
  readonly rowGroupSize: number;
  readonly compressionLevel?: number;
  /** Whether to write the segment's text index (RecordStoreOptions.textIndex). */
  readonly textIndex: boolean;
  /** Top lists are written for a segment of at least this many rows (RecordStoreOptions.topListMinRows; Infinity: none). */
  readonly topListMinRows: number;
  /** A value index is written for a segment of at least this many rows (RecordStoreOptions.valueIndexMinRows). */
  readonly valueIndexMinRows: number;
  /** Rows of its run and kind in the store's other segments (a merge's inputs left out): its lists' depth follows its share. */
  readonly otherRows?: number;
  /** A merge's inputs: its text index is then made from theirs where it can be (text-merge.ts). */
  readonly mergedFrom?: MergedFrom;
  /** Span segments: the columns whose presence per span type the manifest entry records (type-facts.ts; none when empty). */
  readonly factColumns?: readonly string[];
  readonly metrics: readonly number[];
  /**
   * Id hashes of the rows (a superset is fine), sorted on write (a copy). Or a function that gives them
   * once the file is written (the array is then sorted in place): a merge's union of its inputs' hashes
   * (8 bytes a row, 16 MB for a 2M-row merge) is then not held through its COPY.
   */
  readonly hashes: Float64Array | (() => Promise<Float64Array>);
}

export interface WrittenSegment {
  readonly entry: SegmentEntry;
  /** Its id hashes, sorted. */
  readonly hashes: Float64Array;
  /** Its id filter (written beside it). */
  readonly filter: IdFilter;
  /** Bytes of its side files (id hashes, child index, text index, top lists), for the store's write tally. */
  readonly sideBytes: number;
}

/** Rows of `select` with tag_set derived from their tags, as every segment stores it (recomputed when the rows come from segments). */
export function withTagSet(select: Sql): Sql {
  return sql`SELECT COLUMNS(lambda c: c <> ${stringLiteral(TAG_SET_COLUMN)}), ${raw(TAG_SET_SQL)} AS ${raw(TAG_SET_COLUMN)} FROM (${select})`;
}

/**
 * Writes a segment and its id hashes, fsynced with their folder (created durably if new). Returns its
 * manifest entry, or null when the SELECT gave no rows (nothing is left on disk then).
 */
export async function writeSegment(conn: Connection, dir: string, w: WriteSegment): Promise<WrittenSegment | null> {
  const { abs, rel } = w.file;
  ensureDirDurable(dirname(abs), dir);
  try {
    const level = w.compressionLevel === undefined ? EMPTY : sql`, COMPRESSION_LEVEL ${int(w.compressionLevel)}`;
    if (w.write) await w.write(abs);
    else {
      // Parquet field ids (record/field-ids.ts), so readers that match columns by id (Iceberg) need no name mapping.
      const select = withTagSet(w.select);
      const ids = raw(fieldIdsOption(await conn.columnNames(select)));
      await conn.run(
        sql`COPY (${select}) TO ${stringLiteral(abs)} (FORMAT parquet, COMPRESSION zstd${level}, ROW_GROUP_SIZE ${int(w.rowGroupSize)}${ids})`,
      );
    }
    await fsyncPathAsync(abs);
    const meta = await conn.all(
      sql`SELECT epoch_us(stats_min::TIMESTAMP) AS lo, epoch_us(stats_max::TIMESTAMP) AS hi, row_group_num_rows AS n
       FROM parquet_metadata(${abs}) WHERE path_in_schema = 'created_at' ORDER BY row_group_id`,
    );
    const rows = meta.reduce((n, m) => n + Number(m['n']), 0);
    if (rows === 0) {
      removeSegmentFiles(dir, rel);
      return null;
    }
    const range = (
      await conn.all(
        sql`SELECT min(seq) AS a, max(seq) AS b, epoch_us(min(created_at)) AS c, epoch_us(max(created_at)) AS d
            FROM read_parquet(${abs}, hive_partitioning = false)`,
      )
    )[0]!;
    const hashes = typeof w.hashes === 'function' ? (await w.hashes()).sort() : w.hashes.slice().sort();
    writeFileSync(idsPath(abs), hashes);
    await fsyncPathAsync(idsPath(abs));
    const filter = IdFilter.of(hashes);
    writeIdFilter(abs, filter);
    await fsyncPathAsync(idFilterPath(abs));
    // The text index is on disk (fsynced with the folder below) before any manifest lists the segment.
    if (w.textIndex) await writeTextIndex(conn, abs, w.mergedFrom ? mergedTextIndex(conn, abs, w.mergedFrom) : undefined);
    await writeChildIndex(conn, abs);
    // The value index only speeds counts: a build that fails (memory, disk) leaves the segment without
    // one (its counts read it; the next writable open's repair builds it), not the seal or merge undone.
    if (rows >= w.valueIndexMinRows)
      await writeValueIndex(conn, abs, rows, w.metrics).catch((err: Error) =>
        process.emitWarning(`tracelake: the value index of ${rel} was not written: ${err.message}`),
      );
    const depth = topListRows(rows, rows + (w.otherRows ?? 0));
    const lists = rows >= w.topListMinRows && (await writeTopLists(conn, abs, w.metrics, depth));
    const facts = w.kind === 'span' && w.factColumns?.length ? await measureTypeFacts(conn, abs, w.factColumns) : undefined;
    const full = w.metrics.length > 0 ? await measureFullMetrics(conn, abs) : [];
    await fsyncPathAsync(dirname(abs), 'r');
    const entry: SegmentEntry = {
      file: rel,
      project_id: w.projectId,
      run_id: w.runId,
      kind: w.kind,
      rows,
      bytes: statSync(abs).size,
      min_seq: Number(range['a']),
      max_seq: Number(range['b']),
      min_created_us: Number(range['c']),
      max_created_us: Number(range['d']),
      metrics: [...w.metrics].sort((a, b) => a - b),
      row_groups: meta.map((m) => [Number(m['lo']), Number(m['hi']), Number(m['n'])] as const),
      tag_set: true,
      ...(facts ? { type_facts: facts } : {}),
      ...(full ? { full_metrics: full } : {}),
      ...(lists ? listedEntry(depth) : {}),
    };
    return { entry, hashes, filter, sideBytes: sideFileBytes(abs) };
  } catch (err) {
    removeSegmentFiles(dir, rel);
    throw err;
  }
}

/** A written segment as the id index holds it. */
export function indexedSegment(dir: string, w: WrittenSegment): IndexedSegment {
  return { key: w.entry.file, partition: w.entry.file, filter: w.filter, ids: idsPath(join(dir, w.entry.file)), hashes: w.hashes };
}

/** Bytes of the files written beside a segment (those present). */
function sideFileBytes(abs: string): number {
  let n = 0;
  for (const p of [
    idsPath(abs),
    idFilterPath(abs),
    childIndexPath(abs),
    childRowsPath(abs),
    textIndexPath(abs),
    tokenIndexPath(abs),
    topListsPath(abs),
    valueIndexPath(abs),
  ]) {
    try {
      n += statSync(p).size;
    } catch {
      // not written for this segment
    }
  }
  return n;
}

/**
 * The id hashes kept beside a segment; rebuilt from the Parquet file when missing or damaged (and
 * written back unless `persist` is false).
 */
export async function readHashes(
  conn: Connection,
  dir: string,
  seg: SegmentEntry,
  hash: (id: string) => number,
  persist = true,
): Promise<Float64Array> {
  const path = idsPath(join(dir, seg.file));
  try {
    const buf = readFileSync(path);
    if (buf.byteLength % 8 === 0 && buf.byteLength / 8 >= seg.rows) {
      // A view when the buffer is 8-byte aligned (a large file's buffer is its own), else a copy.
      if (buf.byteOffset % 8 === 0) return new Float64Array(buf.buffer, buf.byteOffset, buf.byteLength / 8);
      const out = new Float64Array(buf.byteLength / 8);
      new Uint8Array(out.buffer).set(buf);
      return out;
    }
  } catch {
    // rebuilt below
  }
  const ids = await conn.all(sql`SELECT id FROM read_parquet(${join(dir, seg.file)}, hive_partitioning = false)`);
  const hashes = Float64Array.from(ids.map((r) => hash(String(r['id'])))).sort();
  if (persist) {
    writeFileSync(path, hashes);
    fsyncFile(path);
  }
  return hashes;
}

/**
 * A segment's id filter, from its `.idf` file when that matches its `.ids` file; else (a store of an
 * earlier version, or a damaged file) built from the hashes, and written when `persist` (a writer's
 * open: a read-only store writes nothing). Only the `.ids` file's size is checked, not its hashes.
 */
export async function segmentFilter(
  conn: Connection,
  dir: string,
  seg: SegmentEntry,
  hash: (id: string) => number,
  persist: boolean,
): Promise<IdFilter> {
  const abs = join(dir, seg.file);
  const filter = readIdFilter(abs);
  let idsBytes = -1;
  try {
    idsBytes = statSync(idsPath(abs)).size;
  } catch {
    // rebuilt below
  }
  if (filter && idsBytes === filter.count * 8 && filter.count >= seg.rows) return filter;
  const built = IdFilter.of(await readHashes(conn, dir, seg, hash, persist));
  if (persist) {
    writeIdFilter(abs, built);
    fsyncFile(idFilterPath(abs));
  }
  return built;
}

/**
 * Sorted union of sorted hash arrays (a merged segment's hashes: a superset of its ids), merged in one
 * pass into one array (a view of its distinct prefix): no concatenated copy to sort, no trimmed copy.
 */
export function unionHashes(parts: readonly Float64Array[]): Float64Array {
  const total = parts.reduce((n, p) => n + p.length, 0);
  const out = new Float64Array(total);
  const at = parts.map(() => 0);
  let w = 0;
  for (;;) {
    let best = -1;
    let v = Infinity;
    for (let k = 0; k < parts.length; k++) {
      if (at[k]! < parts[k]!.length && parts[k]![at[k]!]! < v) {
        v = parts[k]![at[k]!]!;
        best = k;
      }
    }
    if (best < 0) break;
    at[best]!++;
    if (w === 0 || out[w - 1] !== v) out[w++] = v;
  }
  return out.subarray(0, w);
}

export function removeSegmentFiles(dir: string, rel: string): void {
  rmSync(join(dir, rel), { force: true });
  rmSync(idsPath(join(dir, rel)), { force: true });
  rmSync(idFilterPath(join(dir, rel)), { force: true });
  removeTextIndex(join(dir, rel));
  removeChildIndex(join(dir, rel));
  removeTopLists(join(dir, rel));
  removeValueIndex(join(dir, rel));
}

/**
 * Segment files the manifest does not name are leftovers of an interrupted seal or merge; empty
 * partition folders are leftovers of drops. Both go on open.
 */
export function removeUnlisted(dir: string, manifest: ManifestState): void {
  const live = new Set(
    manifest.segments.flatMap((s) => [
      s.file,
      idsPath(s.file),
      idFilterPath(s.file),
      textIndexPath(s.file),
      tokenIndexPath(s.file),
      childIndexPath(s.file),
      childRowsPath(s.file),
      topListsPath(s.file),
      valueIndexPath(s.file),
    ]),
  );
  const walk = (d: string): boolean => {
    let empty = true;
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        if (walk(p)) rmdirSync(p);
        else empty = false;
      } else if (!live.has(relative(dir, p))) rmSync(p, { force: true });
      else empty = false;
    }
    return empty;
  };
  walk(join(dir, 'records'));
}
