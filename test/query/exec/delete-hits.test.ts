// Guarantees: a span delete whose filter the value index serves finds its matches there (the plan
// says so) and removes exactly what a store without value indexes removes, marking the same parents
// childless: over several segments, with dead rows from an earlier delete, rows still in memory, a
// metric test, a filter that matches parents (then the general path), and a row file of an earlier
// version (no has_children bits: that segment is read by the statement until it is rebuilt). A match
// stored with children is a leaf when it is marked childless, and no match when it is dead.
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { generateBatches } from '../../support/generator.js';
import { openStore, type StoreFixture } from '../../support/helpers.js';

const text = (column_id: string, operator: string, value: unknown) => ({ type: 'text', column_id, operator, value });
const tags = (value: string) => ({ type: 'collection', column_id: 'tags', operator: 'contains', value });
const num = (column_id: string, operator: string, value: number) => ({ type: 'number', column_id, operator, value });

/** Every span and trace as id and has_children, in id order: the state two stores must share. */
async function state(fx: StoreFixture): Promise<string> {
  const spans = await fx.store.data.sql('SELECT id, has_children FROM spans ORDER BY id');
  const traces = await fx.store.data.sql('SELECT id, has_children FROM traces ORDER BY id');
  return JSON.stringify({ spans, traces });
}

test('deletes found in value indexes remove and mark what a read of every row does', { timeout: 240_000 }, async (t) => {
  const steps: string[][] = [];
  const indexed = await openStore(t, { autoCompact: false, valueIndexMinRows: 0, onPlan: (s) => steps.push([...s]) });
  const plain = await openStore(t, { autoCompact: false, valueIndexMinRows: Number.POSITIVE_INFINITY });
  const batches = [...generateBatches({ spans: 4000, batchSpans: 500, seed: 43 })];
  for (const fx of [indexed, plain]) {
    // A segment every two batches.
    for (const [i, b] of batches.entries()) {
      await fx.store.logTraces(fx.projectId, { log_stream_id: fx.logStreamId, traces: b as never });
      if (i % 2 === 1) await fx.store.flush();
    }
  }
  /** The delete in both stores; its count, and how the indexed store found the matches. */
  const del = async (filters: unknown[]) => {
    const out = [];
    steps.length = 0;
    for (const fx of [indexed, plain])
      out.push(await fx.store.records.delete('span', fx.projectId, { log_stream_id: fx.logStreamId, filters } as never));
    assert.deepEqual(out[0], out[1], `${JSON.stringify(filters)}: the same counts`);
    assert.equal(await state(indexed), await state(plain), `${JSON.stringify(filters)}: the same rows and has_children`);
    return { deleted: out[0]!.deleted, how: steps.flat().find((s) => s.startsWith('delete')) ?? '' };
  };
  const first = await del([text('type', 'eq', 'llm'), tags('prod')]);
  assert.ok(first.deleted > 0);
  assert.match(first.how, /^delete of leaves: matches of 4 segments from value indexes$/);
  // Dead rows now in every segment; another tag.
  const second = await del([text('type', 'eq', 'llm'), tags('staging')]);
  assert.ok(second.deleted > 0);
  assert.match(second.how, /from value indexes/);
  // A metric test, with rows in memory beside the segments.
  for (const fx of [indexed, plain]) await fx.store.logTraces(fx.projectId, { log_stream_id: fx.logStreamId, traces: batches[0] as never });
  const third = await del([text('type', 'eq', 'tool'), num('metrics/duration_ns', 'gt', 1_000_000)]);
  assert.ok(third.deleted > 0);
  assert.match(third.how, /from value indexes/);
  // Matches with children: the general path, the same answer.
  const parents = await del([text('type', 'eq', 'workflow'), tags('rag')]);
  assert.ok(parents.deleted > 0);
  assert.equal(parents.how, 'delete: matches and their subtrees read from the records');
});

