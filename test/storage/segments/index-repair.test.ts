// Guarantees of the index repair after open (src/storage/segments/index-repair.ts): a folder whose
// segments lack their child and text indexes (an older version's) or hold stale ones opens without
// building them; until they are checked, deletes and text counts do without them and answer as a scan
// does, and as they do after the rebuild; a segment merged away first is skipped; a close during a
// rebuild leaves no temporary file, and the next open rebuilds the rest; a read-only open builds nothing;
// a store without the text index uses no token file an earlier open left (nothing checks them).
import assert from 'node:assert/strict';
import { copyFileSync, cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { Database } from '../../../src/db/database.js';
import type { TraceStoreOptions } from '../../../src/engine/store-options.js';
import { TraceStore } from '../../../src/engine/trace-store.js';
import { childIndexUsable, childRowsHeader, childRowsPath } from '../../../src/storage/indexes/child-index.js';
import { loadedTextIndexes } from '../../../src/storage/indexes/text-index.js';
import { tokenFileRows } from '../../../src/storage/indexes/token-index.js';
import { goneStayTraces } from '../../support/gone-stay-traces.js';
import { childIndexesUsable, listedSegments } from '../../support/segment-indexes.js';
import { tempDir } from '../../support/helpers.js';
import { waitFor } from '../../support/wait-for.js';

const SIDE = ['.kids', '.kidrows', '.tix', '.tok'];
const VOCAB = ['apple', 'berry', 'cherry', 'damson', 'elder', 'fig', 'grape'];
const FLUSHES = 4;
const PER_FLUSH = 300;

/** The delete tests' traces, each leaf with words as input. */
const traces = (from: number, n: number) => goneStayTraces(from, n, leafInput);

// Words spread unevenly over the flushes, so another segment's postings give other counts.
const leafInput = (k: number, m: number, l: number) =>
  `${VOCAB[(k * k + m * 3 + l) % VOCAB.length]} ${VOCAB[Math.floor(k / 97) % VOCAB.length]}`;

/** Every leaf as logged: its name, input and whether the delete takes it. */
function leaves(): { name: string; input: string; gone: boolean; parent: string }[] {
  const out = [];
  for (let k = 0; k < FLUSHES * PER_FLUSH; k++)
    for (let m = 0; m < 3; m++)
      for (let l = 0; l < (k + m) % 4; l++)
        out.push({ name: `l${k}-${m}-${l}`, input: leafInput(k, m, l), gone: (k + m + l) % 3 === 0, parent: `c${k}-${m}` });
  return out;
}

const OPTIONS: TraceStoreOptions = { threads: 1, rowGroupSize: 512, autoCompact: false, textIndex: true };

/** A closed store of FLUSHES segments per kind, with every index; its project and run. */
async function older(t: TestContext): Promise<{ dir: string; projectId: string; runId: string }> {
  const dir = tempDir(t);
  const store = await TraceStore.open(dir, OPTIONS);
  const projectId = store.createProject({ name: 'p' }).id;
  const runId = store.createLogStream(projectId, 'r').id;
  for (let s = 0; s < FLUSHES; s++) {
    await store.logTraces(projectId, { log_stream_id: runId, traces: traces(s * PER_FLUSH, PER_FLUSH) } as never);
    await store.flush();
  }
  await store.close();
  return { dir, projectId, runId };
}

const listed = listedSegments;

const side = (abs: string) => SIDE.map((ext) => abs.replace(/\.parquet$/, ext));

function walk(d: string): string[] {
  return readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : [join(d, e.name)]));
}

/** The folder as a store of an older version leaves it: no side index files. */
function removeIndexes(dir: string): void {
  for (const s of listed(dir)) for (const f of side(s.abs)) rmSync(f, { force: true });
}

/**
 * One span segment's child index and row file replaced by another's of the same row count, and a
 * byte of its token index flipped: readers that trusted them would answer for the wrong rows.
 */
function staleIndexes(dir: string): string {
  const spans = listed(dir).filter((s) => s.abs.includes('kind=span'));
  const [a, b] = [spans[0]!, spans.find((s, i) => i > 0 && s.rows === spans[0]!.rows)!];
  assert.ok(b, 'two span segments of equal rows');
  for (const ext of ['.kids', '.kidrows']) copyFileSync(b.abs.replace(/\.parquet$/, ext), a.abs.replace(/\.parquet$/, ext));
  const tok = a.abs.replace(/\.parquet$/, '.tok');
  const bytes = readFileSync(tok);
  bytes[bytes.length >> 1]! ^= 0x21;
  writeFileSync(tok, bytes);
  return a.abs;
}

