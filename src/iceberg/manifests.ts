// A snapshot's Avro files: one manifest of its data files, one of its delete files, and the manifest
// list naming both. Every live file is listed: those this snapshot adds as ADDED, the others as
// EXISTING with the snapshot and sequence number that added them (a position delete applies to data
// files of lower or equal sequence numbers, so a new delete file reaches every older data file).
import { CONTENT, manifestFile, manifestList, STATUS, type ManifestEntry, type ManifestListEntry } from './avro.js';
import { PARTITION_SPEC } from './metadata.js';
import type { IcebergSchema } from './schema.js';
import type { DataFileState } from './table-state.js';
import type { Target } from './target.js';

export interface SnapshotFiles {
  readonly table: string;
  readonly snapshotId: number;
  readonly sequenceNumber: number;
  readonly parent: number | null;
  readonly schema: IcebergSchema;
  readonly files: readonly DataFileState[];
}

/** Writes the manifests and the manifest list; returns the list's path under the target. */
export async function writeManifests(target: Target, s: SnapshotFiles): Promise<string> {
  const entry = (
    status: number,
    snap: number,
    seq: number,
    content: number,
    rel: string,
    f: DataFileState,
    records: number,
    bytes: number,
    ref?: string,
  ): ManifestEntry => ({
    status,
    snapshotId: snap,
    sequenceNumber: seq,
    fileSequenceNumber: seq,
    content,
    path: target.uri(rel),
    partition: { project_id: f.project_id, run_id: f.run_id },
    records,
    bytes,
    ...(ref ? { referencedDataFile: ref } : {}),
  });
  const statusOf = (snap: number) => (snap === s.snapshotId ? STATUS.ADDED : STATUS.EXISTING);
  const data: ManifestEntry[] = [];
  const deletes: ManifestEntry[] = [];
  for (const f of s.files) {
    data.push(entry(statusOf(f.snapshotId), f.snapshotId, f.sequenceNumber, CONTENT.DATA, f.rel, f, f.rows, f.bytes));
    const d = f.deletes;
    if (d)
      deletes.push(
        entry(
          statusOf(d.snapshotId),
          d.snapshotId,
          d.sequenceNumber,
          CONTENT.POSITION_DELETES,
          d.rel,
          f,
          d.count,
          d.bytes,
          target.uri(f.rel),
        ),
      );
  }
  const meta = { schemaJson: JSON.stringify(s.schema), schemaId: s.schema['schema-id'], specJson: JSON.stringify(PARTITION_SPEC.fields) };
  const list: ManifestListEntry[] = [];
  for (const [content, entries, name] of [
    [CONTENT.DATA, data, 'data'],
    [CONTENT.POSITION_DELETES, deletes, 'deletes'],
  ] as const) {
    if (entries.length === 0) continue;
    const bytes = await manifestFile(entries, { ...meta, content: name });
    const rel = `${s.table}/metadata/snap-${s.snapshotId}-${name}.avro`;
    await target.put(rel, bytes);
    const added = entries.filter((e) => e.status === STATUS.ADDED);
    const existing = entries.filter((e) => e.status !== STATUS.ADDED);
    list.push({
      path: target.uri(rel),
      length: bytes.byteLength,
      content,
      sequenceNumber: s.sequenceNumber,
      minSequenceNumber: Math.min(...entries.map((e) => e.sequenceNumber)),
      addedSnapshotId: s.snapshotId,
      added: added.length,
      existing: existing.length,
      deleted: 0,
      addedRows: added.reduce((n, e) => n + e.records, 0),
      existingRows: existing.reduce((n, e) => n + e.records, 0),
      deletedRows: 0,
    });
  }
  const listRel = `${s.table}/metadata/snap-${s.snapshotId}-list.avro`;
  await target.put(
    listRel,
    await manifestList(list, { snapshotId: s.snapshotId, parentSnapshotId: s.parent, sequenceNumber: s.sequenceNumber }),
  );
  return listRel;
}
