// Guarantees: every record column has a field id of its own (ids never shared, nested parts
// included), and segments that seals and merges write carry those ids on every column (metric
// columns `m<id>` too), so readers that match Parquet columns by id (Iceberg) find each one.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { DuckDBInstance } from '../../src/vendor/duckdb.js';
import { fieldIdOf, METRIC_FIELD_BASE, NESTED_FIELD_IDS, RECORD_FIELD_IDS } from '../../src/record/field-ids.js';
import { COLUMN_NAMES } from '../../src/record/record-columns.js';
import { everyKindTrace, openStore } from '../support/helpers.js';

test('every record column has its own field id', () => {
  assert.deepEqual(Object.keys(RECORD_FIELD_IDS).sort(), [...COLUMN_NAMES].sort());
  const all = [...Object.values(RECORD_FIELD_IDS), ...Object.values(NESTED_FIELD_IDS).flatMap((n) => Object.values(n))];
  assert.equal(new Set(all).size, all.length, 'no id is used twice');
  assert.ok(Math.max(...all) < METRIC_FIELD_BASE);
  assert.equal(fieldIdOf('m7'), METRIC_FIELD_BASE + 7);
  assert.equal(fieldIdOf('tag_set'), undefined);
});

async function fieldIds(file: string): Promise<Map<string, number | null>> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    const rows = (await c.runAndReadAll(`SELECT name, field_id FROM parquet_schema('${file}')`)).getRowObjectsJS();
    return new Map(rows.map((r) => [String(r['name']), r['field_id'] === null ? null : Number(r['field_id'])]));
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

test('sealed and merged segments carry the field ids, metric columns included', async (t) => {
  const { store, dir, projectId, logStreamId } = await openStore(t, { autoCompact: false });
  for (const tag of ['a', 'b', 'c', 'd']) {
    await store.logTraces(projectId, { log_stream_id: logStreamId, traces: [everyKindTrace(tag)] as never });
    await store.flush();
  }
  const check = async (what: string) => {
    const files = readdirSync(join(dir, 'records'), { recursive: true })
      .map(String)
      .filter((f) => f.includes('kind=span') && f.endsWith('.parquet'));
    assert.ok(files.length > 0, what);
    for (const f of files) {
      const ids = await fieldIds(join(dir, 'records', f));
      for (const col of COLUMN_NAMES) assert.equal(ids.get(col), RECORD_FIELD_IDS[col], `${what}: ${col} in ${f}`);
      assert.equal(
        ids.get('element'),
        NESTED_FIELD_IDS['tags'] && 'element' in NESTED_FIELD_IDS['tags'] ? NESTED_FIELD_IDS['tags'].element : -1,
      );
      const metrics = [...ids.keys()].filter((n) => /^m\d+$/.test(n));
      assert.ok(metrics.length > 0, `${what}: metric columns in ${f}`);
      for (const m of metrics) assert.equal(ids.get(m), fieldIdOf(m), `${what}: ${m} in ${f}`);
    }
    return files.length;
  };
  assert.equal(await check('sealed'), 4);
  assert.ok((await store.maintenance.compact()).merges > 0);
  assert.equal(await check('merged'), 1);
});
