// A run's rows of one kind, as top lists' depths count them: the sum over that partition's segments,
// whether or not some are left out, and for each list of segments as it is (a newer list, a new sum).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { partitionRows, type SegmentEntry } from '../../../src/storage/manifest/manifest.js';

const seg = (file: string, run: string, kind: 'span' | 'trace', rows: number) =>
  ({ file, project_id: 'p', run_id: run, kind, rows }) as unknown as SegmentEntry;

test("a partition's rows are its segments' rows, less those left out, whichever list is asked", () => {
  const first = [seg('a', 'r1', 'span', 100), seg('b', 'r1', 'span', 50), seg('c', 'r1', 'trace', 7), seg('d', 'r2', 'span', 9)];
  const span = { project_id: 'p', run_id: 'r1', kind: 'span' } as const;
  assert.equal(partitionRows(first, span), 150);
  assert.equal(partitionRows(first, { ...span, kind: 'trace' }), 7);
  assert.equal(partitionRows(first, { ...span, run_id: 'r2' }), 9);
  assert.equal(partitionRows(first, { ...span, run_id: 'r3' }), 0);
  assert.equal(partitionRows(first, span, new Set(['a'])), 50);
  // A manifest's next list (a merge replaced two segments by one): its own sums, not the first list's.
  const next = [seg('e', 'r1', 'span', 149), ...first.slice(2)];
  assert.equal(partitionRows(next, span), 149);
  assert.equal(partitionRows(first, span), 150);
});
