// Guarantees: the roll-up analysis skips a metric's roll-up only where every use of it is ANDed with a
// `type` test that admits llm or control spans alone (spans that never have descendants).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { metricsWithoutRollUp, onlyChildless } from '../../src/query/filter-ast.js';
import { validateFilters } from '../../src/query/validate-filter.js';

const tree = (t: unknown) => validateFilters({ filter_tree: t }, 'span');
const leaf = (f: Record<string, unknown>) => ({ filter: f });
const type = (value: string | string[], operator = Array.isArray(value) ? 'one_of' : 'eq') => leaf({ type: 'text', column_id: 'type', operator, value });
const metric = (name: string) => leaf({ type: 'number', column_id: `metrics/${name}`, operator: 'gt', value: 1 });
const tag = leaf({ type: 'collection', column_id: 'tags', operator: 'contains', value: 'x' });

test('roll-ups are skipped only under a childless type restriction', () => {
  const cases: [string, unknown, string[]][] = [
    ['metric alone', metric('m'), []],
    ['and with type llm', { and: [type('llm'), metric('m')] }, ['m']],
    ['and with llm or control', { and: [type(['llm', 'control']), metric('m')] }, ['m']],
    ['and with llm or agent', { and: [type(['llm', 'agent']), metric('m')] }, []],
    ['restriction reaches into or and not', { and: [type('llm'), { or: [metric('a'), { not: metric('b') }] }] }, ['a', 'b']],
    ['or beside the type test does not restrict', { or: [type('llm'), metric('m')] }, []],
    ['a type test inside not restricts nothing', { and: [{ not: type('llm') }, metric('m')] }, []],
    ['one unrestricted use spoils it', { or: [{ and: [type('llm'), metric('m')] }, metric('m')] }, []],
    ['the bench tree', { or: [{ and: [type('llm'), metric('tok')] }, tag] }, ['tok']],
  ];
  for (const [name, t, expected] of cases) assert.deepEqual([...metricsWithoutRollUp(tree(t))].sort(), expected, name);
  assert.equal(onlyChildless(tree({ and: [type('llm'), tag] })), true);
  assert.equal(onlyChildless(tree(tag)), false);
  assert.equal(onlyChildless(null), false);
});
