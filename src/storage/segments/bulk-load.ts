// Bulk load: rows that are already flat (an export read by DuckDB) go straight into segments, in the
// layout the sealer writes (record columns, shredded metric columns, sorted by created_at then id, ZSTD,
// the store's row-group size), one segment per kind, without the log or the memory tables. A batch is
// one commit: its files are written and fsynced first, then one manifest write lists them and marks
// dead the versions they replace, so a crash keeps the whole batch or none of it (unlisted files are
// removed on open). The batch's sequence numbers are reserved when it starts: a record logged later
// wins over it, one logged earlier (sealed or in memory) is replaced by it, exactly as appends do.
import { join } from 'node:path';
import type { Database } from '../../db/database.js';
import { EMPTY, ident, int, joinSql, param, raw, sql, type Sql } from '../../query/sql.js';
import { StorageError } from '../../errors.js';
import { hasHash, idHash, idHashAt } from '../indexes/id-index.js';
import { partitionKey, type ManifestState } from '../manifest/manifest.js';
import { KIND_SQL, RECORD_COLUMNS, type RecordKind } from '../../record/record-columns.js';
import { type BatchPages, writePageSegment } from './bulk-pages.js';
import { SpliceMismatch } from '../parquet/parquet-splice.js';
import { indexedSegment, removeSegmentFiles, segmentPath, writeSegment, type WrittenSegment } from './segments.js';
import type { StoreState } from '../store-state.js';

export interface BulkBatch {
  /** The DuckDB instance that reads the source and writes the files (the importer's own). */
  readonly db: Database;
  /**
   * A SELECT giving the batch's rows: every record column but `seq`, `project_id` and `run_id`, typed as
   * in RECORD_COLUMNS, plus `rn`, the row's position in the batch from 0 (of two rows with one id the
   * later wins). Built from the column registry; user values only as its parameters.
   */
  readonly select: Sql;
  /** Rows `select` gives (that many sequence numbers are reserved). */
  readonly rows: number;
  /**
   * Rows DuckDB sorts at a time (default: all of a kind's at once). A sort larger than the memory
   * limit spills to disk and takes several times as long as the same rows sorted in created_at
   * ranges of ~150k, one after another, into the same file.
   */
  readonly sortRows?: number;
  /** The caller has checked that no id repeats among the batch's rows (the check is skipped). */
  readonly unique?: boolean;
  /** The batch's rows are rows of this Parquet file, some of whose row groups may be copied as they are. */
  readonly pages?: BatchPages;
}

/**
 * ZSTD level of imported segments: level 3 takes up to twice as long to write, for files only slightly
 * smaller; merges rewrite them at the store's compaction level.
 */
export const IMPORT_COMPRESSION_LEVEL = 1;

/** How far out of created_at order (in row groups' worth of time) rows may come and still be written as they come. */
export const NEAR_ORDER_GROUPS = 4;

const KINDS: readonly RecordKind[] = ['span', 'trace', 'session'];

