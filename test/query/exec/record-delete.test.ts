// Guarantee: the parents a delete leaves without children, found through the segments' child indexes
// (hashes of parent_id and of owners' ids; from the parents' ids or from the deleted rows' seqs alone),
// are exactly those a read of the segments' own columns finds, with children spread over several segments and memory, replaced and deleted children, and
// parents already marked childless.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { childlessByScan, childlessOfLeaves, childlessParents, childlessSettled } from '../../../src/query/exec/record-delete.js';
import type { LogRow } from '../../../src/record/record.js';
import type { Scope } from '../../../src/storage/snapshot/snapshot.js';
import { openRecordStore, ROWS_PROJECT, ROWS_RUN } from '../../support/helpers.js';
import { sql } from '../../../src/query/sql.js';

/** A small deterministic generator (mulberry32). */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const id = (k: number) => `00000000-0000-4000-8000-${String(k).padStart(12, '0')}`;
let clock = 1_700_000_000_000_000;
const row = (k: number, type: string, trace: number, parent: number | null, hasChildren: boolean): LogRow => ({
  seq: 0,
  id: id(k),
  type,
  project_id: ROWS_PROJECT,
  run_id: ROWS_RUN,
  trace_id: id(trace),
  ...(parent === null ? {} : { parent_id: id(parent) }),
  name: `r${k}`,
  created_at: clock++,
  updated_at: 0,
  is_complete: true,
  has_children: hasChildren,
});

test('child indexes find the same childless parents as the segments, memory, dead and marked rows included', {
  timeout: 120_000,
}, async (t) => {
  const { db, store } = await openRecordStore(t);
  const random = rng(17);
  const parentOf = new Map<number, number>();
  let next = 1;
  /** Traces with a root span, some middle spans and leaves; returns the span numbers that have children. */
  const traces = (n: number): { rows: LogRow[]; parents: number[] } => {
    const rows: LogRow[] = [];
    const parents: number[] = [];
    for (let i = 0; i < n; i++) {
      const tr = next++;
      const root = next++;
      rows.push(row(tr, 'trace', tr, null, true), row(root, 'task', tr, tr, true));
      parentOf.set(root, tr);
      parents.push(root);
      for (let m = 0, mids = 1 + Math.floor(random() * 3); m < mids; m++) {
        const mid = next++;
        const leaves = Math.floor(random() * 4);
        rows.push(row(mid, 'chain', tr, root, leaves > 0));
        parentOf.set(mid, root);
        if (leaves > 0) parents.push(mid);
        for (let l = 0; l < leaves; l++) {
          const leaf = next++;
          rows.push(row(leaf, 'llm', tr, mid, false));
          parentOf.set(leaf, mid);
        }
      }
    }
    return { rows, parents };
  };
  const first = traces(40);
  await store.append(first.rows, true);
  await store.seal();
  await store.append(traces(40).rows, true);
  await store.seal();
  // More children of sealed parents, in a third segment and in memory: a parent's children are then spread.
  const extra = (from: number[], k: number): LogRow[] =>
    from.slice(0, k).map((p) => {
      const leaf = next++;
      parentOf.set(leaf, p);
      return row(leaf, 'llm', 1, p, false);
    });
  await store.append(extra(first.parents, 15), true);
  await store.seal();
  await store.append(extra(first.parents.slice(5), 15), true);
  // Replaced children (the old version dead, the new one in memory) and a deleted one.
  const some = [...parentOf.keys()].filter((k) => parentOf.get(k)! > 1).slice(10, 20);
  await store.append(
    some.map((k) => row(k, 'llm', 1, parentOf.get(k)!, false)),
    true,
  );
  const all = async () =>
    store.read((snap) => {
      const src = snap.source({ projectId: ROWS_PROJECT, runId: ROWS_RUN, kinds: ['span'] });
      return db.all(sql`SELECT id, seq, parent_id FROM ${src.sql}`);
    });
  const before = await all();
  // One parent already marked childless (an override) while its rows say has_children.
  const marked = before.find((r) => r['id'] === id(first.parents[3]!))!;
  await store.deleteSeqs([Number(before[7]!['seq'])], [Number(marked['seq'])]);

  const spans = await all();
  const scope: Scope = { projectId: ROWS_PROJECT, runId: ROWS_RUN, kinds: ['span'] };
  let found = 0;
  let kept = 0;
  for (let trial = 0; trial < 12; trial++) {
    // Delete a random share of the spans (from 5% to 60%), as a delete's rows would be.
    const share = 0.05 + trial * 0.05;
    // Every other trial takes all children of the marked parent (it must not be found again).
    const gone = spans.filter((r) => random() < share || (trial % 2 === 1 && r['parent_id'] === marked['id']));
    const goneIds = new Set(gone.map((r) => String(r['id'])));
    const parents = [...new Set(gone.map((r) => r['parent_id']).filter((p): p is string => typeof p === 'string' && !goneIds.has(p)))];
    const seqs = gone.map((r) => Number(r['seq']));
    const [viaIndex, viaScan, viaHashes, viaTable, indexed, viaSettled] = await store.read(async (snap) => [
      (await childlessParents(db, snap, scope, parents, seqs)).sort((a, b) => a - b),
      (await childlessByScan(db, snap, scope, parents, seqs)).sort((a, b) => a - b),
      // From the deleted rows' seqs alone (their parents' hashes come from the indexes).
      (await childlessOfLeaves(db, snap, scope, seqs)).sort((a, b) => a - b),
      // The same seqs read from a temporary table of one connection, as a delete passes them.
      await db.withConnection(async (c) => {
        await c.run(sql`CREATE OR REPLACE TEMP TABLE gone_seqs AS SELECT unnest(${seqs}::BIGINT[]) AS seq`);
        try {
          return (await childlessOfLeaves(c, snap, scope, sql`(SELECT seq FROM gone_seqs)`)).sort((a, b) => a - b);
        } finally {
          await c.run(sql`DROP TABLE gone_seqs`);
        }
      }),
      snap.childIndexes({ ...scope, kinds: ['span', 'trace'] }),
      // Settled first by the rows beside each removed one (leaf-settle.ts), with windows of 1 and 64 rows.
      await db.withConnection(async (c) => {
        await c.run(sql`CREATE OR REPLACE TEMP TABLE gone_seqs AS SELECT unnest(${seqs}::BIGINT[]) AS seq`);
        try {
          const rel = sql`(SELECT seq FROM gone_seqs)`;
          const near = await childlessSettled(c, snap, scope, seqs, rel, 1);
          const wide = await childlessSettled(c, snap, scope, seqs, rel);
          return [near.sort((a, b) => a - b), wide.sort((a, b) => a - b)];
        } finally {
          await c.run(sql`DROP TABLE gone_seqs`);
        }
      }),
    ]);
    assert.ok(indexed !== null && indexed.length === 5, 'every segment has its child index (so it is what was read)');
    assert.deepEqual(viaIndex, viaScan, `trial ${trial}`);
    assert.deepEqual(viaHashes, viaScan, `trial ${trial}, from seqs`);
    assert.deepEqual(viaTable, viaScan, `trial ${trial}, from a table of seqs`);
    assert.deepEqual(viaSettled[0], viaScan, `trial ${trial}, settled within 1 row`);
    assert.deepEqual(viaSettled[1], viaScan, `trial ${trial}, settled within 64 rows`);
    found += viaIndex.length;
    kept += parents.length - viaIndex.length;
  }
  assert.ok(found > 20 && kept > 20, `both answers occur (childless ${found}, kept ${kept})`);
});

