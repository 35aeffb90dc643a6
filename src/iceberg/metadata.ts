// Iceberg table metadata (format v2, `metadata/v<N>.metadata.json`): the table's schemas, partition
// spec, snapshots and logs. Each publish derives the next version from the last: a new snapshot, the
// schema grown by new metric columns, snapshots past the expiry rules dropped.
import { randomBytes, randomUUID } from 'node:crypto';
import { PARTITION_FIELDS, type IcebergSchema } from './schema.js';

export interface SnapshotMeta {
  readonly 'snapshot-id': number;
  readonly 'parent-snapshot-id'?: number;
  readonly 'sequence-number': number;
  readonly 'timestamp-ms': number;
  readonly 'manifest-list': string;
  readonly summary: Readonly<Record<string, string>>;
  readonly 'schema-id': number;
}

export interface TableMetadata {
  readonly 'format-version': 2;
  readonly 'table-uuid': string;
  readonly location: string;
  readonly 'last-sequence-number': number;
  readonly 'last-updated-ms': number;
  readonly 'last-column-id': number;
  readonly 'current-schema-id': number;
  readonly schemas: readonly IcebergSchema[];
  readonly 'default-spec-id': 0;
  readonly 'partition-specs': readonly { 'spec-id': number; fields: readonly object[] }[];
  readonly 'last-partition-id': number;
  readonly 'default-sort-order-id': 0;
  readonly 'sort-orders': readonly { 'order-id': number; fields: readonly object[] }[];
  readonly properties: Readonly<Record<string, string>>;
  readonly 'current-snapshot-id': number;
  readonly refs: Readonly<Record<string, { 'snapshot-id': number; type: 'branch' }>>;
  readonly snapshots: readonly SnapshotMeta[];
  readonly 'snapshot-log': readonly { 'timestamp-ms': number; 'snapshot-id': number }[];
  readonly 'metadata-log': readonly { 'timestamp-ms': number; 'metadata-file': string }[];
}

export const PARTITION_SPEC = { 'spec-id': 0, fields: PARTITION_FIELDS };

/** A new snapshot id: random, positive, below 2^53 (exact in JS numbers and in Avro longs). */
export function newSnapshotId(): number {
  const b = randomBytes(8);
  return (b.readUInt32BE(0) & 0x1fffff) * 2 ** 32 + b.readUInt32BE(4) || 1;
}

function maxFieldId(schema: IcebergSchema): number {
  let max = 0;
  for (const f of schema.fields) {
    max = Math.max(max, f.id);
    if (typeof f.type === 'object')
      max = Math.max(max, f.type.type === 'list' ? f.type['element-id'] : Math.max(f.type['key-id'], f.type['value-id']));
  }
  return max;
}

function sameFields(a: IcebergSchema, b: IcebergSchema): boolean {
  return JSON.stringify(a.fields) === JSON.stringify(b.fields);
}

export interface NextMetadata {
  readonly location: string;
  /** The schema this snapshot's files are read with (its schema-id is assigned here). */
  readonly schema: IcebergSchema;
  readonly properties: Readonly<Record<string, string>>;
  readonly snapshot: Omit<SnapshotMeta, 'schema-id'>;
  /** URI of the metadata file being replaced (null on the first version). */
  readonly previousFile: string | null;
  /** Snapshots to keep: the newest this many... */
  readonly keepSnapshots: number;
  /** ...and none older than this (ms), but always the new one. */
  readonly maxSnapshotAgeMs: number;
  readonly keepMetadataFiles: number;
}

/** The schema as it will be recorded: the previous current one when the fields did not change. */
export function resolveSchema(prev: TableMetadata | null, schema: IcebergSchema): IcebergSchema {
  if (!prev) return { ...schema, 'schema-id': 0 };
  const current = prev.schemas.find((s) => s['schema-id'] === prev['current-schema-id'])!;
  if (sameFields(current, schema)) return current;
  return { ...schema, 'schema-id': Math.max(...prev.schemas.map((s) => s['schema-id'])) + 1 };
}

export function nextMetadata(prev: TableMetadata | null, n: NextMetadata): TableMetadata {
  const schemas = prev
    ? prev.schemas.some((s) => s['schema-id'] === n.schema['schema-id'])
      ? prev.schemas
      : [...prev.schemas, n.schema]
    : [n.schema];
  const snap: SnapshotMeta = { ...n.snapshot, 'schema-id': n.schema['schema-id'] };
  const all = [...(prev?.snapshots ?? []), snap];
  const now = snap['timestamp-ms'];
  const kept = all.filter((s, i) => s === snap || (i >= all.length - n.keepSnapshots && now - s['timestamp-ms'] <= n.maxSnapshotAgeMs));
  const keptIds = new Set(kept.map((s) => s['snapshot-id']));
  const metadataLog = [
    ...(prev?.['metadata-log'] ?? []),
    ...(n.previousFile && prev ? [{ 'timestamp-ms': prev['last-updated-ms'], 'metadata-file': n.previousFile }] : []),
  ].slice(-n.keepMetadataFiles);
  return {
    'format-version': 2,
    'table-uuid': prev?.['table-uuid'] ?? randomUUID(),
    location: n.location,
    'last-sequence-number': snap['sequence-number'],
    'last-updated-ms': now,
    'last-column-id': Math.max(prev?.['last-column-id'] ?? 0, ...schemas.map(maxFieldId)),
    'current-schema-id': n.schema['schema-id'],
    schemas,
    'default-spec-id': 0,
    'partition-specs': [PARTITION_SPEC],
    'last-partition-id': Math.max(...PARTITION_SPEC.fields.map((f) => f['field-id'])),
    'default-sort-order-id': 0,
    'sort-orders': [{ 'order-id': 0, fields: [] }],
    properties: n.properties,
    'current-snapshot-id': snap['snapshot-id'],
    refs: { main: { 'snapshot-id': snap['snapshot-id'], type: 'branch' } },
    snapshots: kept,
    'snapshot-log': [
      ...(prev?.['snapshot-log'] ?? []).filter((e) => keptIds.has(e['snapshot-id'])),
      { 'timestamp-ms': now, 'snapshot-id': snap['snapshot-id'] },
    ],
    'metadata-log': metadataLog,
  };
}
