// Guarantees: the analysis of what can match leaves a metric's roll-up out only where every read of it
// sits under an AND admitting childless rows alone, judged from the whole tree (type leaves, tests on
// kind-specific columns, has_children) and the facts measured on the data: when the data says a
// workflow span carries a model, or an llm span has children, nothing is left out on their account.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { childlessMatch, metricsWithoutRollUp, possibleTypes, type DataFacts } from '../../src/query/match-facts.js';
import { validateFilters } from '../../src/query/validate-filter.js';

const tree = (t: unknown) => validateFilters({ filter_tree: t }, 'span');
const leaf = (f: Record<string, unknown>) => ({ filter: f });
const type = (value: string | string[], operator = Array.isArray(value) ? 'one_of' : 'eq', case_sensitive?: boolean) =>
  leaf({ type: 'text', column_id: 'type', operator, value, ...(case_sensitive === undefined ? {} : { case_sensitive }) });
const metric = (name: string) => leaf({ type: 'number', column_id: `metrics/${name}`, operator: 'gt', value: 1 });
const tag = leaf({ type: 'collection', column_id: 'tags', operator: 'contains', value: 'x' });
const model = (operator = 'eq') => leaf({ type: 'text', column_id: 'model', operator, value: 'gpt-4o' });
const temperature = leaf({ type: 'number', column_id: 'temperature', operator: 'lt', value: 1 });
const childless = leaf({ type: 'boolean', column_id: 'has_children', value: false });

/** Facts as v2 logging leaves them: kind columns on their kinds only, children under workflow/agent/tool/retriever. */
function facts(over: { withChildren?: string[]; modelOn?: string[] } = {}): DataFacts {
  return {
    typesWith: new Map([
      ['model', new Set(over.modelOn ?? ['llm'])],
      ['temperature', new Set(['llm'])],
      ['tool_call_id', new Set(['tool'])],
    ]),
    typesWithChildren: new Set(over.withChildren ?? ['workflow', 'agent', 'tool', 'retriever']),
  };
}

test('roll-ups are left out only under a restriction to childless rows', () => {
  const cases: [string, unknown, string[]][] = [
    ['metric alone', metric('m'), []],
    ['and with type llm', { and: [type('llm'), metric('m')] }, ['m']],
    ['and with llm or control', { and: [type(['llm', 'control']), metric('m')] }, ['m']],
    ['and with llm or agent', { and: [type(['llm', 'agent']), metric('m')] }, []],
    ['restriction reaches into or and not', { and: [type('llm'), { or: [metric('a'), { not: metric('b') }] }] }, ['a', 'b']],
    ['or beside the type test does not restrict', { or: [type('llm'), metric('m')] }, []],
    ['not of a type test is its complement', { and: [{ not: type(['workflow', 'agent', 'tool', 'retriever']) }, metric('m')] }, ['m']],
    ['ne and not_in are complements', { and: [type(['workflow', 'agent', 'tool', 'retriever'], 'not_in'), metric('m')] }, ['m']],
    ['a not over other tests restricts nothing', { and: [{ not: { and: [type('workflow'), tag] } }, metric('m')] }, []],
    ['one unrestricted use spoils it', { or: [{ and: [type('llm'), metric('m')] }, metric('m')] }, []],
    ['the bench tree', { or: [{ and: [type('llm'), metric('tok')] }, tag] }, ['tok']],
    ['a positive test on model', { and: [model(), metric('q'), tag] }, ['q']],
    ['model nested in an or of kind columns', { and: [{ or: [model(), temperature] }, metric('q')] }, ['q']],
    ['model ne admits every kind', { and: [model('ne'), metric('q')] }, []],
    ['or with an unrestricted branch', { and: [{ or: [model(), tag] }, metric('q')] }, []],
    ['has_children false', { and: [childless, metric('q')] }, ['q']],
    ['has_children true', { and: [leaf({ type: 'boolean', column_id: 'has_children', value: true }), metric('q')] }, []],
    ['case-insensitive type', { and: [type('LLM', 'eq', false), metric('q')] }, ['q']],
    ['type contains', { and: [type('ll', 'contains'), metric('q')] }, ['q']],
  ];
  for (const [name, t, expected] of cases) assert.deepEqual([...metricsWithoutRollUp(tree(t), facts())].sort(), expected, name);
  assert.equal(childlessMatch(tree({ and: [type('llm'), tag] }), facts()), true);
  assert.equal(childlessMatch(tree(tag), facts()), false);
  assert.equal(childlessMatch(null, facts()), false);
  assert.deepEqual([...possibleTypes(tree({ and: [model(), { not: type('llm') }] }), facts())], []);
});

test('facts from the data decide: children under llm spans or a model on workflow spans keep the roll-ups', () => {
  const t = tree({ and: [model(), metric('q')] });
  assert.deepEqual([...metricsWithoutRollUp(t, facts())], ['q']);
  assert.deepEqual([...metricsWithoutRollUp(t, facts({ modelOn: ['llm', 'workflow'] }))], [], 'a workflow with a model can have children');
  assert.deepEqual([...metricsWithoutRollUp(t, facts({ withChildren: ['workflow', 'llm'] }))], [], 'an llm span with children');
  assert.deepEqual([...metricsWithoutRollUp(tree({ and: [type('llm'), metric('q')] }), facts({ withChildren: ['llm'] }))], []);
  assert.equal(childlessMatch(tree({ and: [type('llm'), tag] }), facts({ withChildren: ['llm'] })), false);
  assert.deepEqual([...metricsWithoutRollUp(t, undefined)], [], 'without facts nothing is left out');
  // A column the data never carries on any kind: its positive tests match no row at all.
  assert.deepEqual([...metricsWithoutRollUp(t, facts({ modelOn: [] }))], ['q']);
});
