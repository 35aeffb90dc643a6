// Guarantees: metric columns are named for their metrics where the name can be a column (never
// clashing with a record column, another metric or the `m<id>` form) and keep that name as metrics
// are added; the name mapping maps segment column names to field ids; metadata keeps the newest
// snapshots by count and age, always the current one, and grows the schema only when its fields change.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { METRIC_FIELD_BASE } from '../../src/record/field-ids.js';
import { nextMetadata, resolveSchema, type TableMetadata } from '../../src/iceberg/metadata.js';
import { metricColumns, nameMapping, tableSchema } from '../../src/iceberg/schema.js';

test('metric columns: the metric name where it can be one, else m<id>; stable as metrics are added', () => {
  const ids = { num_input_tokens: 0, name: 1, 'Cost ($)': 2, cost: 3, COST: 4, m9: 5, tool_calls: 6 };
  const all = new Set(Object.values(ids));
  const cols = Object.fromEntries(metricColumns(ids, all).map((m) => [m.metric, m.column]));
  assert.deepEqual(cols, {
    num_input_tokens: 'num_input_tokens',
    name: 'm1',
    'Cost ($)': 'm2',
    cost: 'cost',
    COST: 'm4',
    m9: 'm5',
    tool_calls: 'tool_calls',
  });
  const later = Object.fromEntries(metricColumns({ ...ids, extra_metric: 7 }, new Set([...all, 7])).map((m) => [m.metric, m.column]));
  for (const [metric, column] of Object.entries(cols)) assert.equal(later[metric], column, metric);
  assert.deepEqual(
    metricColumns(ids, new Set([3])).map((m) => m.column),
    ['cost'],
    'only metrics present in the table',
  );
  const schema = tableSchema(0, metricColumns(ids, new Set([3])));
  assert.deepEqual(schema.fields.at(-1), { id: METRIC_FIELD_BASE + 3, name: 'cost', required: false, type: 'double', doc: 'metric cost' });
  const mapping = JSON.parse(nameMapping(metricColumns(ids, new Set([3])))) as {
    'field-id': number;
    names: string[];
    fields?: unknown[];
  }[];
  assert.deepEqual(mapping.at(-1), { 'field-id': METRIC_FIELD_BASE + 3, names: ['m3'] });
  assert.deepEqual(mapping.find((m) => m.names[0] === 'tags')?.fields, [{ 'field-id': 101, names: ['element'] }]);
});

test('metadata keeps the newest snapshots by count and age, and the schema only grows', () => {
  const schema = tableSchema(0, []);
  let meta: TableMetadata | null = null;
  const day = 86_400_000;
  const t0 = 1_800_000_000_000;
  for (let i = 1; i <= 5; i++) {
    const s = resolveSchema(meta, i < 4 ? schema : tableSchema(0, [{ id: 0, metric: 'cost', column: 'cost' }]));
    meta = nextMetadata(meta, {
      location: 'file:///t/spans',
      schema: s,
      properties: {},
      snapshot: {
        'snapshot-id': i,
        'sequence-number': i,
        'timestamp-ms': t0 + i * day,
        'manifest-list': `l${i}`,
        summary: { operation: 'overwrite' },
      },
      previousFile: i === 1 ? null : `v${i - 1}`,
      keepSnapshots: 3,
      maxSnapshotAgeMs: 10 * day,
      keepMetadataFiles: 2,
    });
  }
  assert.deepEqual(
    meta!.snapshots.map((s) => s['snapshot-id']),
    [3, 4, 5],
    'the newest three',
  );
  assert.deepEqual(
    meta!.schemas.map((s) => s['schema-id']),
    [0, 1],
    'a new schema once, when a metric appeared',
  );
  assert.equal(meta!['current-schema-id'], 1);
  assert.deepEqual(
    meta!['metadata-log'].map((e) => e['metadata-file']),
    ['v3', 'v4'],
  );
  const aged = nextMetadata(meta, {
    location: 'file:///t/spans',
    schema: resolveSchema(meta, tableSchema(0, [{ id: 0, metric: 'cost', column: 'cost' }])),
    properties: {},
    snapshot: {
      'snapshot-id': 6,
      'sequence-number': 6,
      'timestamp-ms': t0 + 100 * day,
      'manifest-list': 'l6',
      summary: { operation: 'overwrite' },
    },
    previousFile: 'v5',
    keepSnapshots: 3,
    maxSnapshotAgeMs: 10 * day,
    keepMetadataFiles: 2,
  });
  assert.deepEqual(
    aged.snapshots.map((s) => s['snapshot-id']),
    [6],
    'older than the age limit: only the current one stays',
  );
  assert.equal(aged['current-snapshot-id'], 6);
  assert.deepEqual(aged.refs, { main: { 'snapshot-id': 6, type: 'branch' } });
});
