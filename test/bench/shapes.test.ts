// Guarantees the shape matrix compares like with like: on a small seeded span set, every shape's
// tracelake answer (count, or the ids of a first page in order) equals its hand-written DuckDB
// query's (benchShapes throws on the first disagreement), including the shapes whose answer needs
// roll-ups, and each reports the steps its plan ran.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { benchShapes } from '../../bench/shapes.js';

test('every shape of the matrix agrees with its hand-written DuckDB query', async () => {
  const r = await benchShapes(4000, 1);
  assert.equal(r.results.length, 116);
  for (const s of r.results) assert.ok(s.steps.length > 0, `${s.name} reports its steps`);
  assert.ok(
    r.results.some((s) => s.steps.includes('roll-up of')),
    'some shapes need roll-ups',
  );
  assert.ok(
    r.results.some((s) => s.name.startsWith('page') && !s.steps.includes('fetch')),
    'pages within the keys need no fetch',
  );
});
