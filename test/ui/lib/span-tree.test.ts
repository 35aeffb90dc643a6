// Guarantees the span tree is built from parent links (orphans, cycles, depth), folds and unfolds, and answers the ARIA tree keys and window arithmetic.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ancestorIds,
  bar,
  buildTree,
  parentIds,
  revealScroll,
  treeKey,
  visibleRows,
  windowRange,
  type SpanLite,
} from '../../../src/ui/lib/span-tree.js';

const span = (id: string, parentId: string | null, start: number, step = 0, durationNs: number | null = 1e6): SpanLite => ({
  id,
  parentId,
  type: 'tool',
  name: id,
  start,
  durationNs,
  error: false,
  step,
});
const root = span('T', null, 0, 0, 10e6);

test('children hang under their parents in time order; missing parents and cycles go under the root', () => {
  const t = buildTree(root, [
    span('b', 'T', 5, 2),
    span('a', 'T', 5, 1),
    span('a1', 'a', 6),
    span('x', 'gone', 7),
    span('c1', 'c2', 8),
    span('c2', 'c1', 9),
  ]);
  // c1 -> c2 -> c1: the link that would close the loop (c2's) is the one dropped.
  assert.deepEqual(
    t.root.children.map((n) => n.span.id),
    ['a', 'b', 'x', 'c2'],
  );
  assert.deepEqual(
    t.byId.get('c2')!.children.map((n) => n.span.id),
    ['c1'],
  );
  assert.equal(t.orphans, 2);
  assert.equal(t.byId.get('a1')!.depth, 2);
  assert.deepEqual(ancestorIds(t.byId.get('a1')!), ['a', 'T']);
  assert.equal(t.start, 0);
  assert.equal(t.end, 10);
});

test('while pages are still loading, a span whose parent has not arrived waits (with its subtree) instead of moving later', () => {
  const spans = [span('a', 'T', 1), span('b1', 'b', 3), span('b11', 'b1', 4), span('c', 'T', 5)];
  const partial = buildTree(root, spans, false);
  assert.deepEqual(
    visibleRows(partial.root, new Set()).map((r) => r.node.span.id),
    ['T', 'a', 'c'],
  );
  assert.equal(partial.waiting, 2);
  assert.equal(partial.orphans, 0);
  assert.equal(partial.byId.has('b11'), false);
  const full = buildTree(root, [...spans, span('b', 'T', 2)], false);
  assert.deepEqual(
    visibleRows(full.root, new Set()).map((r) => r.node.span.id),
    ['T', 'a', 'b', 'b1', 'b11', 'c'],
  );
  assert.equal(full.waiting, 0);
  // Loading done and the parent never came: the span is an orphan under the root.
  const done = buildTree(root, spans, true);
  assert.deepEqual(
    done.root.children.map((n) => n.span.id),
    ['a', 'b1', 'c'],
  );
  assert.equal(done.orphans, 1);
});

test('a span that logged no duration covers the time of its descendants; logged durations stay', () => {
  const t = buildTree(span('T', null, 0, 0, null), [
    span('w', 'T', 10, 0, null),
    span('w1', 'w', 12, 0, 3e6),
    span('w2', 'w', 20, 0, 5e6),
    span('x', 'T', 30, 0, 1e6),
    span('leaf', 'T', 40, 0, null),
  ]);
  assert.deepEqual({ ...t.byId.get('w')!.span }, { ...span('w', 'T', 10, 0, 15e6), derived: true });
  assert.equal(t.byId.get('x')!.span.durationNs, 1e6);
  assert.equal(t.byId.get('x')!.span.derived, undefined);
  assert.equal(t.byId.get('leaf')!.span.durationNs, null);
  assert.equal(t.root.span.durationNs, 40e6); // the last span starts at 40 and logged no duration
  assert.equal(t.end, 40);
});

test('a chain 5,000 deep builds and flattens without recursion', () => {
  const spans = Array.from({ length: 5000 }, (_, i) => span(`s${i}`, i === 0 ? 'T' : `s${i - 1}`, i));
  const t = buildTree(root, spans.reverse());
  const rows = visibleRows(t.root, new Set());
  assert.equal(rows.length, 5001);
  assert.equal(rows[5000]!.node.depth, 5000);
});

