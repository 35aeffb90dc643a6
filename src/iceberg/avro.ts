// Iceberg's Avro files (format v2): manifests (one entry per data or delete file) and manifest lists
// (one entry per manifest), written with avsc. The Avro schemas carry Iceberg's field ids
// (`field-id`), which Java readers match fields by; optional fields this writer never fills are
// still declared, as null, so the files have the shape other writers give them.
import avro from 'avsc';
import { PARTITION_FIELDS } from './schema.js';

const opt = (type: unknown) => ['null', type];
const field = (name: string, id: number, type: unknown, optional = false) => ({
  name,
  type: optional ? opt(type) : type,
  ...(optional ? { default: null } : {}),
  'field-id': id,
});
/** Iceberg's map with non-string keys: an array of key/value records marked logicalType map. */
const intMap = (name: string, k: number, v: number, value: unknown) => ({
  type: 'array',
  logicalType: 'map',
  items: { type: 'record', name, fields: [field('key', k, 'int'), field('value', v, value)] },
});

const DATA_FILE = {
  type: 'record',
  name: 'r2',
  fields: [
    field('content', 134, 'int'),
    field('file_path', 100, 'string'),
    field('file_format', 101, 'string'),
    field('partition', 102, {
      type: 'record',
      name: 'r102',
      fields: PARTITION_FIELDS.map((p) => field(p.name, p['field-id'], 'string', true)),
    }),
    field('record_count', 103, 'long'),
    field('file_size_in_bytes', 104, 'long'),
    field('column_sizes', 108, intMap('k117_v118', 117, 118, 'long'), true),
    field('value_counts', 109, intMap('k119_v120', 119, 120, 'long'), true),
    field('null_value_counts', 110, intMap('k121_v122', 121, 122, 'long'), true),
    field('nan_value_counts', 137, intMap('k138_v139', 138, 139, 'long'), true),
    field('lower_bounds', 125, intMap('k126_v127', 126, 127, 'bytes'), true),
    field('upper_bounds', 128, intMap('k129_v130', 129, 130, 'bytes'), true),
    field('key_metadata', 131, 'bytes', true),
    field('split_offsets', 132, { type: 'array', items: 'long', 'element-id': 133 }, true),
    field('equality_ids', 135, { type: 'array', items: 'int', 'element-id': 136 }, true),
    field('sort_order_id', 140, 'int', true),
    field('referenced_data_file', 143, 'string', true),
  ],
};

const MANIFEST_ENTRY = avro.Type.forSchema({
  type: 'record',
  name: 'manifest_entry',
  fields: [
    field('status', 0, 'int'),
    field('snapshot_id', 1, 'long', true),
    field('sequence_number', 3, 'long', true),
    field('file_sequence_number', 4, 'long', true),
    field('data_file', 2, DATA_FILE),
  ],
} as avro.Schema);

const MANIFEST_FILE = avro.Type.forSchema({
  type: 'record',
  name: 'manifest_file',
  fields: [
    field('manifest_path', 500, 'string'),
    field('manifest_length', 501, 'long'),
    field('partition_spec_id', 502, 'int'),
    field('content', 517, 'int'),
    field('sequence_number', 515, 'long'),
    field('min_sequence_number', 516, 'long'),
    field('added_snapshot_id', 503, 'long'),
    field('added_files_count', 504, 'int'),
    field('existing_files_count', 505, 'int'),
    field('deleted_files_count', 506, 'int'),
    field('added_rows_count', 512, 'long'),
    field('existing_rows_count', 513, 'long'),
    field('deleted_rows_count', 514, 'long'),
    field(
      'partitions',
      507,
      {
        type: 'array',
        'element-id': 508,
        items: {
          type: 'record',
          name: 'r508',
          fields: [
            field('contains_null', 509, 'boolean'),
            field('contains_nan', 518, 'boolean', true),
            field('lower_bound', 510, 'bytes', true),
            field('upper_bound', 511, 'bytes', true),
          ],
        },
      },
      true,
    ),
    field('key_metadata', 519, 'bytes', true),
  ],
} as avro.Schema);

