// Opening a record store (manifest, log replay, indexes, legacy logs, option defaults), apart from what an open store does.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { BatchSource } from '../db/batch-source.js';
import type { Database } from '../db/database.js';
import { DEFAULT_POLICY } from './segments/compaction.js';
import { openMergeDatabase } from './segments/merge.js';
import { ensureDirDurable } from './fs-util.js';
import { readIdFences, type IdFences } from './indexes/id-filter.js';
import { idHash } from './indexes/id-index.js';
import { TOP_LIST_MIN_ROWS } from './indexes/top-lists.js';
import { VALUE_INDEX_MIN_ROWS } from './indexes/value-index.js';
import { readLegacyWal, RejectedRequests } from './wal/legacy-wal.js';
import { loadManifest, type SegmentEntry } from './manifest/manifest.js';
import { MemInserter, MemTable } from './memtable/mem-tables.js';
import { RECORD_COLUMNS, tableDdl } from '../record/record-columns.js';
import { fieldsFrom, isLogRow } from '../record/record-checks.js';
import type { LogRow } from '../record/record.js';
import { StorageError } from '../errors.js';
import type { RecordStoreOptions } from './record-store-options.js';
import { DEFAULT_READER_GRACE_MS, READERS_DIR } from './readers/leases.js';
import { replayLog } from './wal/replay.js';
import { idsPath, removeUnlisted, segmentFilter } from './segments/segments.js';
import { EMPTY_TABLE } from './snapshot/snapshot-source.js';
import { memKey, StoreState } from './store-state.js';
import { WriteAheadLog } from './wal/wal.js';
import { raw, sql } from '../query/sql.js';

/**
 * The state of the store in `dir` as the log and the manifest leave it, with a new memory table for
 * writes; `finish` makes the store of it (RecordStore.open).
 */
export async function openStoreState<T>(
  dir: string,
  db: Database,
  options: RecordStoreOptions,
  finish: (s: StoreState) => Promise<T>,
): Promise<T> {
  ensureDirDurable(join(dir, 'records'), dir);
  ensureDirDurable(join(dir, 'wal'), dir);
  // Where read-only stores in other processes keep their leases (readers/leases.ts).
  ensureDirDurable(join(dir, READERS_DIR), dir);
  const manifest = loadManifest(dir);
  removeUnlisted(dir, manifest);
  const { wal, replay } = WriteAheadLog.open(join(dir, 'wal'), manifest.sealed_wal);
  const source = new BatchSource(RECORD_COLUMNS);
  const writer = await db.dedicated(source.functions);
  const resolved = resolveOptions(options);
  const mergeDb = resolved.mergeThreads > 0 ? await openMergeDatabase(dir, resolved.mergeThreads) : null;
  // A failed open closes the merge database and the id files (the caller closes `db`).
  let opened: StoreState | null = null;
  try {
    const merge = await db.dedicated();
    const seal = await db.dedicated();
    // Seals and merges read a segment's footer once (its stats after writing it, a merge's inputs):
    // cached, it would stay in DuckDB's object cache after the file is merged away, for every segment
    // ever written (bench/results/history/2026-11-25-library-memory-10m-3.md). Reads still cache footers.
    for (const c of [seal, merge]) await c.run(sql`SET SESSION parquet_metadata_cache = false`);
    const conns = { seal, merge, mergeWrite: mergeDb ? await mergeDb.dedicated() : merge };
    const s = new StoreState(dir, db, wal, new MemInserter(writer, source), conns, resolved, manifest, mergeDb);
    opened = s;
    s.dead.addAll(manifest.dead);
    // Dead rows may be the newest: their numbers stay taken (a row given one would be dead on arrival).
    for (const seq of manifest.dead) if (seq >= s.nextSeq) s.nextSeq = seq + 1;
    // A bulk load's segments may hold numbers above sealed_seq (reserved while log files stayed unsealed).
    for (const seg of manifest.segments) if (seg.max_seq >= s.nextSeq) s.nextSeq = seg.max_seq + 1;
    // Only filters are read (a segment's `.ids` file is searched in place on a filter hit): the store's
    // from its checkpoint, and each segment's own where the checkpoint does not cover it (its fences
    // only where it does). Segments it misses are added to it in the background.
    s.index.useStoreFilter(
      dir,
      manifest.segments.reduce((n, g) => n + g.rows, 0),
      resolved.idCheckpointAfter,
    );
    // The open counts as a question: the first ones usually follow it at once, and get the CPU first.
    const openedAt = performance.now();
    s.index.deferUntil((stopped) => s.quiet('questions', stopped, openedAt));
    for (const seg of manifest.segments)
      s.index.add({
        key: seg.file,
        partition: seg.file,
        filter: coveredFences(s, seg) ?? (await segmentFilter(conns.seal, dir, seg, idHash, true)),
        ids: idsPath(join(dir, seg.file)),
      });
    // Child and text indexes are checked (and rebuilt where missing, damaged or stale) after the open:
    // see segments/index-repair.ts.
    for (const seq of manifest.childless) s.childless.add(seq);
    for (const e of manifest.awaited) s.awaited.set(memKey(e[1], e[2]), e);
    // gen: the manifest generation from which a mark counts (bulk loads; 0: at once). clock: the log
    // entry that made it (StoreState.clock; 0: before open). See Snapshot.deadSeqs.
    // Fresh tables: an earlier store closed on the same database (tests, scripts) may have left its own.
    await writer.run(sql`CREATE OR REPLACE TABLE dead (seq BIGINT, gen BIGINT NOT NULL DEFAULT 0, clock BIGINT NOT NULL DEFAULT 0)`);
    await writer.run(sql`CREATE OR REPLACE TABLE childless (seq BIGINT, clock BIGINT NOT NULL DEFAULT 0)`);
    await writer.run(raw(tableDdl(EMPTY_TABLE)));
    if (s.dead.size > 0) await writer.run(sql`INSERT INTO dead (seq) SELECT unnest(${Array.from(s.dead.sorted())}::BIGINT[])`);
    if (s.childless.size > 0) await writer.run(sql`INSERT INTO childless (seq) SELECT unnest(${[...s.childless]}::BIGINT[])`);
    await replayLog(s, replay);
    const number = wal.start(s.nextSeq);
    s.mem.push(new MemTable(number, s.nextSeq, s.inserter.create(`mem_${number}`)));
    return await finish(s);
  } catch (err) {
    opened?.index.close();
    await mergeDb?.close();
    throw err;
  }
}