test('collapsed nodes hide their descendants; rows carry position and set size', () => {
  const t = buildTree(root, [span('a', 'T', 1), span('a1', 'a', 2), span('a2', 'a', 3), span('b', 'T', 4)]);
  assert.deepEqual(
    visibleRows(t.root, new Set()).map((r) => `${r.node.span.id}:${r.pos}/${r.size}`),
    ['T:1/1', 'a:1/2', 'a1:1/2', 'a2:2/2', 'b:2/2'],
  );
  assert.deepEqual(
    visibleRows(t.root, new Set(['a'])).map((r) => r.node.span.id),
    ['T', 'a', 'b'],
  );
  assert.deepEqual(
    visibleRows(t.root, new Set(['T'])).map((r) => r.node.span.id),
    ['T'],
  );
  assert.deepEqual([...parentIds(t)].sort(), ['T', 'a']);
});

test('keys move, fold and unfold as the WAI-ARIA tree pattern says', () => {
  const t = buildTree(root, [span('a', 'T', 1), span('a1', 'a', 2), span('b', 'T', 4)]);
  const open = new Set<string>();
  const rows = visibleRows(t.root, open); // T a a1 b
  assert.deepEqual(treeKey('ArrowDown', rows, 0, open), { kind: 'move', index: 1 });
  assert.deepEqual(treeKey('ArrowDown', rows, 3, open), { kind: 'move', index: 3 });
  assert.deepEqual(treeKey('ArrowUp', rows, 0, open), { kind: 'move', index: 0 });
  assert.deepEqual(treeKey('ArrowRight', rows, 1, open), { kind: 'move', index: 2 }); // open: to the first child
  assert.deepEqual(treeKey('ArrowRight', rows, 2, open), { kind: 'none' }); // a leaf
  assert.deepEqual(treeKey('ArrowLeft', rows, 2, open), { kind: 'move', index: 1 }); // a leaf: to the parent
  assert.deepEqual(treeKey('ArrowLeft', rows, 1, open), { kind: 'collapse', id: 'a', index: 1 });
  assert.deepEqual(treeKey('End', rows, 0, open), { kind: 'move', index: 3 });
  assert.deepEqual(treeKey('Home', rows, 3, open), { kind: 'move', index: 0 });
  assert.deepEqual(treeKey('PageDown', rows, 0, open, 2), { kind: 'move', index: 2 });
  const closed = new Set(['a']);
  assert.deepEqual(treeKey('ArrowRight', visibleRows(t.root, closed), 1, closed), { kind: 'expand', id: 'a' });
  assert.deepEqual(treeKey('*', rows, 1, closed), { kind: 'expand-siblings', ids: ['a'] });
  assert.deepEqual(treeKey('x', rows, 1, open), { kind: 'none' });
});

test('the window covers the viewport plus overscan, and reveal scrolls only when needed', () => {
  assert.deepEqual(windowRange(0, 560, 28, 5000, 10), { start: 0, end: 31 });
  assert.deepEqual(windowRange(28 * 1000, 560, 28, 5000, 10), { start: 990, end: 1031 });
  assert.deepEqual(windowRange(28 * 4990, 560, 28, 5000, 10), { start: 4980, end: 5000 });
  assert.equal(revealScroll(5, 0, 560, 28), null);
  assert.equal(revealScroll(100, 0, 560, 28), 101 * 28 - 560);
  assert.equal(revealScroll(3, 28 * 10, 560, 28), 84);
});

test('bars sit where spans run on the trace timeline, never vanishing', () => {
  assert.deepEqual(bar(span('a', 'T', 5, 0, 2e6), 0, 10), { left: 0.5, width: 0.2 });
  assert.equal(bar(span('a', 'T', 5, 0, null), 0, 10).width, 0.002);
  assert.deepEqual(bar(span('a', 'T', 20, 0, 1e6), 0, 10), { left: 1, width: 0.002 });
});