/** Whether each listed segment has its child index and both text index files. */
const usable = (dir: string) =>
  childIndexesUsable(
    dir,
    (s) => existsSync(s.abs.replace(/\.parquet$/, '.tix')) && tokenFileRows(s.abs.replace(/\.parquet$/, '.tok')) === s.rows,
  );

const contains = (value: string) => [{ type: 'text', column_id: 'input', operator: 'contains', value, case_sensitive: false }];
const NEEDLES = ['apple', 'CHERRY', 'fig grape', 'elder damson', 'nosuch'];

/** Span counts of each needle, and which counts the token index answered. */
async function textCounts(
  store: TraceStore,
  projectId: string,
  runId: string,
  steps: string[][],
): Promise<{ counts: number[]; byTokens: number }> {
  const counts: number[] = [];
  let byTokens = 0;
  for (const n of NEEDLES) {
    steps.length = 0;
    counts.push((await store.count('span', projectId, { log_stream_id: runId, filters: contains(n) } as never)).total_count);
    if (/token index/.test(steps[0]?.[0] ?? '')) byTokens++;
  }
  return { counts, byTokens };
}

/** The same counts by scanning what was logged (`gone`: the delete happened). */
function scanCounts(gone: boolean): number[] {
  const live = leaves().filter((l) => !(gone && l.gone));
  return NEEDLES.map((n) => live.filter((l) => l.input.toLowerCase().includes(n.toLowerCase())).length);
}

/** Deletes the 'gone' leaves; has_children of every middle span after it, by name. */
async function deleteLeaves(store: TraceStore, projectId: string, runId: string): Promise<{ deleted: number; hc: [string, boolean][] }> {
  const { deleted } = await store.records.delete('span', projectId, {
    log_stream_id: runId,
    filters: [{ type: 'collection', column_id: 'tags', operator: 'contains', value: 'gone' }],
  });
  const rows = await store.data.sql("SELECT name, has_children FROM spans WHERE type = 'workflow' ORDER BY name", []);
  return { deleted, hc: rows.map((r) => [String(r['name']), r['has_children'] === true]) };
}

/** The same by scanning what was logged: a middle span keeps children when one of its leaves stays. */
function scanDelete(): { deleted: number; hc: [string, boolean][] } {
  const all = leaves();
  const keeps = new Set(all.filter((l) => !l.gone).map((l) => l.parent));
  const names: string[] = [];
  for (let k = 0; k < FLUSHES * PER_FLUSH; k++) for (let m = 0; m < 3; m++) names.push(`c${k}-${m}`);
  return { deleted: all.filter((l) => l.gone).length, hc: names.sort().map((n) => [n, keeps.has(n)]) };
}