/** Requests logged by the NDJSON log of earlier versions are logged again (ids are kept, so it is idempotent). */
export async function convertLegacy(s: StoreState, append: (rows: LogRow[]) => Promise<void>): Promise<void> {
  const { files, requests } = readLegacyWal(join(s.dir, 'wal'), s.manifest.sealed_seq);
  if (files.length === 0) return;
  const rejected = new RejectedRequests(join(s.dir, 'wal', 'rejected.ndjson'));
  for (const rows of requests) {
    try {
      await append(rows.map(legacyRow));
    } catch (err) {
      if (s.broken) throw err;
      // A request the new log cannot take (a value validation would refuse) is kept aside, not dropped.
      rejected.keep(rows, err);
    }
  }
  rejected.finish(files);
}

/** A row of an old log file as a log row (its values converted as a batch would store them). */
function legacyRow(row: Readonly<Record<string, unknown>>): LogRow {
  const f = fieldsFrom((name) => row[name]);
  if (!isLogRow(f)) throw new StorageError('a row of an old log file lacks its seq, id, type, project, run or creation time');
  return f;
}

export function resolveOptions(o: RecordStoreOptions): StoreState['options'] {
  return {
    memTableBytes: o.memTableBytes ?? o.walRollBytes ?? 32 << 20,
    sealRows: o.sealRows ?? 1_000_000,
    rowGroupSize: o.rowGroupSize ?? 32_768,
    sealRowGroupSize: Math.min(o.sealRowGroupSize ?? 8_192, o.rowGroupSize ?? 32_768),
    autoCompact: o.autoCompact ?? true,
    compaction: o.compaction ?? DEFAULT_POLICY,
    compactionLevel: o.compactionLevel ?? 3,
    textIndex: o.textIndex ?? false,
    topLists: o.topLists ?? true,
    topListMinRows: o.topListMinRows ?? TOP_LIST_MIN_ROWS,
    valueIndexMinRows: o.valueIndexMinRows ?? VALUE_INDEX_MIN_ROWS,
    notedColumns: o.notedColumns ?? [],
    pipelineDepth: o.pipelineDepth ?? 3,
    mergePauseMs: o.mergePauseMs ?? 500,
    mergeMaxDelayMs: o.mergeMaxDelayMs ?? 30_000,
    mergeThreads: o.mergeThreads ?? 1,
    deadRowLists: { afterDelete: o.deadRowLists?.afterDelete ?? 10_000, fromRows: o.deadRowLists?.fromRows ?? 100_000 },
    readerGraceMs: o.readerGraceMs ?? DEFAULT_READER_GRACE_MS,
    idCheckpointAfter: o.idCheckpointAfter ?? 1 << 20,
    indexRepair: o.indexRepair ?? 'background',
    warmFooters: o.warmFooters ?? true,
  };
}

/** The fences of a segment the store's id filter covers, when its files agree; else null (its own filter is read). */
function coveredFences(s: StoreState, seg: SegmentEntry): IdFences | null {
  const abs = join(s.dir, seg.file);
  const f = readIdFences(abs);
  if (f === null || f.count < seg.rows || !s.index.covers(seg.file, f.count)) return null;
  try {
    return statSync(idsPath(abs)).size === f.count * 8 ? f : null;
  } catch {
    return null;
  }
}
