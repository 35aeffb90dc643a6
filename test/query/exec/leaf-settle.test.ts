// Guarantee: settling a delete's parents by the neighbours of its rows in row order (the child
// indexes' row files) marks exactly the parents the store-wide statement marks: a parent whose only
// other child lies in another segment, in memory or beyond the window is left to the statement; a
// sibling dead already or removed by the same delete keeps nothing; a parent removed with its
// children is not marked; a parent that is a trace is.
import assert from 'node:assert/strict';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { deadSeqsOf, settleLocally } from '../../../src/query/exec/leaf-settle.js';
import { childRowsHeader } from '../../../src/storage/indexes/child-index.js';
import { childlessByScan, childlessOfLeaves, childlessSettled } from '../../../src/query/exec/record-delete.js';
import type { LogRow } from '../../../src/record/record.js';
import type { Scope } from '../../../src/storage/snapshot/snapshot.js';
import { openRecordStore, ROWS_PROJECT, ROWS_RUN } from '../../support/helpers.js';
import { sql } from '../../../src/query/sql.js';
import { seededRandom } from '../../support/seeded.js';

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

const sortedLeft = (u: { hashes: bigint[]; rest: number[] }) => ({
  hashes: [...u.hashes].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
  rest: [...u.rest].sort((a, b) => a - b),
});

test('local settling: the parents marked equal the statement alone, case by case', { timeout: 120_000 }, async (t) => {
  const { db, store } = await openRecordStore(t);
  // Segment 1, in row order: trace 100, span 101 (children 102 here, 103 in segment 2, 104 in memory);
  // trace 110, span 111 (children 112 and 113, 113 dead before the delete); trace 120 whose only span
  // 121 hangs from the trace; trace 130, span 131 (child 132); trace 140, span 141 with children 142
  // and 143 side by side; trace 150, span 151 with child 152, ten unrelated spans, then child 153.
  const far = Array.from({ length: 10 }, (_, i) => row(160 + i, 'tool', 150, 150, false));
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
      row(140, 'trace', 140, null, true),
      row(141, 'workflow', 140, 140, true),
      row(142, 'llm', 140, 141, false),
      row(143, 'llm', 140, 141, false),
      row(150, 'trace', 150, null, true),
      row(151, 'workflow', 150, 150, true),
      row(152, 'llm', 150, 151, false),
      ...far,
      row(153, 'llm', 150, 151, false),
    ],
    true,
  );
  await store.seal();
  await store.append([row(103, 'llm', 100, 101, false)], true);
  await store.seal();
  await store.append([row(104, 'llm', 100, 101, false), row(105, 'workflow', 100, 100, true), row(106, 'llm', 100, 105, false)], true);
  const seqs = await store.read(async (snap) => {
    const src = snap.source({ projectId: ROWS_PROJECT, runId: ROWS_RUN, kinds: ['span', 'trace'] });
    const rows = await db.all(sql`SELECT id, seq FROM ${src.sql}`);
    return new Map(rows.map((r) => [String(r['id']), Number(r['seq'])]));
  });
  const s = (k: number) => seqs.get(id(k))!;
  await store.deleteSeqs([s(113)], []);
  const scope: Scope = { projectId: ROWS_PROJECT, runId: ROWS_RUN, kinds: ['span'] };
  /** The parents marked, through local settling (window given) and through the statement alone; and what settling left. */
  const ask = (ks: number[], window?: number) =>
    store.read((snap) =>
      db.withConnection(async (c) => {
        const gone = ks.map(s);
        await c.run(sql`CREATE OR REPLACE TEMP TABLE gone_seqs AS SELECT unnest(${gone}::BIGINT[]) AS seq`);
        try {
          const rel = sql`(SELECT seq FROM gone_seqs)`;
          const settled = (await childlessSettled(c, snap, scope, gone, rel, window)).sort((a, b) => a - b);
          const alone = (await childlessOfLeaves(c, snap, scope, gone)).sort((a, b) => a - b);
          const left = await settleLocally(c, snap, scope, gone, window);
          // Read a few rows at a time, the row files settle the same matches the same way.
          for (const chunk of [1, 2, 5]) {
            const small = await settleLocally(c, snap, scope, gone, window, chunk);
            assert.deepEqual(sortedLeft(small!), sortedLeft(left!), `chunks of ${chunk} rows`);
          }
          return { settled, alone, left: left! };
        } finally {
          await c.run(sql`DROP TABLE gone_seqs`);
        }
      }),
    );
  const expect = (ks: number[]) => ks.map(s).sort((a, b) => a - b);
  const check = async (ks: number[], want: number[], unsettled: number, what: string, window?: number) => {
    const r = await ask(ks, window);
    assert.deepEqual(r.settled, expect(want), `${what}: settled`);
    assert.deepEqual(r.alone, expect(want), `${what}: the statement alone`);
    assert.equal(r.left.hashes.length, unsettled, `${what}: parents left to the statement`);
  };
  await check([102], [], 1, 'the other children are in another segment and in memory');
  await check([102, 103], [], 1, 'the child in memory is left');
  await check([102, 103, 104], [101], 1, 'every child removed');
  await check([112], [111], 1, 'the only neighbour with the parent is dead');
  await check([121], [120], 1, 'a trace is the parent');
  await check([142], [], 0, 'the sibling beside keeps the parent');
  await check([142, 143], [141], 1, 'a sibling removed by the same delete keeps nothing');
  await check([131, 132], [130], 2, 'a parent removed with its child is not marked; its trace is');
  await check([152], [], 0, 'a sibling 11 rows away, within the default window');
  await check([152], [], 1, 'a sibling beyond a window of 4 rows', 4);
  await check([152, 153], [151], 1, 'both children, the unrelated rows between');
  await check([106], [105], 0, 'a row in memory whose parent is in memory');
  const mem = await ask([104]);
  assert.deepEqual(mem.left.rest, [s(104)], 'a row in memory is left to the statement');
  assert.deepEqual(mem.settled, []);
  // The answers agree with a read of the segments' own columns too.
  const byScan = await store.read((snap) => childlessByScan(db, snap, scope, [id(101), id(111)], [s(102), s(103), s(104), s(112)]));
  assert.deepEqual(
    byScan.sort((a, b) => a - b),
    expect([101, 111]),
  );
});

