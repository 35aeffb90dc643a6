// One table's publish: place new segments under the table (hard link or upload), write delete files
// for segments whose dead rows changed, then the manifests, the manifest list, the state and last the
// metadata version that commits the snapshot. Until that last write nothing a reader follows has
// changed, so an interrupted publish leaves the previous snapshot whole, and the next publish reuses
// whatever the interrupted one had already placed (names are deterministic; present files are skipped).
import { rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Connection } from '../db/database.js';
import type { SegmentEntry } from '../storage/manifest/manifest.js';
import { lowerBound } from '../storage/memtable/seq-lists.js';
import type { RecordKind } from '../record/record-columns.js';
import { deadPositions, writeDeleteFile } from './deletes.js';
import { removeUnnamed } from './expire.js';
import { writeManifests } from './manifests.js';
import { newSnapshotId, nextMetadata, resolveSchema, type TableMetadata } from './metadata.js';
import { metricColumns, nameMapping, TABLE_OF, tableSchema } from './schema.js';
import {
  EMPTY_TABLE_STATE,
  latestVersion,
  metadataRel,
  parseTableState,
  stateRel,
  type DataFileState,
  type DeletesState,
  type TableState,
} from './table-state.js';
import type { Target } from './target.js';

export interface ExpiryOptions {
  /** Snapshots kept at most, newest first (default 100). */
  readonly keepSnapshots: number;
  /** Snapshots older than this are expired, except the current one (default 5 days). */
  readonly maxSnapshotAgeMs: number;
  /** Earlier metadata versions kept in the metadata log (default 100). */
  readonly keepMetadataFiles: number;
}

export interface TableInput {
  readonly kind: RecordKind;
  readonly dir: string;
  readonly conn: Connection;
  readonly segments: readonly SegmentEntry[];
  /** The store's dead seqs, sorted. */
  readonly dead: readonly number[];
  readonly metricIds: Readonly<Record<string, number>>;
  /** Retention cutoffs (epoch µs) by run id. */
  readonly cutoffs: ReadonlyMap<string, number>;
  /** A folder of the store for delete files on their way to the target. */
  readonly staging: string;
  readonly expiry: ExpiryOptions;
  readonly now: number;
}

export interface TableResult {
  readonly table: string;
  /** The current snapshot (null: nothing published yet, the table has no rows). */
  readonly snapshotId: number | null;
  readonly sequenceNumber: number;
  /** Whether this publish committed a new snapshot (false: nothing changed). */
  readonly committed: boolean;
  readonly metadata: string | null;
  readonly dataFiles: number;
  readonly deleteFiles: number;
  readonly rows: number;
  readonly deletedRows: number;
  /** Bytes sent to the target (uploads and copies; hard links send none). */
  readonly bytesSent: number;
  readonly filesPlaced: number;
  readonly filesRemoved: number;
}

/** Whether some seq of the sorted list lies in [lo, hi]. */
function anyIn(sorted: readonly number[], lo: number, hi: number): boolean {
  const a = lowerBound(sorted, lo);
  return a < sorted.length && sorted[a]! <= hi;
}

/** Sorted `now` minus sorted `before`. */
function added(now: readonly number[], before: readonly number[]): number[] {
  const out: number[] = [];
  let j = 0;
  for (const q of now) {
    while (j < before.length && before[j]! < q) j++;
    if (j >= before.length || before[j] !== q) out.push(q);
  }
  return out;
}

/** Whether moving a run's cutoff from `before` to `now` may change which rows of the segment expired. */
function cutoffMoved(before: number | undefined, now: number | undefined, g: SegmentEntry): boolean {
  if (before === now) return false;
  const lo = Math.min(before ?? -Infinity, now ?? -Infinity);
  const hi = Math.max(before ?? -Infinity, now ?? -Infinity);
  return g.min_created_us < hi && g.max_created_us >= lo;
}