test('an older folder opens without building its indexes; deletes and text counts before the rebuild answer as a scan and as after it', {
  timeout: 180_000,
}, async (t) => {
  const { dir, projectId, runId } = await older(t);
  const segs = listed(dir);
  assert.ok(segs.length >= 2 * FLUSHES, `segments: ${segs.length}`);
  const stale = tempDir(t);
  cpSync(dir, stale, { recursive: true });
  staleIndexes(stale);
  const later = tempDir(t);
  removeIndexes(dir);
  cpSync(dir, later, { recursive: true });
  const present = (d: string) => listed(d).flatMap((s) => side(s.abs).filter((f) => existsSync(f)));
  assert.deepEqual(present(dir), [], 'no index files');

  // Before the rebuild (held back): the folder is as it was, and answers are the scan's.
  const steps: string[][] = [];
  const store = await TraceStore.open(dir, { ...OPTIONS, indexRepair: 'held', onPlan: (s) => steps.push([...s]) });
  t.after(() => store.close());
  const before = await textCounts(store, projectId, runId, steps);
  assert.deepEqual(before.counts, scanCounts(false), 'text counts before the rebuild');
  assert.equal(before.byTokens, 0, 'no token index answers before the check');
  const deletedBefore = await deleteLeaves(store, projectId, runId);
  const scan = scanDelete();
  assert.equal(deletedBefore.deleted, scan.deleted);
  assert.deepEqual(deletedBefore.hc, scan.hc, 'has_children after a delete before the rebuild');
  assert.ok(scan.hc.some(([, hc]) => hc) && scan.hc.some(([, hc]) => !hc), 'some middle spans lose every child, others keep one');
  assert.deepEqual(present(dir), [], 'nothing was built meanwhile');

  // After it: every index usable, answers unchanged, and the rebuilt indexes answer.
  const rebuilt = await store.maintenance.indexesRepaired();
  assert.equal(rebuilt, 2 * segs.length, 'each segment got a child and a text index');
  assert.deepEqual(
    await usable(dir),
    segs.map(() => true),
    'every index usable after the rebuild',
  );
  const after = await textCounts(store, projectId, runId, steps);
  assert.deepEqual(after.counts, scanCounts(true), 'text counts after the rebuild (and the delete)');
  // Needles of one word (a token); those spanning words are counted by reading rows.
  assert.equal(after.byTokens, NEEDLES.filter((n) => !n.includes(' ')).length, 'the token index answers once rebuilt');
  await store.search('span', projectId, { log_stream_id: runId, filters: contains('apple'), limit: 5 } as never);
  const spanSegs = listed(dir).filter((s) => s.abs.includes('kind=span')).length;
  assert.equal(loadedTextIndexes(dir), spanSegs, 'a text search after the rebuild uses every rebuilt text index');

  // The same delete after the rebuild, on a copy: the same answer, through the rebuilt child indexes.
  const again = await TraceStore.open(later, { ...OPTIONS, indexRepair: 'held' });
  t.after(() => again.close());
  assert.equal(await again.maintenance.indexesRepaired(), 2 * segs.length);
  assert.deepEqual(await deleteLeaves(again, projectId, runId), deletedBefore, 'the same delete after the rebuild');

  // Every index there but one segment's child and token index stale: until checked, none is trusted.
  const odd = await TraceStore.open(stale, { ...OPTIONS, indexRepair: 'held', onPlan: (s) => steps.push([...s]) });
  t.after(() => odd.close());
  const beside = await textCounts(odd, projectId, runId, steps);
  assert.deepEqual(beside.counts, before.counts, 'text counts beside a stale token index');
  assert.equal(beside.byTokens, 0, 'no token index answers before the check');
  assert.deepEqual(await deleteLeaves(odd, projectId, runId), deletedBefore, 'a delete beside a stale child index');
  assert.equal(await odd.maintenance.indexesRepaired(), 2, 'the stale child and token index are rebuilt');
  assert.deepEqual(
    await usable(stale),
    segs.map(() => true),
  );
});

test('in the background the indexes are rebuilt after the open; a segment merged away first is skipped', {
  timeout: 180_000,
}, async (t) => {
  const { dir } = await older(t);
  const copy = tempDir(t);
  removeIndexes(dir);
  cpSync(dir, copy, { recursive: true });

  const store = await TraceStore.open(dir, OPTIONS);
  t.after(() => store.close());
  await waitFor(async () => (await usable(dir)).every((u) => u) || 'not yet', { what: 'the indexes to be rebuilt in the background' });
  assert.equal(await store.maintenance.indexesRepaired(), 2 * listed(dir).length);

  // Merged before its check: nothing is built for the merged-away segments (their files go with them).
  const held = await TraceStore.open(copy, { ...OPTIONS, indexRepair: 'held' });
  t.after(() => held.close());
  const inputs = listed(copy);
  assert.ok((await held.maintenance.compact()).merges > 0, 'segments were merged');
  const merged = listed(copy);
  assert.ok(
    merged.every((m) => !inputs.some((i) => i.file === m.file)),
    'every segment was an input',
  );
  await waitFor(() => inputs.every((s) => !existsSync(s.abs)) || 'inputs left', { what: 'the merged inputs to go' });
  const warnings: string[] = [];
  const warned = (w: Error) => warnings.push(w.message);
  process.on('warning', warned);
  t.after(() => process.off('warning', warned));
  assert.equal(await held.maintenance.indexesRepaired(), 0, 'nothing rebuilt for segments merged away');
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(warnings, [], 'nothing was tried for them');
  const files = walk(join(copy, 'records'));
  assert.deepEqual(
    files.filter((f) => !merged.some((m) => f.startsWith(m.abs.replace(/\.parquet$/, '.')))),
    [],
    'only the merged segments and their files are left',
  );
  assert.deepEqual(
    await usable(copy),
    merged.map(() => true),
  );
});

