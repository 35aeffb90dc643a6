// Guarantees the filter builder turns into the API's filter_tree and back without loss, with each column type's operators and values.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  countConditions,
  describeFilter,
  fromFilterTree,
  newCond,
  newGroup,
  operatorsFor,
  toFilterTree,
  type Cond,
  type Group,
} from '../../../src/ui/lib/filters.js';
import type { ColumnInfo } from '../../../src/ui/lib/types.js';

const COLUMNS: ColumnInfo[] = [
  { id: 'name', category: 'standard', data_type: 'text', filter_type: 'text', label: 'Name' },
  { id: 'tags', category: 'standard', data_type: 'string_list', filter_type: 'collection', label: 'Tags' },
  { id: 'created_at', category: 'standard', data_type: 'timestamp', filter_type: 'date', label: 'Created At' },
  { id: 'has_children', category: 'standard', data_type: 'boolean', filter_type: 'boolean' },
  { id: 'session_id', category: 'standard', data_type: 'uuid', filter_type: 'id' },
  {
    id: 'metrics/duration_ns',
    category: 'metric',
    data_type: 'floating_point',
    filter_type: 'number',
    data_unit: 'nano_seconds',
    label: 'Duration Ns',
  },
  { id: 'metrics/correctness', category: 'metric', data_type: 'floating_point', filter_type: 'number', label: 'Correctness' },
];
const byId = new Map(COLUMNS.map((c) => [c.id, c]));
const cond = (column: string, operator: string, value: string, extra: Partial<Cond> = {}): Cond => ({
  ...newCond(byId.get(column)!),
  operator,
  value,
  ...extra,
});

test('operators follow each column filter_type', () => {
  assert.deepEqual(
    operatorsFor(byId.get('name'))
      .map((o) => o.op)
      .sort(),
    ['contains', 'eq', 'ne', 'not_in', 'one_of'],
  );
  assert.deepEqual(
    operatorsFor(byId.get('tags'))
      .map((o) => o.op)
      .sort(),
    ['contains', 'eq', 'not_in', 'one_of'],
  );
  assert.deepEqual(
    operatorsFor(byId.get('metrics/correctness'))
      .map((o) => o.op)
      .sort(),
    ['between', 'eq', 'gt', 'gte', 'lt', 'lte', 'ne'],
  );
  assert.deepEqual(
    operatorsFor(byId.get('has_children')).map((o) => o.op),
    ['eq', 'ne'],
  );
  assert.deepEqual(
    operatorsFor(byId.get('created_at'))
      .map((o) => o.op)
      .sort(),
    ['eq', 'gt', 'gte', 'lt', 'lte', 'ne'],
  );
});

test('a builder with and/or/not groups becomes filter_tree, and comes back the same', () => {
  const inner: Group = { ...newGroup('or', [cond('tags', 'one_of', 'a, b ,c'), cond('has_children', 'eq', 'false')]), negate: true };
  const root = newGroup('and', [
    cond('name', 'contains', 'Chat', { caseSensitive: false }),
    cond('metrics/duration_ns', 'between', '1.5', { value2: '200' }),
    cond('created_at', 'gte', '2026-11-20T09:00:00'),
    cond('session_id', 'eq', 'abc'),
    inner,
  ]);
  const { tree, errors } = toFilterTree(root, byId);
  assert.deepEqual(errors, []);
  assert.deepEqual(tree, {
    and: [
      { filter: { type: 'text', column_id: 'name', operator: 'contains', value: 'Chat', case_sensitive: false } },
      { filter: { type: 'number', column_id: 'metrics/duration_ns', operator: 'between', value: [1_500_000, 200_000_000] } },
      { filter: { type: 'date', column_id: 'created_at', operator: 'gte', value: new Date('2026-11-20T09:00:00').toISOString() } },
      { filter: { type: 'id', column_id: 'session_id', operator: 'eq', value: 'abc' } },
      {
        not: {
          or: [
            { filter: { type: 'collection', column_id: 'tags', operator: 'one_of', value: ['a', 'b', 'c'] } },
            { filter: { type: 'boolean', column_id: 'has_children', operator: 'eq', value: false } },
          ],
        },
      },
    ],
  });
  // From the URL's tree back to a builder, then to a tree again: the same tree.
  const again = toFilterTree(fromFilterTree(JSON.parse(JSON.stringify(tree)), byId), byId);
  assert.deepEqual(again.tree, tree);
  assert.equal(countConditions(tree), 6);
});

test('trees of other shapes are read: a bare leaf, a not at the root, name instead of column_id', () => {
  const leaf = { filter: { type: 'text', name: 'name', operator: 'eq', value: 'x' } };
  const g = fromFilterTree(leaf, byId);
  assert.equal(g.children.length, 1);
  assert.deepEqual(toFilterTree(g, byId).tree, { and: [{ filter: { type: 'text', column_id: 'name', operator: 'eq', value: 'x' } }] });
  const negated = fromFilterTree({ not: leaf }, byId);
  assert.equal(negated.negate, true);
  assert.deepEqual(toFilterTree(negated, byId).tree, {
    not: { and: [{ filter: { type: 'text', column_id: 'name', operator: 'eq', value: 'x' } }] },
  });
  assert.deepEqual(fromFilterTree({ bogus: 1 }, byId).children, []);
});

test('values that are not what the type needs are reported, and nothing is applied', () => {
  const built = toFilterTree(
    newGroup('and', [cond('metrics/correctness', 'gt', 'high'), cond('created_at', 'lt', 'soon'), cond('name', 'eq', '')]),
    byId,
  );
  assert.equal(built.tree, null);
  assert.equal(built.errors.length, 3);
  assert.deepEqual(toFilterTree(newGroup(), byId), { tree: null, errors: [] });
});

test('a filter reads as one line, durations in ms', () => {
  const tree = {
    and: [
      { filter: { type: 'text', column_id: 'name', operator: 'contains', value: 'chat' } },
      { not: { filter: { type: 'number', column_id: 'metrics/duration_ns', operator: 'gt', value: 5e6 } } },
    ],
  };
  assert.equal(describeFilter(tree, byId), 'Name contains "chat" and not (Duration Ns > 5 ms)');
});