export async function publishTable(target: Target, input: TableInput): Promise<TableResult> {
  const table = TABLE_OF[input.kind];
  const listed = await target.list(table);
  const prevVersion = latestVersion(table, listed.keys());
  const prevBytes = prevVersion ? await target.get(metadataRel(table, prevVersion)) : null;
  const prevMeta = prevBytes ? (JSON.parse(prevBytes.toString('utf8')) as TableMetadata) : null;
  const loaded = prevVersion ? parseTableState(await target.get(stateRel(table, prevVersion))) : null;
  // Metadata without our state (written by another tool, or the state file was removed): published
  // afresh, and nothing is removed this time, since what older snapshots name is unknown.
  const knownHistory = prevMeta === null || loaded !== null;
  const prev: TableState = loaded ?? EMPTY_TABLE_STATE;
  const snapshotId = newSnapshotId();
  const seqNo = (prevMeta?.['last-sequence-number'] ?? 0) + 1;
  const newDead = added(input.dead, prev.dead);

  let bytesSent = 0;
  let filesPlaced = 0;
  const files: Record<string, DataFileState> = {};
  const present = new Set<number>();
  for (const g of input.segments) {
    const rel = `${table}/data/project_id=${g.project_id}/run_id=${g.run_id}/${basename(g.file)}`;
    const before = prev.files[rel];
    const cut = input.cutoffs.get(g.run_id);
    const abs = join(input.dir, g.file);
    const scan = !before || anyIn(newDead, g.min_seq, g.max_seq) || cutoffMoved(prev.cutoffs[g.run_id], cut, g);
    const dead = scan
      ? await deadPositions(input.conn, abs, cut)
      : { count: before.deletes?.count ?? 0, digest: before.deletes?.digest ?? '' };
    if (dead.count >= g.rows) continue; // every row dead: the file leaves the table
    const placed = await target.putFile(rel, abs, g.bytes);
    bytesSent += placed.sent;
    if (!listed.has(rel)) filesPlaced++;
    let deletes: DeletesState | null = null;
    if (dead.count > 0) {
      if (before?.deletes && before.deletes.digest === dead.digest) deletes = before.deletes;
      else {
        const delRel = `${dirname(rel)}/${basename(g.file, '.parquet')}-deletes-${dead.digest.slice(0, 16)}.parquet`;
        const staged = join(input.staging, `${randomUUID()}.parquet`);
        try {
          await writeDeleteFile(input.conn, abs, cut, target.uri(rel), staged);
          const size = statSync(staged).size;
          bytesSent += (await target.putFile(delRel, staged, size)).sent;
          if (!listed.has(delRel)) filesPlaced++;
          deletes = { rel: delRel, bytes: size, count: dead.count, digest: dead.digest, sequenceNumber: seqNo, snapshotId };
        } finally {
          rmSync(staged, { force: true });
        }
      }
    }
    for (const m of g.metrics) present.add(m);
    files[rel] = before
      ? { ...before, deletes }
      : {
          rel,
          segment: g.file,
          project_id: g.project_id,
          run_id: g.run_id,
          rows: g.rows,
          bytes: g.bytes,
          sequenceNumber: seqNo,
          snapshotId,
          deletes,
        };
  }

  // Metric columns: every metric a published file of this table ever carried keeps its column.
  for (const id of Object.keys(prev.metricColumns)) present.add(Number(id));
  const metrics = metricColumns(input.metricIds, present);
  const schema = resolveSchema(prevMeta, tableSchema(0, metrics));
  const liveRels = (s: TableState['files']) => Object.values(s).flatMap((f) => [f.rel, ...(f.deletes ? [f.deletes.rel] : [])]);
  const before = new Set(liveRels(prev.files));
  const now = new Set(liveRels(files));
  const unchanged =
    prevMeta !== null &&
    loaded !== null &&
    before.size === now.size &&
    [...now].every((r) => before.has(r)) &&
    schema['schema-id'] === prevMeta['current-schema-id'];
  const tally = (f: Record<string, DataFileState>) => {
    let rows = 0;
    let deleted = 0;
    let deleteFiles = 0;
    for (const d of Object.values(f)) {
      rows += d.rows;
      deleted += d.deletes?.count ?? 0;
      deleteFiles += d.deletes ? 1 : 0;
    }
    return { dataFiles: Object.keys(f).length, deleteFiles, rows, deletedRows: deleted };
  };
  if (unchanged) {
    return {
      table,
      snapshotId: prevMeta['current-snapshot-id'],
      sequenceNumber: prevMeta['last-sequence-number'],
      committed: false,
      metadata: target.uri(metadataRel(table, prevVersion)),
      ...tally(prev.files),
      bytesSent,
      filesPlaced,
      filesRemoved: 0,
    };
  }

  const parent = prevMeta?.['current-snapshot-id'];
  const listRel = await writeManifests(target, {
    table,
    snapshotId,
    sequenceNumber: seqNo,
    parent: parent ?? null,
    schema,
    files: Object.values(files),
  });

  const t = tally(files);
  const version = prevVersion + 1;
  const meta = nextMetadata(prevMeta, {
    location: target.uri(table),
    schema,
    properties: {
      'schema.name-mapping.default': nameMapping(metrics),
      'write.format.default': 'parquet',
      'tracelake.record-kind': input.kind,
      'tracelake.metric-columns': JSON.stringify(Object.fromEntries(metrics.map((m) => [m.column, m.metric]))),
    },
    snapshot: {
      'snapshot-id': snapshotId,
      ...(parent === undefined ? {} : { 'parent-snapshot-id': parent }),
      'sequence-number': seqNo,
      'timestamp-ms': input.now,
      'manifest-list': target.uri(listRel),
      summary: {
        operation: 'overwrite',
        'total-data-files': String(t.dataFiles),
        'total-delete-files': String(t.deleteFiles),
        'total-records': String(t.rows),
        'total-position-deletes': String(t.deletedRows),
        'total-files-size': String(Object.values(files).reduce((n, f) => n + f.bytes + (f.deletes?.bytes ?? 0), 0)),
      },
    },
    previousFile: prevVersion ? target.uri(metadataRel(table, prevVersion)) : null,
    keepSnapshots: input.expiry.keepSnapshots,
    maxSnapshotAgeMs: input.expiry.maxSnapshotAgeMs,
    keepMetadataFiles: input.expiry.keepMetadataFiles,
  });

  // Files the new snapshot no longer names wait until no kept snapshot is as old as the last one naming them.
  const oldestKept = Math.min(...meta.snapshots.map((s) => s['sequence-number']));
  const retired: Record<string, number> = {};
  for (const [rel, last] of Object.entries(prev.retired)) if (!now.has(rel) && last >= oldestKept) retired[rel] = last;
  for (const rel of before)
    if (!now.has(rel) && prevMeta!['last-sequence-number'] >= oldestKept) retired[rel] = prevMeta!['last-sequence-number'];
  const state: TableState = {
    format: 1,
    dead: input.dead,
    cutoffs: Object.fromEntries(input.cutoffs),
    files,
    retired,
    metricColumns: Object.fromEntries(metrics.map((m) => [String(m.id), m.column])),
  };
  await target.put(stateRel(table, version), Buffer.from(JSON.stringify(state)));
  await target.put(metadataRel(table, version), Buffer.from(JSON.stringify(meta, null, 1)));
  // The commit point is the metadata file above; the hint only helps readers that ask for it.
  await target.put(`${table}/metadata/version-hint.text`, Buffer.from(String(version)));

  const filesRemoved = knownHistory
    ? await removeUnnamed(
        target,
        table,
        listed.keys(),
        meta,
        new Set([...now, ...Object.keys(retired), metadataRel(table, version), stateRel(table, version)]),
      )
    : 0;
  return {
    table,
    snapshotId,
    sequenceNumber: seqNo,
    committed: true,
    metadata: target.uri(metadataRel(table, version)),
    ...t,
    bytesSent,
    filesPlaced,
    filesRemoved,
  };
}