test('a row file of the earlier version leaves its segment to the statement, with the same answer', { timeout: 120_000 }, async (t) => {
  const steps: string[][] = [];
  const indexed = await openStore(t, { autoCompact: false, valueIndexMinRows: 0, onPlan: (s) => steps.push([...s]) });
  const plain = await openStore(t, { autoCompact: false, valueIndexMinRows: Number.POSITIVE_INFINITY });
  const batches = [...generateBatches({ spans: 1500, batchSpans: 500, seed: 44 })];
  for (const fx of [indexed, plain])
    for (const b of batches) {
      await fx.store.logTraces(fx.projectId, { log_stream_id: fx.logStreamId, traces: b as never });
      await fx.store.flush();
    }
  // One row file stamped as the first version: its header no longer agrees, so it is not used.
  const files = readdirSync(indexed.dir, { recursive: true, encoding: 'utf8' }).filter((f) => /kind=span\/.*\.kidrows$/.test(f));
  assert.ok(files.length >= 3, files.join());
  const old = join(indexed.dir, files[0]!);
  const bytes = readFileSync(old);
  bytes.write('TLKROWS1', 0, 'latin1');
  writeFileSync(old, bytes);
  const filters = [text('type', 'eq', 'llm'), tags('beta')];
  const out = [];
  for (const fx of [indexed, plain])
    out.push(await fx.store.records.delete('span', fx.projectId, { log_stream_id: fx.logStreamId, filters } as never));
  assert.ok(out[0]!.deleted > 0);
  assert.deepEqual(out[0], out[1]);
  assert.equal(await state(indexed), await state(plain));
  assert.equal(
    steps.flat().find((s) => s.startsWith('delete')),
    `delete of leaves: matches of ${files.length - 1} segments from value indexes`,
  );
});

test('a match stored with children takes the leaf path when it is marked childless or dead', { timeout: 120_000 }, async (t) => {
  const steps: string[][] = [];
  const indexed = await openStore(t, { autoCompact: false, valueIndexMinRows: 0, onPlan: (s) => steps.push([...s]) });
  const plain = await openStore(t, { autoCompact: false, valueIndexMinRows: Number.POSITIVE_INFINITY });
  const id = (k: number) => `00000000-0000-4000-8000-${String(k).padStart(12, '0')}`;
  /** Trace k: a workflow span (with one child tagged `gone-k` when `child`) and a tool span beside it. */
  const trace = (k: number, child: boolean) => ({
    id: id(100 + k),
    name: `t${k}`,
    spans: [
      {
        id: id(200 + k),
        type: 'workflow',
        name: `w${k}`,
        ...(child ? { spans: [{ id: id(300 + k), type: 'tool', name: `c${k}`, tags: [`gone-${k}`] }] } : {}),
      },
      { id: id(400 + k), type: 'tool', name: `x${k}` },
    ],
  });
  const del = async (filters: unknown[]) => {
    const out = [];
    steps.length = 0;
    for (const fx of [indexed, plain])
      out.push(await fx.store.records.delete('span', fx.projectId, { log_stream_id: fx.logStreamId, filters } as never));
    assert.deepEqual(out[0], out[1], JSON.stringify(filters));
    assert.equal(await state(indexed), await state(plain), JSON.stringify(filters));
    return { deleted: out[0]!.deleted, how: steps.flat().find((s) => s.startsWith('delete')) ?? '' };
  };
  const log = async (traces: unknown[]) => {
    for (const fx of [indexed, plain]) {
      await fx.store.logTraces(fx.projectId, { log_stream_id: fx.logStreamId, traces } as never);
      await fx.store.flush();
    }
  };
  await log([trace(1, true), trace(2, true)]);
  // Trace 1's workflow loses its child: marked childless, its stored has_children still true.
  assert.equal((await del([tags('gone-1')])).deleted, 1);
  // Trace 2 logged again without the child: the stored version with children is dead.
  await del([tags('gone-2')]);
  await log([trace(2, false)]);
  const both = await del([text('type', 'eq', 'workflow'), text('name', 'one_of', ['w1', 'w2'])]);
  assert.equal(both.deleted, 2);
  assert.match(both.how, /^delete of leaves: matches of \d+ segments from value indexes$/);
  // A live one with children: the general path.
  await log([trace(3, true)]);
  const parent = await del([text('type', 'eq', 'workflow')]);
  assert.equal(parent.deleted, 2, 'the workflow span and its child');
  assert.equal(parent.how, 'delete: matches and their subtrees read from the records');
});
