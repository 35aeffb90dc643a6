// Guarantees of the text index (src/storage/indexes/text-index.ts, used by time-profile.ts):
// - a `contains` count or page over several segments of small row groups, with rows in memory and a
//   deleted row (pages through small time windows, chosen among the row groups not skipped), equals
//   the brute-force answer (computed here in JS, and by the same query under NOT NOT, which the index
//   never narrows), in either case, on name and input, under AND, OR and NOT, and a delete by needle;
//   and with retention expiring one segment whole and another in part;
// - row groups are really skipped: the input pages of the row groups a needle cannot be in are
//   overwritten with garbage, the brute-force query then fails, the indexed one answers right;
// - every listed segment has its index on disk, merged-away segments lose theirs, and a missing or
//   damaged index is rebuilt after open (byte for byte the same) with answers unchanged; indexes are
//   held in memory only from a segment's first text query.
import assert from 'node:assert/strict';
import { existsSync, openSync, readFileSync, rmSync, writeFileSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { DuckDBInstance } from '../../../src/vendor/duckdb.js';
import { TraceStore } from '../../../src/engine/trace-store.js';
import {
  candidateGroups,
  loadedTextIndexes,
  parseTextIndex,
  textIndexPath,
  textNeeds,
  tokenIndexPath,
} from '../../../src/storage/indexes/text-index.js';
import { tempDir } from '../../support/helpers.js';
import { waitFor } from '../../support/wait-for.js';

const VOCAB = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet'];
/** Spans whose input holds a rare word (a row group or two each), and one whose name does. */
const RARE: Record<number, string> = {
  5: 'Zebrafish',
  7000: 'zebrafish tank',
  123: '\u212Aiwi',
  12410: 'KIWI',
  15120: 'Xylophone',
  9001: 'İzmir',
};
const NAMED = 77;

function spanInput(i: number): string {
  let x = (i * 2654435761) >>> 0;
  const words: string[] = [];
  for (let k = 0; k < 6; k++) {
    x = (x * 1103515245 + 12345) >>> 0;
    words.push(VOCAB[x % VOCAB.length]!);
  }
  return RARE[i] !== undefined ? `${words.join(' ')} ${RARE[i]}` : words.join(' ');
}
const spanName = (i: number) => (i === NAMED ? 'Quokka step' : `step ${i}`);

/** A minute apart: the set spans ten and a half days, so retention can cut it in the middle. */
const createdMs = (i: number) => Date.UTC(2026, 0, 1) + i * 60_000;

function trace(i: number): Record<string, unknown> {
  return {
    name: `t${i}`,
    input: 'q',
    created_at: new Date(createdMs(i)).toISOString(),
    spans: [{ type: 'tool', name: spanName(i), input: spanInput(i), metrics: { score: i % 7 } }],
  };
}

interface Fixture {
  dir: string;
  store: TraceStore;
  projectId: string;
  runId: string;
}

const SEGMENTS = 3;
const PER_SEGMENT = 5000;
const IN_MEMORY = 200;
const TOTAL = SEGMENTS * PER_SEGMENT + IN_MEMORY;
const DELETED = 7000;

/**
 * 15,000 traces sealed in three segments, 200 more in memory; span 7000 deleted. DuckDB cuts row
 * groups at whole chunks of 2,048 rows, so each segment has three (2,048, 2,048, 904 span rows).
 */
async function load(t: TestContext, dir = tempDir(t)): Promise<Fixture & { alive: number[] }> {
  const store = await TraceStore.open(dir, { threads: 1, rowGroupSize: 2048, autoCompact: false, pageWindowRows: 1000, textIndex: true });
  t.after(() => store.close());
  const projectId = store.createProject({ name: 'p' }).id;
  const runId = store.createLogStream(projectId, 'r').id;
  const log = async (from: number, n: number) => {
    for (let i = from; i < from + n; i += 1000) {
      await store.logTraces(projectId, {
        log_stream_id: runId,
        traces: Array.from({ length: Math.min(1000, from + n - i) }, (_, k) => trace(i + k)),
      } as never);
    }
  };
  for (let s = 0; s < SEGMENTS; s++) {
    await log(s * PER_SEGMENT, PER_SEGMENT);
    await store.flush();
  }
  await log(SEGMENTS * PER_SEGMENT, IN_MEMORY);
  const gone = await store.records.delete('span', projectId, {
    log_stream_id: runId,
    filters: [{ type: 'text', column_id: 'name', operator: 'eq', value: spanName(DELETED) }],
  });
  assert.equal(gone.deleted, 1);
  return { dir, store, projectId, runId, alive: Array.from({ length: TOTAL }, (_, i) => i).filter((i) => i !== DELETED) };
}

const contains = (column_id: string, value: string, case_sensitive: boolean) => ({
  type: 'text',
  column_id,
  operator: 'contains',
  value,
  case_sensitive,
});

const CASES: { column: 'input' | 'name'; needle: string; cs: boolean }[] = [
  { column: 'input', needle: 'zebrafish', cs: false },
  { column: 'input', needle: 'Zebrafish', cs: true },
  { column: 'input', needle: 'zebrafish', cs: true },
  { column: 'input', needle: 'kiwi', cs: false },
  { column: 'input', needle: 'KIWI', cs: true },
  { column: 'input', needle: 'xyloPHONE', cs: false },
  { column: 'input', needle: 'izmir', cs: false },
  { column: 'input', needle: 'İzmir', cs: true },
  { column: 'input', needle: 'İZMIR', cs: false },
  { column: 'input', needle: 'hotel india', cs: false },
  { column: 'input', needle: 'no such words', cs: false },
  { column: 'input', needle: 'zq', cs: false },
  { column: 'name', needle: 'quokka', cs: false },
];

/** DuckDB's lower() on this data: JS's, but İ lowers to a plain i (JS adds a combining dot). */
const lower = (s: string) => s.replaceAll('İ', 'i').toLowerCase();

/** What the filter language says. */
function expected(alive: number[], c: (typeof CASES)[number]): Set<number> {
  const text = (i: number) => (c.column === 'input' ? spanInput(i) : spanName(i));
  return new Set(alive.filter((i) => (c.cs ? text(i).includes(c.needle) : lower(text(i)).includes(lower(c.needle)))));
}

const spanIndex = (name: unknown) => (name === 'Quokka step' ? NAMED : Number(String(name).slice(5)));

async function answers(fx: Fixture, body: Record<string, unknown>): Promise<{ count: number; page: number[] }> {
  const b = { log_stream_id: fx.runId, ...body };
  const count = (await fx.store.count('span', fx.projectId, b)).total_count;
  const page = (
    await fx.store.partialSearch('span', fx.projectId, { ...b, limit: 1000, select_columns: { column_ids: ['name'] } })
  ).records.map((r) => spanIndex(r['name']));
  if (count <= 1000) assert.equal(page.length, count, 'a page of 1,000 holds every match');
  return { count, page };
}

test('contains counts and pages equal the brute-force answer, with rows in memory and a deleted row', { timeout: 120_000 }, async (t) => {
  const fx = await load(t);
  for (const c of CASES) {
    const leaf = contains(c.column, c.needle, c.cs);
    const want = expected(fx.alive, c);
    const label = `${c.column} ${c.cs ? 'cs' : 'ci'} "${c.needle}"`;
    const got = await answers(fx, { filters: [leaf] });
    assert.equal(got.count, want.size, `${label}: count`);
    if (want.size <= 1000) assert.deepEqual(new Set(got.page), want, `${label}: page`);
    else
      assert.ok(
        got.page.every((i) => want.has(i)),
        `${label}: page`,
      );
    // The same test under NOT NOT reads every row group (the index has no say under NOT): it must agree.
    assert.deepEqual(await answers(fx, { filter_tree: { not: { not: { filter: leaf } } } }), got, `${label}: unindexed`);
    // With another leaf (an AND of leaves), and negated (NOT: the index has no say, complement).
    const typed = await answers(fx, { filters: [{ type: 'text', column_id: 'type', operator: 'eq', value: 'tool' }, leaf] });
    assert.equal(typed.count, want.size, `${label}: and type`);
    const negated = await answers(fx, { filter_tree: { not: { filter: leaf } } });
    assert.equal(negated.count, fx.alive.length - want.size, `${label}: not`);
  }
  // Two required needles on two columns (each narrows), and one inside an OR with a needle outside it.
  const both = await answers(fx, { filters: [contains('input', 'kiwi', false), contains('name', 'step 1241', true)] });
  assert.deepEqual(new Set(both.page), new Set([12410]));
  const either = await answers(fx, {
    filters: [contains('input', 'fish', false)],
    filter_tree: { or: [{ filter: contains('name', 'step 5', true) }, { filter: contains('name', 'quokka', false) }] },
  });
  assert.deepEqual(new Set(either.page), new Set([5]));
  // With a metric read from the narrowed segments' own columns (filter and sort).
  const scored = await answers(fx, {
    filters: [contains('input', 'kiwi', false), { type: 'number', column_id: 'metrics/score', operator: 'gte', value: 3 }],
    sort: { column_id: 'metrics/score', ascending: false },
  });
  assert.deepEqual(
    scored.page,
    [123, 12410].filter((i) => i % 7 >= 3).sort((x, y) => (y % 7) - (x % 7)),
  );
  // An OR of needles (each branch narrows) and an OR with a branch that does not.
  const orNeedles = {
    or: [
      { filter: contains('input', 'zebrafish', false) },
      { and: [{ filter: contains('input', 'xylophone', false) }, { filter: contains('name', 'step', true) }] },
    ],
  };
  assert.deepEqual(new Set((await answers(fx, { filter_tree: orNeedles })).page), new Set([5, 15120]));
  const orOpen = {
    or: [
      { filter: contains('input', 'zebrafish', false) },
      { filter: contains('name', 'quokka', false) },
      { filter: { type: 'text', column_id: 'name', operator: 'eq', value: 'step 9' } },
    ],
  };
  assert.deepEqual(new Set((await answers(fx, { filter_tree: orOpen })).page), new Set([5, NAMED, 9]));
  // A delete by a needle (its plan reads through the index too) removes exactly the match.
  const removed = await fx.store.records.delete('span', fx.projectId, {
    log_stream_id: fx.runId,
    filters: [contains('input', 'KIWI', true)],
  });
  assert.equal(removed.deleted, 1);
  assert.deepEqual(new Set((await answers(fx, { filters: [contains('input', 'kiwi', false)] })).page), new Set([123]));
  assert.equal((await answers(fx, {})).count, fx.alive.length - 1);
});

test("DuckDB's lower() maps only U+0130 and U+212A from outside ASCII into ASCII (the index lowers text so)", async () => {
  const inst = await DuckDBInstance.create(':memory:');
  const conn = await inst.connect();
  try {
    const rows = (
      await conn.runAndReadAll(
        'SELECT cp::INTEGER AS cp, lower(chr(cp::INTEGER)) AS l FROM range(128, 1114112) t(cp) ' +
          'WHERE (cp < 55296 OR cp > 57343) AND ascii(lower(chr(cp::INTEGER))) < 128',
      )
    ).getRowObjectsJS();
    assert.deepEqual(
      rows.map((r) => [r['cp'], r['l']]),
      [
        [0x130, 'i'],
        [0x212a, 'k'],
      ],
    );
    const ascii = (
      await conn.runAndReadAll(`SELECT lower(string_agg(chr(cp::INTEGER), '' ORDER BY cp)) AS l FROM range(1, 128) t(cp)`)
    ).getRowObjectsJS();
    assert.equal(
      ascii[0]!['l'],
      Array.from({ length: 127 }, (_, i) => String.fromCharCode(i + 1))
        .join('')
        .toLowerCase(),
    );
  } finally {
    conn.closeSync();
    inst.closeSync();
  }
});

test('with retention cutting the sealed segments, answers stay those of the live rows', { timeout: 120_000 }, async (t) => {
  const fx = await load(t);
  const day = 86_400_000;
  // A cutoff about five days into the set: the first segment expires whole, the second in part.
  const days = Math.ceil((Date.now() - Date.UTC(2026, 0, 6)) / day);
  fx.store.data.setRetention(fx.projectId, { log_stream_id: fx.runId, retention_days: days });
  const cutoff = Date.now() - days * day;
  const live = fx.alive.filter((i) => createdMs(i) >= cutoff);
  assert.ok(live.length > 5000 && live.length < 10_000, `live rows: ${live.length}`);
  for (const c of CASES) {
    const leaf = contains(c.column, c.needle, c.cs);
    const want = expected(live, c);
    const got = await answers(fx, { filters: [leaf] });
    assert.equal(got.count, want.size, `${c.column} "${c.needle}": count`);
    if (want.size <= 1000) assert.deepEqual(new Set(got.page), want, `${c.column} "${c.needle}": page`);
  }
});

/** Overwrites the `input` column chunks of some row groups of a Parquet file with 0xFF. */
async function spoilInput(file: string, groups: (g: number) => boolean): Promise<number> {
  const inst = await DuckDBInstance.create(':memory:');
  const conn = await inst.connect();
  const rows = (
    await conn.runAndReadAll(
      'SELECT row_group_id AS g, coalesce(dictionary_page_offset, data_page_offset) AS at, total_compressed_size AS n ' +
        `FROM parquet_metadata('${file.replaceAll("'", "''")}') WHERE path_in_schema = 'input'`,
    )
  ).getRowObjectsJS();
  conn.closeSync();
  inst.closeSync();
  const fd = openSync(file, 'r+');
  let spoiled = 0;
  try {
    for (const r of rows) {
      if (!groups(Number(r['g']))) continue;
      writeSync(fd, Buffer.alloc(Number(r['n']), 0xff), 0, Number(r['n']), Number(r['at']));
      spoiled++;
    }
  } finally {
    closeSync(fd);
  }
  return spoiled;
}

function spanSegments(fx: Fixture): { file: string; rows: number[] }[] {
  const m = JSON.parse(readFileSync(join(fx.dir, 'manifest.json'), 'utf8')) as {
    segments: { file: string; kind: string; row_groups: [number, number, number][] }[];
  };
  return m.segments.filter((s) => s.kind === 'span').map((s) => ({ file: join(fx.dir, s.file), rows: s.row_groups.map((g) => g[2]) }));
}

test('row groups the needle cannot be in are not read', { timeout: 120_000 }, async (t) => {
  const fx = await load(t);
  const needs = textNeeds([{ column: 'input', needle: 'zebrafish' }]);
  let spoiled = 0;
  let kept = 0;
  for (const seg of spanSegments(fx)) {
    const ix = parseTextIndex(readFileSync(textIndexPath(seg.file)))!;
    const keep = new Set(candidateGroups(ix, needs));
    kept += keep.size;
    spoiled += await spoilInput(seg.file, (g) => !keep.has(g));
  }
  assert.ok(spoiled >= 6 && kept <= 2, `spoiled ${spoiled} row groups, kept ${kept}`);
  const leaf = contains('input', 'zebrafish', false);
  await assert.rejects(
    fx.store.count('span', fx.projectId, { log_stream_id: fx.runId, filter_tree: { not: { not: { filter: leaf } } } }),
    'reading a spoiled row group fails',
  );
  const got = await answers(fx, { filters: [leaf] });
  assert.equal(got.count, 1);
  assert.deepEqual(got.page, [5]);
  // Under an OR whose every branch needs a needle the index narrows too (xylophone is only in memory).
  const either = await answers(fx, { filter_tree: { or: [{ filter: leaf }, { filter: contains('input', 'xylophone', false) }] } });
  assert.deepEqual(new Set(either.page), new Set([5, 15120]));
});

test('every listed segment has its index; merged inputs lose theirs; a missing or damaged one is rebuilt after open', {
  timeout: 120_000,
}, async (t) => {
  const dir = tempDir(t);
  const first = await load(t, dir);
  await first.store.flush();
  const before = await answers(first, { filters: [contains('input', 'kiwi', false)] });
  const listed = spanSegments(first).map((s) => s.file);
  assert.ok(listed.length >= 4);
  for (const f of listed) assert.ok(parseTextIndex(readFileSync(textIndexPath(f))), `${f} has a valid index`);
  const original = new Map(listed.map((f) => [f, readFileSync(textIndexPath(f))]));
  const originalTok = readFileSync(tokenIndexPath(listed[3]!));
  await first.store.close();

  // A token index cut short is rebuilt too; what a build killed mid-way leaves beside a segment (its
  // temporary files, a run file where the system keeps open files linked) goes on open.
  writeFileSync(tokenIndexPath(listed[3]!), originalTok.subarray(0, originalTok.length - 5));
  const crashed = [
    `${tokenIndexPath(listed[0]!)}.run-99999`,
    `${tokenIndexPath(listed[1]!)}.tmp-99999`,
    `${textIndexPath(listed[1]!)}.tmp-99999`,
  ];
  for (const f of crashed) writeFileSync(f, 'x');

  // One index gone, one damaged (a flipped byte), one truncated: all rebuilt, the same bytes.
  rmSync(textIndexPath(listed[0]!));
  const damaged = Buffer.from(original.get(listed[1]!)!);
  damaged[damaged.length >> 1] = damaged[damaged.length >> 1]! ^ 0x40;
  writeFileSync(textIndexPath(listed[1]!), damaged);
  writeFileSync(textIndexPath(listed[2]!), original.get(listed[2]!)!.subarray(0, 20));
  const store = await TraceStore.open(dir, { threads: 1, rowGroupSize: 2048, autoCompact: false, pageWindowRows: 1000, textIndex: true });
  t.after(() => store.close());
  await store.maintenance.indexesRepaired();
  const fx = { dir, store, projectId: first.projectId, runId: first.runId };
  // Checked (and rebuilt) after open, but held in memory only from a segment's first text query.
  assert.equal(loadedTextIndexes(dir), 0, 'no index is held after open');
  for (const f of listed.slice(0, 3)) assert.deepEqual(readFileSync(textIndexPath(f)), original.get(f), `${f}: rebuilt as written`);
  assert.deepEqual(readFileSync(tokenIndexPath(listed[3]!)), originalTok, 'token index rebuilt as written');
  for (const f of crashed) assert.equal(existsSync(f), false, `${f} removed`);
  for (const f of listed) assert.equal(existsSync(`${tokenIndexPath(f)}.tmp-${process.pid}`), false, 'no temporary file after a rebuild');
  assert.deepEqual(await answers(fx, { filters: [contains('input', 'kiwi', false)] }), before);
  assert.equal(loadedTextIndexes(dir), listed.length, 'a text query loads each segment it reads');

  // A merge writes the merged segment's index and its inputs' go with them.
  await store.maintenance.compact();
  const merged = spanSegments(fx).map((s) => s.file);
  assert.ok(merged.length < listed.length, 'segments were merged');
  for (const f of merged) assert.ok(parseTextIndex(readFileSync(textIndexPath(f))), `${f} (merged) has a valid index`);
  // The inputs go once no reader may use them (in the background): their indexes with them.
  const inputs = listed.filter((x) => !merged.includes(x));
  await waitFor(
    () => inputs.every((f) => !existsSync(textIndexPath(f))) || `left: ${inputs.filter((f) => existsSync(textIndexPath(f))).join(', ')}`,
    { what: "the merged inputs' indexes to go with them" },
  );
  assert.deepEqual(await answers(fx, { filters: [contains('input', 'kiwi', false)] }), before);
});

test('without textIndex (the default) no index is written, and contains answers the same', async (t) => {
  const dir = tempDir(t);
  const store = await TraceStore.open(dir, { threads: 1, autoCompact: false });
  t.after(() => store.close());
  const project = store.createProject({ name: 'p' });
  const run = store.createLogStream(project.id, 'r').id;
  const traces = Array.from({ length: 30 }, (_, i) => ({
    name: `t${i}`,
    input: i % 3 === 0 ? `needle-${i}` : 'hay',
    spans: [{ type: 'tool', name: `s${i}`, input: 'hay' }],
  }));
  await store.logTraces(project.id, { log_stream_id: run, traces: traces as never });
  await store.flush();
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { segments: { file: string }[] };
  assert.ok(manifest.segments.length > 0);
  for (const s of manifest.segments) assert.equal(existsSync(textIndexPath(join(dir, s.file))), false, s.file);
  const filter_tree = { filter: { type: 'text', column_id: 'input', operator: 'contains', value: 'NEEDLE', case_sensitive: false } };
  assert.equal((await store.count('trace', project.id, { log_stream_id: run, filter_tree } as never)).total_count, 10);
});