test('local settling without row files (a store of an earlier version before its open) asks the statement for every parent', async (t) => {
  const { db, store, dir } = await openRecordStore(t);
  await store.append(
    [
      row(200, 'trace', 200, null, true),
      row(201, 'task', 200, 200, true),
      row(202, 'llm', 200, 201, false),
      row(203, 'llm', 200, 201, false),
    ],
    true,
  );
  await store.seal();
  const walk = (d: string): string[] =>
    readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : [join(d, e.name)]));
  const rowFiles = walk(join(dir, 'records')).filter((f) => f.endsWith('.kidrows'));
  assert.equal(rowFiles.length, 2, 'one row file per segment (span and trace)');
  for (const f of rowFiles) rmSync(f);
  const scope: Scope = { projectId: ROWS_PROJECT, runId: ROWS_RUN, kinds: ['span'] };
  const r = await store.read(async (snap) => {
    const src = snap.source({ ...scope, kinds: ['span'] });
    const seq = Number((await db.all(sql`SELECT seq FROM ${src.sql} WHERE name = 'r202'`))[0]!['seq']);
    return db.withConnection(async (c) => ({
      left: await settleLocally(c, snap, scope, [seq]),
      settled: await childlessSettled(c, snap, scope, [seq], sql`(SELECT ${seq}::BIGINT AS seq)`),
    }));
  });
  assert.equal(r.left?.hashes.length, 0);
  assert.equal(r.left?.rest.length, 1, 'the match is left to the statement');
  assert.deepEqual(r.settled, [], '203 keeps the parent');
});

