// Guarantees: the catalog operators behave as documented in list-match.ts: missing values, empty
// lists, case folding, set semantics of collections, inclusive between, instants for dates, and a
// typed 422 for an operator or value that does not fit the kind.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  boolMatcher,
  collectionMatcher,
  dateMatcher,
  enumMatcher,
  exact,
  idMatcher,
  lower,
  numberMatcher,
  textMatcher,
} from '../../src/catalog/list-match.js';
import { InvalidRequestError } from '../../src/errors.js';

const at = ['body', 'filters', 0];

function rejects(fn: () => unknown, field: 'operator' | 'value'): void {
  assert.throws(fn, (e: unknown) => e instanceof InvalidRequestError && e.issues[0]!.loc.join('.') === `body.filters.0.${field}`);
}

test('text: null never equals and always differs; empty lists; case folding', () => {
  assert.equal(textMatcher('eq', 'a', exact, at)(null), false);
  assert.equal(textMatcher('ne', 'a', exact, at)(null), true);
  assert.equal(textMatcher('contains', '', exact, at)(null), false);
  assert.equal(textMatcher('contains', '', exact, at)('x'), true);
  assert.equal(textMatcher('one_of', [], exact, at)('x'), false);
  assert.equal(textMatcher('not_in', [], exact, at)('x'), true);
  assert.equal(textMatcher('not_in', ['x'], exact, at)(undefined), true);
  assert.equal(textMatcher('one_of', 'x', exact, at)('x'), true, 'one_of takes one string too');
  assert.equal(textMatcher('eq', 'ÄB', lower, at)('äb'), true);
  assert.equal(textMatcher('contains', '%_', exact, at)('100%_sure'), true, 'no wildcard characters');
  rejects(() => textMatcher('eq', ['a'], exact, at), 'value');
  rejects(() => textMatcher('gt', 'a', exact, at), 'operator');
  rejects(() => enumMatcher('contains', 'llm', at), 'operator');
});

test('ids: case-insensitive, eq by default, contains on the id or a second text', () => {
  const id = 'AB12CD34-0000-4000-8000-000000000001';
  assert.equal(idMatcher(undefined, id.toLowerCase(), at)(id), true);
  assert.equal(idMatcher('contains', 'cd34', at)(id), true);
  assert.equal(idMatcher('contains', 'ALICE', at)(id, 'alice@example.com'), true);
  assert.equal(idMatcher('ne', id, at)(null), true);
});

test('numbers: every comparison, inclusive between, refusals', () => {
  const n = (op: string, v: unknown) => numberMatcher(op, v, at);
  assert.deepEqual(
    [n('eq', 2)(2), n('ne', 2)(2), n('gt', 2)(3), n('gte', 2)(2), n('lt', 2)(1), n('lte', 2)(2)],
    [true, false, true, true, true, true],
  );
  assert.deepEqual([1, 2, 3, 4].map(n('between', [2, 3])), [false, true, true, false]);
  assert.equal(n('eq', 2)(null), false);
  assert.equal(n('ne', 2)(null), true);
  rejects(() => n('between', [3, 2]), 'value');
  rejects(() => n('between', 2), 'value');
  rejects(() => n('gt', [1, 2]), 'value');
  rejects(() => n('contains', 1), 'operator');
});

test('dates compare as instants; collections as sets; booleans', () => {
  assert.equal(dateMatcher('eq', '2026-01-01T01:00:00+01:00', at)('2026-01-01T00:00:00.000Z'), true);
  assert.equal(dateMatcher('gt', '2026-01-01T00:00:00Z', at)('2026-01-01T00:00:00.001Z'), true);
  assert.equal(dateMatcher('lt', '2026-01-01T00:00:00Z', at)(null), false);
  rejects(() => dateMatcher('eq', 'not a date', at), 'value');
  const c = (op: string, v: unknown, fold = exact) => collectionMatcher(op, v, fold, at);
  assert.equal(c('eq', ['b', 'a'])(['a', 'b']), true);
  assert.equal(c('eq', 'a')(['a', 'b']), false);
  assert.equal(c('eq', [])(null), true, 'a missing collection is empty');
  assert.equal(c('contains', ['a', 'b'])(['a']), false);
  assert.equal(c('one_of', ['x', 'B'], lower)(['a', 'b']), true);
  assert.equal(c('not_in', ['x'])(null), true);
  rejects(() => c('ne', 'a'), 'operator');
  assert.equal(boolMatcher(undefined, true, at)(true), true);
  assert.equal(boolMatcher('ne', true, at)(false), true);
  rejects(() => boolMatcher('eq', 'true', at), 'value');
});