test('the parents a delete of leaves leaves childless: children in other segments and memory, dead siblings, trace owners, deleted parents', async (t) => {
  const { db, store } = await openRecordStore(t);
  // Segment 1: trace 100 with span 101 (children 102 here, 103 in segment 2, 104 in memory);
  // trace 110 with span 111 (children 112, and 113 dead before the delete); trace 120 whose only span
  // 121 hangs from the trace itself; trace 130 with span 131 (child 132), both deleted.
  await store.append(
    [
      row(100, 'trace', 100, null, true),
      row(101, 'workflow', 100, 100, true),
      row(102, 'llm', 100, 101, false),
      row(110, 'trace', 110, null, true),
      row(111, 'workflow', 110, 110, true),
      row(112, 'llm', 110, 111, false),
      row(113, 'llm', 110, 111, false),
      row(120, 'trace', 120, null, true),
      row(121, 'llm', 120, 120, false),
      row(130, 'trace', 130, null, true),
      row(131, 'workflow', 130, 130, true),
      row(132, 'llm', 130, 131, false),
    ],
    true,
  );
  await store.seal();
  await store.append([row(103, 'llm', 100, 101, false)], true);
  await store.seal();
  await store.append([row(104, 'llm', 100, 101, false)], true);
  const seqOf = async () =>
    store.read(async (snap) => {
      const src = snap.source({ projectId: ROWS_PROJECT, runId: ROWS_RUN, kinds: ['span', 'trace'] });
      const rows = await db.all(sql`SELECT id, seq FROM ${src.sql}`);
      return new Map(rows.map((r) => [String(r['id']), Number(r['seq'])]));
    });
  const seqs = await seqOf();
  const s = (k: number) => seqs.get(id(k))!;
  await store.deleteSeqs([s(113)], []);
  const scope: Scope = { projectId: ROWS_PROJECT, runId: ROWS_RUN, kinds: ['span'] };
  const childless = (gone: number[]) =>
    store.read(async (snap) => {
      assert.equal(snap.childIndexes({ ...scope, kinds: ['span', 'trace'] })?.length, 3, 'sealed rows are read through their indexes');
      return (await childlessOfLeaves(db, snap, scope, gone.map(s))).sort((a, b) => a - b);
    });
  const expect = (ks: number[]) => ks.map(s).sort((a, b) => a - b);
  // 101 keeps 103 (another segment) and 104 (memory); 111's other child is dead; 121's owner is a trace.
  assert.deepEqual(await childless([102, 112, 121]), expect([111, 120]));
  assert.deepEqual(await childless([102, 103]), [], 'the child in memory is left');
  assert.deepEqual(await childless([102, 104]), [], 'the child in another segment is left');
  assert.deepEqual(await childless([102, 103, 104]), expect([101]));
  assert.deepEqual(await childless([104]), []);
  // A parent deleted with its child is not marked; its own parent (the trace) is.
  assert.deepEqual(await childless([131, 132]), expect([130]));
});
