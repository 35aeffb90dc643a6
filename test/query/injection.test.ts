// Guarantees: hostile values (quotes, %, _, backslashes, SQL keywords, unicode, very long strings,
// JSON-looking keys) only ever travel as parameters: the SQL text never contains them, and queries on
// them return exactly the records that hold them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveColumn } from '../../src/query/columns.js';
import { countQuery, pageKeysQuery, type PlanInput } from '../../src/query/plan.js';
import { compile, raw } from '../../src/query/sql.js';
import { validateFilters } from '../../src/query/validate-filter.js';
import { openStore } from '../support/helpers.js';

const HOSTILE = [
  "O'Brien",
  "'; DROP TABLE mem; --",
  '" OR 1=1 --',
  '100%',
  'a_b',
  '%_%',
  'back\\slash\\',
  '\\%',
  'SELECT * FROM dead',
  '$1',
  '?',
  'ünïcødé ✓ 日本語 🚀',
  '{"json": ["looking", {"key": 1}]}',
  "metrics['x']",
  '\u0000nul',
  'x'.repeat(20_000),
];

function plan(filter: unknown[], sort?: { column_id: string; ascending: boolean }): PlanInput {
  return {
    level: 'span',
    base: () => ({ sql: raw('(SELECT * FROM mem)'), metricColumn: () => 'mx0' }),
    descendants: () => ({ sql: raw('(SELECT * FROM mem)'), metricColumn: () => 'mx0' }),
    filter: validateFilters({ filters: filter }, 'span'),
    sort: sort ? { column: resolveColumn(sort.column_id, 'span')!, ascending: sort.ascending } : null,
    rollUp: () => 'average',
  };
}

test('hostile values and metric names never enter the SQL text', () => {
  for (const v of HOSTILE) {
    const filters = [
      { type: 'text', column_id: 'name', operator: 'eq', value: v },
      { type: 'text', column_id: 'input', operator: 'contains', value: v, case_sensitive: false },
      { type: 'text', column_id: 'model', operator: 'one_of', value: [v, 'b'] },
      { type: 'collection', column_id: 'tags', operator: 'contains', value: v },
      { type: 'id', column_id: 'trace_id', operator: 'eq', value: v },
      { type: 'number', column_id: `metrics/${v}`, operator: 'gt', value: 1 },
    ];
    for (const planned of [
      pageKeysQuery(plan(filters, { column_id: `metrics/${v}`, ascending: false }), 10, 0),
      countQuery(plan(filters)),
    ]) {
      const q = compile(planned.sql);
      if (v.length > 3) assert.ok(!q.text.includes(v), `value leaked into SQL: ${v.slice(0, 40)}`);
      assert.ok(
        q.params.some((p: unknown) => p === v || p === v.toLowerCase() || (Array.isArray(p) && p.includes(v))),
        'value is a parameter',
      );
    }
  }
});

test('queries on hostile values return exactly the records holding them', async (t) => {
  const { store, projectId, logStreamId } = await openStore(t);
  const usable = HOSTILE.filter((v) => !v.includes('\u0000'));
  await store.logTraces(projectId, {
    log_stream_id: logStreamId,
    traces: [
      {
        name: 'hostile',
        spans: usable.map((v, i) => ({ type: 'tool' as const, name: v, input: `in ${v} out`, tags: [v], metrics: { [v]: i } })),
      },
    ],
  });
  for (const sealed of [false, true]) {
    if (sealed) await store.flush();
    for (const [i, v] of usable.entries()) {
      const eq = await store.search('span', projectId, {
        log_stream_id: logStreamId,
        filters: [{ type: 'text', column_id: 'name', operator: 'eq', value: v }],
      });
      assert.deepEqual(
        eq.records.map((r) => r['name']),
        [v],
        `eq ${v.slice(0, 30)}`,
      );
      const tag = await store.count('span', projectId, {
        log_stream_id: logStreamId,
        filters: [{ type: 'collection', column_id: 'tags', operator: 'contains', value: v }],
      });
      assert.equal(tag.total_count, 1, `tag ${v.slice(0, 30)}`);
      const metric = await store.count('span', projectId, {
        log_stream_id: logStreamId,
        filters: [{ type: 'number', column_id: `metrics/${v}`, operator: 'eq', value: i }],
      });
      assert.equal(metric.total_count, 1, `metric key ${v.slice(0, 30)}`);
      // `%` and `_` are literal characters in contains, not wildcards.
      const sub = await store.search('span', projectId, {
        log_stream_id: logStreamId,
        filters: [{ type: 'text', column_id: 'input', operator: 'contains', value: ` ${v} `, case_sensitive: false }],
      });
      assert.deepEqual(
        sub.records.map((r) => r['name']),
        [v],
        `contains ${v.slice(0, 30)}`,
      );
    }
    const sorted = await store.search('span', projectId, {
      log_stream_id: logStreamId,
      sort: { column_id: `metrics/${usable[3]}`, ascending: true },
    });
    assert.equal(sorted.records[0]!['name'], usable[3], 'sort by a hostile metric name');
  }
  // The store is intact after all of it.
  assert.equal((await store.count('span', projectId, { log_stream_id: logStreamId })).total_count, usable.length);
});
