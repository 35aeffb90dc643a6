// Guarantees: a source asked for rows created within some ranges (a page's time window) lists only the
// segments whose created_at range meets one of them, and reads the same rows in those ranges as the
// source of every segment; memory tables likewise (their created_at ranges are noted as rows arrive).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { openRecordStore, ROWS_PROJECT, ROWS_RUN, toolRows } from '../../support/helpers.js';
import { compile, int, sql, type Sql } from '../../../src/query/sql.js';

const scope = { projectId: ROWS_PROJECT, runId: ROWS_RUN, kinds: ['span' as const] };
const T0 = 1_700_000_000_000_000; // toolRows(k) is created at T0 + k µs

test('a created_at window leaves out the segments wholly outside it, and no row inside it', async (t) => {
  const { dir, store } = await openRecordStore(t);
  // Three segments (rows 0-9, 10-19, 20-29) and rows 30-34 in memory.
  for (let i = 0; i < 3; i++) {
    await store.append(toolRows(i * 10, 10), true);
    await store.seal();
  }
  await store.append(toolRows(30, 5), true);
  await store.settled();
  const snap = store.snapshot();
  try {
    const files = snap.segmentsFor(scope).map((s) => join(dir, s.file));
    assert.equal(files.length, 3);
    const listed = (params: readonly unknown[]) => files.filter((f) => params.some((p) => p === f || (Array.isArray(p) && p.includes(f))));
    const names = async (src: { sql: Sql }, lo: number, hi: number) => {
      const rows = await store.db.all(
        sql`SELECT name FROM ${src.sql} WHERE created_at BETWEEN make_timestamp(${int(T0 + lo)}) AND make_timestamp(${int(T0 + hi)}) ORDER BY name`,
      );
      return rows.map((r) => String(r['name']));
    };
    const all = snap.source(scope);
    assert.deepEqual(listed(compile(all.sql).params), files);
    const cases: { ranges: [number, number][]; segs: number[]; lo: number; hi: number }[] = [
      { ranges: [[T0 + 25, Infinity]], segs: [2], lo: 25, hi: 40 },
      { ranges: [[-Infinity, T0 + 10]], segs: [0, 1], lo: -1, hi: 10 },
      {
        ranges: [
          [T0 + 3, T0 + 4],
          [T0 + 29, T0 + 31],
        ],
        segs: [0, 2],
        lo: 3,
        hi: 31,
      },
      { ranges: [[T0 + 100, Infinity]], segs: [], lo: 100, hi: 200 },
    ];
    for (const c of cases) {
      const src = snap.source(scope, [], [], c.ranges);
      const what = JSON.stringify(c.ranges.map(([a, b]) => [a - T0, b - T0]));
      assert.deepEqual(
        listed(compile(src.sql).params),
        c.segs.map((i) => files[i]!),
        what,
      );
      // Within each range the narrowed source holds every row the full one does (memory rows included).
      for (const [a, b] of c.ranges) {
        const lo = Math.max(c.lo, Number.isFinite(a) ? a - T0 : c.lo);
        const hi = Math.min(c.hi, Number.isFinite(b) ? b - T0 : c.hi);
        assert.deepEqual(await names(src, lo, hi), await names(all, lo, hi), `${what} rows ${lo}..${hi}`);
      }
    }
    // The memory table (rows 30-34) is read when the window meets its rows, else left out.
    const memRead = (ranges: [number, number][]) => /\bmem_\d+\b/.test(compile(snap.source(scope, [], [], ranges).sql).text);
    assert.equal(memRead([[T0 + 34, Infinity]]), true);
    assert.equal(memRead([[T0 + 20, T0 + 30]]), true);
    assert.equal(memRead([[T0 + 35, Infinity]]), false, 'memory rows all created before the window');
    assert.equal(memRead([[-Infinity, T0 + 29]]), false, 'memory rows all created after the window');
    assert.deepEqual(await names(snap.source(scope, [], [], [[T0 + 32, Infinity]]), 32, 40), ['r32', 'r33', 'r34']);
  } finally {
    snap.release();
  }
});
