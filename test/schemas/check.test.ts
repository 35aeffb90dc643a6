import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Type } from '../../src/vendor/typebox.js';
import { InvalidRequestError } from '../../src/errors.js';
import { assertValid, issuesOf, markChecked, MAX_NESTING } from '../../src/schemas/check.js';

const Body = Type.Object({ metadata: Type.Unknown() });

/** `{metadata: [[...]]}` whose innermost list sits `levels` steps below the body. */
function nested(levels: number): { metadata: unknown } {
  let v: unknown = [];
  for (let i = 1; i < levels; i++) v = [v];
  return { metadata: v };
}

test('a body nested up to the limit passes and one level more is refused at its field', () => {
  assert.equal(issuesOf(Body, nested(MAX_NESTING - 1)), null);
  const issues = issuesOf(Body, nested(MAX_NESTING));
  assert.ok(issues);
  assert.deepEqual(issues[0]!.loc, ['body', 'metadata']);
  assert.equal(issues[0]!.type, 'too_deep');
});

test('depth counts along each branch, not across siblings', () => {
  const wide = { metadata: Array.from({ length: 5000 }, () => ({ a: [{ b: 1 }] })) };
  assert.equal(issuesOf(Body, wide), null);
  const deepInside = { metadata: [...wide.metadata, nested(MAX_NESTING).metadata] };
  assert.deepEqual(issuesOf(Body, deepInside)?.[0]?.loc, ['body', 'metadata']);
});

test('a body the server marked as checked against a schema is taken as valid once, and only for that schema', () => {
  const Named = Type.Object({ name: Type.String() });
  const bad = { name: 42 };
  markChecked(Named, bad);
  // Taken as checked: no second walk of the body (the mark stands for the route's check).
  assert.doesNotThrow(() => assertValid(Named, bad));
  // The mark is used up: a second call checks the body.
  assert.throws(() => assertValid(Named, bad), InvalidRequestError);
  markChecked(Body, bad);
  // A mark for another schema does not count.
  assert.throws(() => assertValid(Named, bad), InvalidRequestError);
});