/** Writes one batch into the run as segments and commits it; returns the records it added. */
export async function bulkLoad(s: StoreState, projectId: string, runId: string, batch: BulkBatch): Promise<number> {
  if (batch.rows === 0) return 0;
  return s.maint.run(async () => {
    if (s.closed) throw new StorageError('record store is closed');
    // Reserved in one synchronous step, like an append's: later appends get higher numbers.
    const base = s.nextSeq;
    s.nextSeq += batch.rows;
    let src = sql`(${batch.select})`;
    // The same id twice in the file: only its last row is written (the others would be dead on arrival).
    const dups =
      batch.unique !== true && Number((await batch.db.all(sql`SELECT count(*) - count(DISTINCT id) AS d FROM ${src}`))[0]!['d']) > 0;
    if (dups) src = sql`(SELECT * FROM ${src} QUALIFY rn = max(rn) OVER (PARTITION BY id))`;
    const { hashes, behindUs, ranges } = await scanBlocks(
      batch,
      src,
      Math.max(1, Math.min(BLOCK_ROWS, Math.floor(s.options.rowGroupSize / 4))),
    );
    // Kinds whose rows come nearly in created_at order (an export does: it holds the segments' runs,
    // sorted, in order) are written in the order they come, without a sort (most of an import's
    // CPU time otherwise). "Nearly": no row is older than the newest before it by more than
    // NEAR_ORDER_GROUPS row groups' worth of time, so each row group's created_at range stays as tight
    // as in segments merges concatenate (the store's own 1M-span segment: 2.2 row groups). A filter
    // keeps a scan's order (DuckDB preserves insertion order); the window of `dups` does not.
    const inOrder = new Set<string>();
    if (!dups) {
      for (const kind of KINDS) {
        const n = hashes.get(kind)!.length;
        const r = ranges.get(kind);
        if (n === 0 || r === undefined) continue;
        const groupUs = ((r[1] - r[0]) * s.options.rowGroupSize) / n;
        if (behindUs.get(kind)! <= NEAR_ORDER_GROUPS * groupUs) inOrder.add(kind);
      }
    }

    const metricIds: Record<string, number> = { ...s.manifest.metric_ids };
    let nextMetric = Math.max(-1, ...Object.values(metricIds)) + 1;
    const names = new Map<RecordKind, string[]>(KINDS.map((k) => [k, []]));
    for (const r of await batch.db.all(
      sql`SELECT DISTINCT ${raw(KIND_SQL)} AS kind, unnest(map_keys(metrics)) AS name FROM ${src} ORDER BY name`,
    )) {
      names.get(r['kind'] as RecordKind)!.push(String(r['name']));
    }

    const added: WrittenSegment[] = [];
    try {
      for (const kind of KINDS) {
        const kindHashes = hashes.get(kind)!;
        if (kindHashes.length === 0) continue;
        const metrics = names.get(kind)!;
        for (const m of metrics) if (metricIds[m] === undefined) metricIds[m] = nextMetric++;
        const shredded = joinSql(
          metrics.map((m) => sql`, metrics[${m}] AS ${ident(`m${metricIds[m]}`)}`),
          '',
        );
        const cols = RECORD_COLUMNS.map((c) =>
          c.name === 'seq'
            ? sql`(${base} + rn)::BIGINT AS seq`
            : c.name === 'project_id'
              ? sql`${projectId}::VARCHAR AS project_id`
              : c.name === 'run_id'
                ? sql`${runId}::VARCHAR AS run_id`
                : ident(c.name),
        );
        // One fragment for every piece below: its values are bound once.
        const rows = sql`SELECT ${joinSql(cols)}${shredded} FROM ${src} WHERE ${raw(KIND_SQL)} = ${kind}`;
        // Cut into created_at ranges sorted one at a time: DuckDB runs the branches of a UNION ALL in
        // order when the order matters (a COPY keeps it), so the file is sorted as one sort would leave it.
        const bounds = (inOrder.has(kind) ? [] : await pieceBounds(batch, src, kind, kindHashes.length)).map((us) => param(us));
        const piece = (i: number) =>
          sql`(${rows}${i > 0 ? sql` AND created_at >= make_timestamp(${bounds[i - 1]!})` : EMPTY}
              ${i < bounds.length ? sql` AND created_at < make_timestamp(${bounds[i]!})` : EMPTY} ORDER BY created_at, id)`;
        const select = inOrder.has(kind)
          ? rows
          : bounds.length === 0
            ? sql`${rows} ORDER BY created_at, id`
            : joinSql(
                [...bounds, null].map((_, i) => piece(i)),
                ' UNION ALL ',
              );
        // Rows in order that are whole, unchanged row groups of the source, none much larger than the
        // store's own (merges leave groups a few percent over it, and DuckDB does not keep to small
        // settings: a seal at 8 wrote 180 rows to a group; so up to twice it or DuckDB's default of
        // 122,880): their pages are copied.
        const groups = batch.pages && inOrder.has(kind) ? batch.pages.groups.filter((g) => g.kind === kind) : [];
        const fit = groups.every((g) => g.rows <= Math.max(2 * s.options.rowGroupSize, 122_880));
        const pages =
          batch.pages && fit && groups.length > 0 && groups.reduce((n, g) => n + g.rows, 0) === kindHashes.length
            ? {
                db: batch.db,
                pages: batch.pages,
                groups,
                select,
                base,
                projectId,
                runId,
                metrics: metrics.map((m) => [m, metricIds[m]!] as const),
                compressionLevel: IMPORT_COMPRESSION_LEVEL,
                scratch: join(s.dir, 'tmp'),
              }
            : null;
        const write = (viaPages: boolean) =>
          batch.db.withConnection((conn) =>
            writeSegment(conn, s.dir, {
              file: segmentPath(s.dir, partitionKey(projectId, runId, kind), s.nextSegment++),
              projectId,
              runId,
              kind,
              select,
              ...(viaPages && pages ? { write: (abs: string) => writePageSegment(conn, abs, pages) } : {}),
              compressionLevel: IMPORT_COMPRESSION_LEVEL,
              rowGroupSize: s.options.rowGroupSize,
              textIndex: s.options.textIndex,
              // Written after the import, in the background (RecordStore.measureLater): they took 60% more time.
              topListMinRows: Number.POSITIVE_INFINITY,
              valueIndexMinRows: s.options.valueIndexMinRows,
              factColumns: s.options.notedColumns,
              metrics: metrics.map((m) => metricIds[m]!),
              hashes: kindHashes,
            }),
          );
        let written: Awaited<ReturnType<typeof write>>;
        try {
          written = await write(pages !== null);
        } catch (err) {
          // A column laid out otherwise than the segment's (an older export): written the usual way.
          if (!(err instanceof SpliceMismatch)) throw err;
          written = await write(false);
        }
        if (written) added.push(written);
      }
      return await commitBatch(s, projectId, runId, added, metricIds);
    } catch (err) {
      for (const seg of added) if (!s.manifest.segments.some((g) => g.file === seg.entry.file)) removeSegmentFiles(s.dir, seg.entry.file);
      throw err instanceof StorageError
        ? err
        : new StorageError(`importing into segments failed: ${(err as Error).message}`, { cause: err });
    }
  });
}

