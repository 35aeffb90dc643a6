// The Iceberg schema of a table of records: the record columns with their field ids
// (record/field-ids.ts), one DOUBLE column per metric named for the metric where the name can be a
// column, the name mapping that lets readers match columns of segments written without field ids, and
// the partition spec (identity on project_id and run_id, which every file holds).
import { METRIC_FIELD_BASE, NESTED_FIELD_IDS, RECORD_FIELD_IDS } from '../record/field-ids.js';
import { RECORD_COLUMNS, type PhysicalColumn, type RecordKind } from '../record/record-columns.js';

export const TABLE_OF: Readonly<Record<RecordKind, string>> = { span: 'spans', trace: 'traces', session: 'sessions' };
export const KINDS: readonly RecordKind[] = ['span', 'trace', 'session'];

export type IcebergType =
  | string
  | { type: 'list'; 'element-id': number; element: string; 'element-required': boolean }
  | { type: 'map'; 'key-id': number; key: string; 'value-id': number; value: string; 'value-required': boolean };

export interface IcebergField {
  readonly id: number;
  readonly name: string;
  readonly required: boolean;
  readonly type: IcebergType;
  readonly doc?: string;
}

export interface IcebergSchema {
  readonly type: 'struct';
  readonly 'schema-id': number;
  readonly fields: readonly IcebergField[];
}

/** A metric column of a table: Iceberg's name for it and the metric it holds. */
export interface MetricColumn {
  readonly id: number;
  readonly metric: string;
  readonly column: string;
}

function typeOf(col: PhysicalColumn): IcebergType {
  const nested = NESTED_FIELD_IDS[col.name];
  switch (col.kind) {
    case 'i64':
      return 'long';
    case 'i32':
      return 'int';
    case 'f64':
      return 'double';
    case 'bool':
      return 'boolean';
    case 'ts':
      // Stored as microseconds without zone (meaning UTC): Iceberg's timestamp, not timestamptz.
      return 'timestamp';
    case 'utf8':
      return 'string';
    case 'tags':
      return { type: 'list', 'element-id': (nested as { element: number }).element, element: 'string', 'element-required': false };
    case 'map_f64':
    case 'map_utf8': {
      const { key, value } = nested as { key: number; value: number };
      return {
        type: 'map',
        'key-id': key,
        key: 'string',
        'value-id': value,
        value: col.kind === 'map_f64' ? 'double' : 'string',
        'value-required': false,
      };
    }
  }
}

export function recordFields(): IcebergField[] {
  return RECORD_COLUMNS.map((col) => {
    const id = RECORD_FIELD_IDS[col.name];
    if (id === undefined) throw new Error(`column ${col.name} has no field id`);
    return { id, name: col.name, required: false, type: typeOf(col) };
  });
}

const PLAIN = /^[a-z_][a-z0-9_]*$/i;

/**
 * Names of metric columns, by metric id: the metric's own name when it is a plain identifier that
 * no record column and no earlier metric (ids ascending, case-insensitively) has taken and that
 * does not look like `m<digits>`, else `m<id>` as in the segments. Ids only grow, so a name once
 * given never changes.
 */
export function metricColumns(metricIds: Readonly<Record<string, number>>, present: ReadonlySet<number>): MetricColumn[] {
  const taken = new Set(RECORD_COLUMNS.map((c) => c.name.toLowerCase()));
  taken.add('tag_set');
  const byId = Object.entries(metricIds).sort((a, b) => a[1] - b[1]);
  const out: MetricColumn[] = [];
  for (const [metric, id] of byId) {
    const plain = PLAIN.test(metric) && !/^m\d+$/i.test(metric) && !taken.has(metric.toLowerCase());
    const column = plain ? metric : `m${id}`;
    taken.add(column.toLowerCase());
    if (present.has(id)) out.push({ id, metric, column });
  }
  return out;
}

export function tableSchema(schemaId: number, metrics: readonly MetricColumn[]): IcebergSchema {
  const fields = [
    ...recordFields(),
    ...metrics.map(
      (m): IcebergField => ({ id: METRIC_FIELD_BASE + m.id, name: m.column, required: false, type: 'double', doc: `metric ${m.metric}` }),
    ),
  ];
  return { type: 'struct', 'schema-id': schemaId, fields };
}

/** The name mapping (`schema.name-mapping.default`): segment column names by field id. */
export function nameMapping(metrics: readonly MetricColumn[]): string {
  const entries: object[] = RECORD_COLUMNS.map((col) => {
    const nested = NESTED_FIELD_IDS[col.name];
    const fields = !nested
      ? undefined
      : 'element' in nested
        ? [{ 'field-id': nested.element, names: ['element'] }]
        : [
            { 'field-id': nested.key, names: ['key'] },
            { 'field-id': nested.value, names: ['value'] },
          ];
    return { 'field-id': RECORD_FIELD_IDS[col.name], names: [col.name], ...(fields ? { fields } : {}) };
  });
  for (const m of metrics) entries.push({ 'field-id': METRIC_FIELD_BASE + m.id, names: [`m${m.id}`] });
  return JSON.stringify(entries);
}

export const PARTITION_FIELDS = [
  { name: 'project_id', transform: 'identity', 'source-id': RECORD_FIELD_IDS['project_id']!, 'field-id': 1000 },
  { name: 'run_id', transform: 'identity', 'source-id': RECORD_FIELD_IDS['run_id']!, 'field-id': 1001 },
] as const;