test('a close during the rebuild leaves no temporary file; the next open rebuilds the rest; a read-only open builds nothing', {
  timeout: 180_000,
}, async (t) => {
  const { dir, projectId, runId } = await older(t);
  removeIndexes(dir);
  const segs = listed(dir);

  const stripped = walk(join(dir, 'records'));
  const reader = await TraceStore.open(dir, { ...OPTIONS, readOnly: true });
  await new Promise((r) => setTimeout(r, 300));
  const counts = await reader.count('span', projectId, { log_stream_id: runId, filters: contains('apple') } as never);
  assert.equal(counts.total_count, scanCounts(false)[0], 'a read-only store answers without the indexes');
  await reader.close();
  assert.deepEqual(walk(join(dir, 'records')), stripped, 'a read-only open builds nothing');

  const temporary = () => walk(join(dir, 'records')).filter((f) => /\.(tmp|run)-\d+$/.test(f));
  assert.deepEqual(temporary(), []);
  const store = await TraceStore.open(dir, OPTIONS);
  // Closed as soon as a text index rebuild (after every child index) writes its temporary file.
  const until = Date.now() + 30_000;
  while (!temporary().some((f) => /\.(tix|tok)\.tmp-/.test(f))) {
    assert.ok(Date.now() < until, 'a text index rebuild started');
    await new Promise((r) => setImmediate(r));
  }
  await store.close();
  assert.deepEqual(temporary(), [], 'no temporary file after the close');

  const next = await TraceStore.open(dir, { ...OPTIONS, indexRepair: 'held' });
  t.after(() => next.close());
  const rest = await next.maintenance.indexesRepaired();
  assert.ok(rest > 0 && rest <= segs.length, `the next open rebuilt the text indexes left (${rest})`);
  assert.deepEqual(
    await usable(dir),
    segs.map(() => true),
  );
});

test('a delete right after the open waits for the child indexes, whose rebuild then waits for no pause in writes', {
  timeout: 180_000,
}, async (t) => {
  const { dir, projectId, runId } = await older(t);
  removeIndexes(dir);
  // A pause in writes of a minute: without a delete waiting, nothing would be rebuilt for that long.
  const store = await TraceStore.open(dir, { ...OPTIONS, mergePauseMs: 60_000, mergeMaxDelayMs: 120_000 });
  t.after(() => store.close());
  await store.logTraces(projectId, { log_stream_id: runId, traces: [{ name: 'extra', spans: [] }] } as never);
  const t0 = performance.now();
  const got = await deleteLeaves(store, projectId, runId);
  assert.ok(performance.now() - t0 < 30_000, 'the delete did not wait for a pause in writes');
  assert.deepEqual(got, scanDelete());
  const segs = listed(dir);
  const db = await Database.open({});
  t.after(() => db.close());
  const conn = await db.dedicated();
  for (const s of segs)
    assert.ok(
      (await childIndexUsable(conn, s.abs, s)) && (await childRowsHeader(conn, childRowsPath(s.abs), s.rows)) !== null,
      `${s.file}: its child index was rebuilt before the delete answered`,
    );
  assert.ok(
    segs.every((s) => !existsSync(s.abs.replace(/\.parquet$/, '.tok'))),
    'text indexes still wait for the pause',
  );
});

test('with the text index off, token files an earlier open left are not used: nothing checks them', { timeout: 120_000 }, async (t) => {
  const { dir, projectId, runId } = await older(t);
  staleIndexes(dir);
  const steps: string[][] = [];
  const store = await TraceStore.open(dir, { ...OPTIONS, textIndex: false, onPlan: (s) => steps.push([...s]) });
  t.after(() => store.close());
  await store.maintenance.indexesRepaired();
  const { counts, byTokens } = await textCounts(store, projectId, runId, steps);
  assert.equal(byTokens, 0, 'no count came from a token file');
  assert.deepEqual(counts, scanCounts(false));
});