/** Most rows per block of scanBlocks (a quarter of a row group if less): a block's ids come as one string (~300 KB). */
const BLOCK_ROWS = 8192;

interface BlockScan {
  /** Each kind's id hashes (unsorted). */
  hashes: Map<RecordKind, Float64Array>;
  /**
   * Per kind, a bound on how far (µs) a row's created_at lies behind the newest created_at before it
   * in the batch: per block of rows in batch order, the newest so far (this block's included) minus
   * the block's oldest. It overstates by at most a block's own time span (about a quarter row group's).
   */
  behindUs: Map<RecordKind, number>;
  /** Each kind's oldest and newest created_at (epoch µs). */
  ranges: Map<RecordKind, [number, number]>;
}

/**
 * One aggregate over the batch: per kind and block of rows, the ids joined into one string (hashed
 * here out of it: a JS string per id costs several times as much) and the created_at range (what the
 * order check needs; a window over every row cost as much again).
 */
async function scanBlocks(batch: BulkBatch, src: Sql, blockRows: number): Promise<BlockScan> {
  const blocks = await batch.db.withConnection((conn) =>
    conn.columns(
      sql`SELECT ${raw(KIND_SQL)} AS kind, rn // ${int(blockRows)} AS block, count(*) AS n,
       epoch_us(min(created_at))::DOUBLE AS lo, epoch_us(max(created_at))::DOUBLE AS hi, string_agg(id, '') AS ids
       FROM ${src} GROUP BY ALL ORDER BY kind, block`,
    ),
  );
  const [kinds, , counts, los, his, ids] = blocks as [string[], unknown[], bigint[], number[], number[], string[]];
  const sizes = new Map<RecordKind, number>(KINDS.map((k) => [k, 0]));
  for (let i = 0; i < kinds.length; i++) sizes.set(kinds[i] as RecordKind, sizes.get(kinds[i] as RecordKind)! + Number(counts[i]));
  const hashes = new Map<RecordKind, Float64Array>(KINDS.map((k) => [k, new Float64Array(sizes.get(k)!)]));
  const filled = new Map<RecordKind, number>(KINDS.map((k) => [k, 0]));
  const behindUs = new Map<RecordKind, number>(KINDS.map((k) => [k, 0]));
  const ranges = new Map<RecordKind, [number, number]>();
  const newest = new Map<RecordKind, number>();
  for (let i = 0; i < kinds.length; i++) {
    const kind = kinds[i] as RecordKind;
    const text = ids[i]!;
    const n = Number(counts[i]);
    // Ids are UUIDs (the caller checked): 36 characters each, so the joined string needs no separator.
    if (text.length !== n * 36) throw new StorageError('bulk load: ids must be 36-character UUIDs');
    const out = hashes.get(kind)!;
    let o = filled.get(kind)!;
    for (let at = 0; at < text.length; at += 36) out[o++] = idHashAt(text, at, at + 36);
    filled.set(kind, o);
    const lo = los[i]!;
    const hi = his[i]!;
    const top = Math.max(newest.get(kind) ?? -Infinity, hi);
    newest.set(kind, top);
    behindUs.set(kind, Math.max(behindUs.get(kind)!, top - lo));
    const r = ranges.get(kind);
    ranges.set(kind, r ? [Math.min(r[0], lo), Math.max(r[1], hi)] : [lo, hi]);
  }
  return { hashes, behindUs, ranges };
}