/** Entry status in a manifest. */
export const STATUS = { EXISTING: 0, ADDED: 1, DELETED: 2 } as const;
/** What a file holds: rows, or positions of deleted rows. */
export const CONTENT = { DATA: 0, POSITION_DELETES: 1 } as const;

export interface ManifestEntry {
  readonly status: number;
  readonly snapshotId: number;
  readonly sequenceNumber: number;
  readonly fileSequenceNumber: number;
  readonly content: number;
  readonly path: string;
  readonly partition: { readonly project_id: string; readonly run_id: string };
  readonly records: number;
  readonly bytes: number;
  /** For a position delete file: the one data file it names. */
  readonly referencedDataFile?: string;
}

export interface ManifestListEntry {
  readonly path: string;
  readonly length: number;
  readonly content: number;
  readonly sequenceNumber: number;
  readonly minSequenceNumber: number;
  readonly addedSnapshotId: number;
  readonly added: number;
  readonly existing: number;
  readonly deleted: number;
  readonly addedRows: number;
  readonly existingRows: number;
  readonly deletedRows: number;
}

/** Snapshot ids and sequence numbers are below 2^53 (snapshot ids are made so): exact as JS numbers, longs in Avro. */
async function encode(type: avro.Type, records: readonly object[], metadata: Record<string, string>): Promise<Buffer> {
  const encoder = new avro.streams.BlockEncoder(type, {
    codec: 'null',
    metadata: Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, Buffer.from(v)])),
  } as never);
  const chunks: Buffer[] = [];
  const done = new Promise<void>((resolve, reject) => {
    encoder.on('data', (c: Buffer) => chunks.push(c));
    encoder.on('end', resolve);
    encoder.on('error', reject);
  });
  for (const r of records) encoder.write(r);
  encoder.end();
  await done;
  return Buffer.concat(chunks);
}

export function manifestFile(
  entries: readonly ManifestEntry[],
  meta: { schemaJson: string; schemaId: number; specJson: string; content: 'data' | 'deletes' },
): Promise<Buffer> {
  return encode(
    MANIFEST_ENTRY,
    entries.map((e) => ({
      status: e.status,
      snapshot_id: e.snapshotId,
      sequence_number: e.sequenceNumber,
      file_sequence_number: e.fileSequenceNumber,
      data_file: {
        content: e.content,
        file_path: e.path,
        file_format: 'PARQUET',
        partition: { project_id: e.partition.project_id, run_id: e.partition.run_id },
        record_count: e.records,
        file_size_in_bytes: e.bytes,
        column_sizes: null,
        value_counts: null,
        null_value_counts: null,
        nan_value_counts: null,
        lower_bounds: null,
        upper_bounds: null,
        key_metadata: null,
        split_offsets: null,
        equality_ids: null,
        sort_order_id: null,
        referenced_data_file: e.referencedDataFile ?? null,
      },
    })),
    {
      schema: meta.schemaJson,
      'schema-id': String(meta.schemaId),
      'partition-spec': meta.specJson,
      'partition-spec-id': '0',
      'format-version': '2',
      content: meta.content,
    },
  );
}

export function manifestList(
  entries: readonly ManifestListEntry[],
  meta: { snapshotId: number; parentSnapshotId: number | null; sequenceNumber: number },
): Promise<Buffer> {
  return encode(
    MANIFEST_FILE,
    entries.map((m) => ({
      manifest_path: m.path,
      manifest_length: m.length,
      partition_spec_id: 0,
      content: m.content,
      sequence_number: m.sequenceNumber,
      min_sequence_number: m.minSequenceNumber,
      added_snapshot_id: m.addedSnapshotId,
      added_files_count: m.added,
      existing_files_count: m.existing,
      deleted_files_count: m.deleted,
      added_rows_count: m.addedRows,
      existing_rows_count: m.existingRows,
      deleted_rows_count: m.deletedRows,
      partitions: null,
      key_metadata: null,
    })),
    {
      'snapshot-id': String(meta.snapshotId),
      'parent-snapshot-id': meta.parentSnapshotId === null ? 'null' : String(meta.parentSnapshotId),
      'sequence-number': String(meta.sequenceNumber),
      'format-version': '2',
    },
  );
}