test('a removed span whose children a delete took earlier: its id, repeated in another run, is not marked by a project-wide delete', async (t) => {
  const { db, store } = await openRecordStore(t);
  const other = '00000000-0000-4000-8000-0000000000ff';
  const inRun = (r: LogRow, run: string): LogRow => ({ ...r, run_id: run });
  // Run 1: trace 300, span 301 with child 302. Run 2: the same ids 300 and 301, 301 with child 303.
  await store.append([row(300, 'trace', 300, null, true), row(301, 'workflow', 300, 300, true), row(302, 'llm', 300, 301, false)], true);
  await store.append(
    [
      inRun(row(300, 'trace', 300, null, true), other),
      inRun(row(301, 'workflow', 300, 300, true), other),
      inRun(row(303, 'llm', 300, 301, false), other),
    ],
    true,
  );
  await store.seal();
  const scope: Scope = { projectId: ROWS_PROJECT, kinds: ['span'] };
  const seqOf = (name: string, run: string) =>
    store.read(async (snap) => {
      const src = snap.source({ ...scope, kinds: ['span'] });
      return Number((await db.all(sql`SELECT seq FROM ${src.sql} WHERE name = ${name} AND run_id = ${run}`))[0]!['seq']);
    });
  const x = await seqOf('r301', ROWS_RUN);
  // 302 deleted, 301 (run 1) marked childless: its index row keeps the hash of its id.
  await store.deleteSeqs([await seqOf('r302', ROWS_RUN)], [x]);
  const gone = [x, await seqOf('r303', other)];
  const [settled, alone] = await store.read((snap) =>
    db.withConnection(async (c) => {
      await c.run(sql`CREATE OR REPLACE TEMP TABLE gone_seqs AS SELECT unnest(${gone}::BIGINT[]) AS seq`);
      try {
        const rel = sql`(SELECT seq FROM gone_seqs)`;
        return [await childlessSettled(c, snap, scope, gone, rel), await childlessOfLeaves(c, snap, scope, gone)];
      } finally {
        await c.run(sql`DROP TABLE gone_seqs`);
      }
    }),
  );
  assert.deepEqual(
    settled.sort((a, b) => a - b),
    alone.sort((a, b) => a - b),
    'as the statement alone (and the string path) answers',
  );
  assert.equal(settled.includes(await seqOf('r301', other)), false, "run 2's span 301 is not marked (its id is a removed row's)");
});

test('local settling in a segment whose seqs do not ascend with the row number (logged out of created_at order)', async (t) => {
  // Row groups of 1 row: the rows logged below are far out of order for them, so the seal sorts.
  const { db, store } = await openRecordStore(t, { rowGroupSize: 1 });
  // Logged newest first: the seal writes them oldest first, so row order runs against seq order.
  const base = clock + 1_000_000;
  const at = (r: LogRow, us: number): LogRow => ({ ...r, created_at: us });
  const rows = [
    at(row(500, 'trace', 500, null, true), base),
    at(row(501, 'workflow', 500, 500, true), base + 1000),
    at(row(502, 'llm', 500, 501, false), base + 2000),
    at(row(503, 'llm', 500, 501, false), base + 3000),
    at(row(511, 'workflow', 500, 500, true), base + 4000),
    at(row(512, 'llm', 500, 511, false), base + 5000),
  ].reverse();
  for (const r of rows) await store.append([r], true);
  await store.seal();
  const scope: Scope = { projectId: ROWS_PROJECT, runId: ROWS_RUN, kinds: ['span'] };
  const seqs = await store.read(async (snap) => {
    const src = snap.source(scope);
    const got = await db.all(sql`SELECT name, seq FROM ${src.sql}`);
    return new Map(got.map((r) => [String(r['name']), Number(r['seq'])]));
  });
  const files = await store.read(async (snap) => snap.childRowFiles(scope)!);
  const header = await db.withConnection((c) => childRowsHeader(c, files[0]!.path, files[0]!.rows));
  assert.equal(header?.ascending, false, 'the row file holds the row numbers in seq order');
  const ask = (names: string[]) =>
    store.read((snap) =>
      db.withConnection(async (c) => {
        const gone = names.map((n) => seqs.get(n)!);
        const rel = sql`(SELECT unnest(${gone}::BIGINT[]) AS seq)`;
        return {
          left: (await settleLocally(c, snap, scope, gone))!,
          settled: (await childlessSettled(c, snap, scope, gone, rel)).sort((a, b) => a - b),
          alone: (await childlessOfLeaves(c, snap, scope, gone)).sort((a, b) => a - b),
        };
      }),
    );
  const one = await ask(['r502']);
  assert.deepEqual(one.left, { hashes: [], rest: [], seqs: [] }, 'found by its seq and settled by its sibling');
  assert.deepEqual(one.settled, []);
  const both = await ask(['r502', 'r503', 'r512']);
  assert.equal(both.left.rest.length, 0, 'every match found in the segment');
  assert.equal(both.left.hashes.length, 2);
  assert.deepEqual(
    both.settled,
    [seqs.get('r501')!, seqs.get('r511')!].sort((a, b) => a - b),
  );
  assert.deepEqual(both.alone, both.settled);
});