/**
 * created_at bounds (epoch µs, ascending, distinct) cutting a kind's `rows` rows of the batch into
 * ranges of about `batch.sortRows` rows; none when they fit in one. Ties stay in one range.
 */
async function pieceBounds(batch: BulkBatch, src: Sql, kind: RecordKind, rows: number): Promise<number[]> {
  const per = batch.sortRows;
  if (per === undefined || rows <= per) return [];
  const pieces = Math.min(1000, Math.ceil(rows / per));
  // The fractions are ours (numbers), the one literal list here.
  const fractions = Array.from({ length: pieces - 1 }, (_, i) => ((i + 1) / pieces).toFixed(6));
  const r = await batch.db.all(
    sql`SELECT list_transform(quantile_disc(created_at, [${raw(fractions.join(', '))}]), x -> epoch_us(x)) AS b FROM ${src} WHERE ${raw(KIND_SQL)} = ${kind}`,
  );
  const bounds = ((r[0]?.['b'] as unknown[] | null) ?? []).map(Number);
  return [...new Set(bounds)].sort((x, y) => x - y);
}

/**
 * Marks dead whichever of two live versions of an id is older (the batch's rows against the run's
 * segments and memory tables), then lists the new files in one manifest write.
 */
async function commitBatch(
  s: StoreState,
  projectId: string,
  runId: string,
  added: readonly WrittenSegment[],
  metricIds: Record<string, number>,
): Promise<number> {
  if (added.length === 0) return 0;
  const newFiles = added.map((a) => join(s.dir, a.entry.file));
  const dead: number[] = [];
  // Only the run's segments whose id hashes meet the batch's (usually none) can hold a replaced version.
  const run = s.manifest.segments.filter((g) => g.project_id === projectId && g.run_id === runId).map((g) => g.file);
  const meet = new Set<string>();
  for (const a of added)
    for (const f of s.index.mayHoldAny(
      run.filter((f) => !meet.has(f)),
      a.hashes,
    ))
      meet.add(f);
  const existing = run.filter((f) => meet.has(f)).map((f) => join(s.dir, f));
  if (existing.length > 0) {
    const pairs = await s.conns.seal.all(
      sql`SELECT e.seq AS old, i.seq AS new FROM read_parquet(${existing}, hive_partitioning = false) e
       JOIN read_parquet(${newFiles}, hive_partitioning = false) i ON e.id = i.id
       WHERE e.seq NOT IN (SELECT seq FROM dead)`,
    );
    for (const r of pairs) dead.push(Math.min(Number(r['old']), Number(r['new'])));
  }
  // Records in memory tables: appends go on meanwhile, so look until no new candidate turned up, then
  // commit in the same synchronous step as the last look (an append after it sees the new segments).
  const all = [...added.map((a) => a.hashes)];
  const inBatch = (id: string) => {
    const h = idHash(id);
    return all.some((hs) => hasHash(hs, h));
  };
  const looked = new Map<string, number>();
  /** Memory entries the batch replaces: key -> the seq that dies (a later append may have replaced it since). */
  const memDead = new Map<string, number>();
  let pending = dead;
  for (;;) {
    if (pending.length > 0) {
      // Marked before listed, effective from the commit's generation: a snapshot of the manifest before
      // it still sees the replaced versions, one after it the new ones (maint is held: no other commit).
      await s.inserter.run(sql`INSERT INTO dead (seq, gen) SELECT unnest(${pending}::BIGINT[]), ${s.manifest.generation + 1}`);
      pending = [];
    }
    const todo: { key: string; id: string; seq: number }[] = [];
    const prefix = `${runId}/`;
    for (const [key, e] of s.memIds) {
      if (!key.startsWith(prefix) || looked.get(key) === e.seq) continue;
      const id = key.slice(prefix.length);
      if (inBatch(id)) todo.push({ key, id, seq: e.seq });
    }
    if (todo.length === 0) break;
    const found = new Map(
      (
        await s.conns.seal.all(
          sql`SELECT id, seq FROM read_parquet(${newFiles}, hive_partitioning = false) WHERE id IN (SELECT unnest(${todo.map((t) => t.id)}::VARCHAR[]))`,
        )
      ).map((r) => [String(r['id']), Number(r['seq'])]),
    );
    for (const t of todo) {
      looked.set(t.key, t.seq);
      const mine = found.get(t.id);
      if (mine === undefined) continue;
      if (t.seq < mine) memDead.set(t.key, t.seq);
      pending.push(Math.min(t.seq, mine));
      dead.push(Math.min(t.seq, mine));
    }
  }
  const state: ManifestState = {
    ...s.manifest,
    generation: s.manifest.generation + 1,
    next_segment: s.nextSegment,
    segments: [...s.manifest.segments, ...added.map((a) => a.entry)],
    dead: [...s.manifest.dead, ...dead],
    metric_ids: metricIds,
  };
  try {
    s.commit(
      state,
      added.map((a) => a.entry.file),
    );
  } catch (err) {
    // Only this load's marks (its generation): a delete meanwhile may have marked the same rows.
    if (dead.length > 0)
      await s.inserter
        .run(sql`DELETE FROM dead WHERE gen = ${state.generation} AND seq IN (SELECT unnest(${dead}::BIGINT[]))`)
        .catch(() => undefined);
    throw err;
  }
  s.dead.addAll(dead);
  for (const [key, seq] of memDead) if (s.memIds.get(key)?.seq === seq) s.memIds.delete(key);
  for (const a of added) {
    s.index.add(indexedSegment(s.dir, a));
    s.tally('load', a);
  }
  // Appends that looked up sealed versions before this commit look again (they may replace these rows).
  s.sealGeneration += 1;
  return added.reduce((n, a) => n + a.entry.rows, 0);
}