test('local settling read in chunks of any size: the same parents settled and left, on many traces with dead rows; matches given by row number alike', {
  timeout: 120_000,
}, async (t) => {
  const { db, store } = await openRecordStore(t);
  const rnd = seededRandom(11);
  // 60 traces in one segment, logged in order (seqs ascend with the rows): each a trace row, a workflow
  // span and 1-40 llm leaves under either.
  const rows: LogRow[] = [];
  const leaves: number[] = [];
  let k = 1000;
  for (let tr = 0; tr < 60; tr++) {
    const trace = k++;
    const wf = k++;
    rows.push(row(trace, 'trace', trace, null, true), row(wf, 'workflow', trace, trace, true));
    for (let i = 1 + Math.floor(rnd() * 40); i > 0; i--) {
      const leaf = k++;
      rows.push(row(leaf, 'llm', trace, rnd() < 0.7 ? wf : trace, false));
      leaves.push(leaf);
    }
  }
  await store.append(rows, true);
  await store.seal();
  const scope: Scope = { projectId: ROWS_PROJECT, runId: ROWS_RUN, kinds: ['span'] };
  const seqs = await store.read(async (snap) => {
    const got = await db.all(sql`SELECT id, seq FROM ${snap.source({ ...scope, kinds: ['span', 'trace'] }).sql}`);
    return new Map(got.map((r) => [String(r['id']), Number(r['seq'])]));
  });
  const s = (n: number) => seqs.get(id(n))!;
  const files = await store.read(async (snap) => snap.childRowFiles(scope)!);
  assert.equal((await db.withConnection((c) => childRowsHeader(c, files[0]!.path, files[0]!.rows)))?.ascending, true);
  // Some leaves dead before the deletes asked about below.
  const killed = new Set(leaves.filter(() => rnd() < 0.05).map(s));
  await store.deleteSeqs([...killed], []);
  // Each seq's row in the segment (as a value index gives matches).
  const segment = files[0]!.path.replace(/\.kidrows$/, '.parquet');
  const placed = await db.all(sql`SELECT seq, file_row_number AS r FROM read_parquet(${segment}, file_row_number = true)`);
  const rowOf = new Map(placed.map((p) => [Number(p['seq']), Number(p['r'])]));
  for (const size of [1, 5, 40, 300]) {
    const gone = [...new Set(Array.from({ length: size }, () => leaves[Math.floor(rnd() * leaves.length)]!))].map(s);
    const got = await store.read((snap) =>
      db.withConnection(async (c) => {
        const whole = await settleLocally(c, snap, scope, gone, 8, 1 << 20);
        const parts = [];
        for (const chunk of [1, 3, 17, 64, 500]) parts.push({ chunk, left: await settleLocally(c, snap, scope, gone, 8, chunk) });
        // By row, as a value index lists them: dead rows among them, which are no matches.
        const at = Uint32Array.from(gone.map((q) => rowOf.get(q)!)).sort();
        const byRow = { rows: new Map([[files[0]!.path, at]]), dead: await deadSeqsOf(c, snap) };
        const live = await settleLocally(
          c,
          snap,
          scope,
          gone.filter((q) => !killed.has(q)),
          8,
          1 << 20,
        );
        for (const chunk of [1, 17, 1 << 20])
          parts.push({ chunk, left: await settleLocally(c, snap, scope, [], 8, chunk, byRow), byRow: live! });
        const rel = sql`(SELECT unnest(${gone}::BIGINT[]) AS seq)`;
        return {
          whole: whole!,
          parts,
          settled: (await childlessSettled(c, snap, scope, gone, rel, 8)).sort((a, b) => a - b),
          alone: (await childlessOfLeaves(c, snap, scope, gone)).sort((a, b) => a - b),
        };
      }),
    );
    assert.ok(got.whole.hashes.length < gone.length || gone.length === 1, `${size}: some parents settled by a neighbour`);
    for (const p of got.parts) {
      const how = `${size} removed, chunks of ${p.chunk} rows${p.byRow ? ', by row' : ''}`;
      assert.deepEqual(sortedLeft(p.left!), sortedLeft(p.byRow ?? got.whole), how);
      const seqsRead = p.byRow ? gone.filter((q) => !killed.has(q)).sort((a, b) => a - b) : [];
      assert.deepEqual(
        p.left!.seqs.sort((a, b) => a - b),
        seqsRead,
        `${how}: the seqs read (live ones)`,
      );
    }
    assert.deepEqual(got.settled, got.alone, `${size} removed: the parents marked, settled first or by the statement alone`);
  }
});
