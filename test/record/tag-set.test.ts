// Guarantees of the tag_set column (src/record/record-columns.ts), which tag filters read instead of
// the list of tags where a segment stores it:
// - every segment written stores it;
// - contains, one_of and not_in on tags, in either case, answer exactly what the list says, over tags
//   holding the column's own separator and escape characters, empty tags, no tags, duplicates, with
//   rows in a segment that stores tag_set, in a segment of an older version that does not (rewritten
//   here without the column, as earlier versions wrote it) and in memory.
import assert from 'node:assert/strict';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { DuckDBInstance } from '../../src/vendor/duckdb.js';
import { TraceStore } from '../../src/engine/trace-store.js';
import { tempDir } from '../support/helpers.js';

const TAGS: (string[] | null)[] = [
  null,
  [],
  [''],
  ['a'],
  ['A'],
  ['a', 'b'],
  ['b', 'a', 'a'],
  ['\x1f'],
  ['a\x1fb'],
  ['\x1e1'],
  ['\x1e'],
  ['\x1e0', 'x'],
  ['İ'],
  ['i'],
  ['ab'],
  ['b a'],
  ['', 'b'],
];
const NEEDLES = ['', 'a', 'A', 'b', '\x1f', 'a\x1fb', '\x1e1', '\x1e', '\x1e0', 'İ', 'i', 'I', 'ab', 'b a', 'x', 'zzz'];
/** DuckDB's lower() on these: JS's, but İ lowers to a plain i. */
const lower = (s: string) => s.replaceAll('İ', 'i').toLowerCase();

interface Manifest {
  segments: { file: string; kind: string; tag_set?: boolean }[];
}

function expected(op: 'contains' | 'one_of' | 'not_in', values: string[], cs: boolean): number {
  const eq = (t: string, v: string) => (cs ? t === v : lower(t) === lower(v));
  const has = (tags: string[] | null) => tags !== null && values.some((v) => tags.some((t) => eq(t, v)));
  // Three copies of every tag list: a segment with tag_set, one without, and memory.
  return 3 * TAGS.filter((tags) => (op === 'not_in' ? !has(tags) : has(tags))).length;
}

test('tag filters read tag_set where stored and answer as the list does everywhere', { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t);
  let store = await TraceStore.open(dir, { threads: 1, autoCompact: false });
  const projectId = store.createProject({ name: 'p' }).id;
  const runId = store.createLogStream(projectId, 'r').id;
  const log = (round: number) =>
    store.logTraces(projectId, {
      log_stream_id: runId,
      traces: TAGS.map((tags, i) => ({
        name: `t${round}-${i}`,
        spans: [{ type: 'tool', name: `s${round}-${i}`, ...(tags === null ? {} : { tags }) }],
      })),
    } as never);
  await log(0);
  await store.flush();
  await log(1);
  await store.flush();
  await store.close();

  // Every segment stores tag_set; the first span segment is rewritten as earlier versions wrote it.
  const manifestPath = join(dir, 'manifest.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Manifest;
  const conn = await (await DuckDBInstance.create(':memory:')).connect();
  for (const seg of manifest.segments) {
    assert.equal(seg.tag_set, true, `${seg.file} is listed with tag_set`);
    const cols = (await conn.runAndReadAll(`SELECT name FROM parquet_schema('${join(dir, seg.file)}')`))
      .getRowObjects()
      .map((r) => String(r['name']));
    assert.ok(cols.includes('tag_set'), `${seg.file} stores tag_set`);
  }
  const old = manifest.segments.find((s) => s.kind === 'span')!;
  const abs = join(dir, old.file);
  await conn.run(`COPY (SELECT * EXCLUDE (tag_set) FROM read_parquet('${abs}')) TO '${abs}.tmp' (FORMAT parquet)`);
  renameSync(`${abs}.tmp`, abs);
  delete old.tag_set;
  writeFileSync(manifestPath, JSON.stringify(manifest));

  store = await TraceStore.open(dir, { threads: 1, autoCompact: false });
  t.after(() => store.close());
  await log(2);
  assert.equal(store.records.stats.memRows > 0, true, 'the third copy is in memory');
  const count = async (operator: string, value: string | string[], case_sensitive: boolean) =>
    (
      await store.count('span', projectId, {
        log_stream_id: runId,
        filters: [{ type: 'collection', column_id: 'tags', operator, value, case_sensitive }],
      } as never)
    ).total_count;
  for (const cs of [true, false]) {
    for (const v of NEEDLES)
      assert.equal(await count('contains', v, cs), expected('contains', [v], cs), `contains ${JSON.stringify(v)} cs=${cs}`);
    for (const vs of [[], ['a', '\x1f'], ['zzz', 'İ'], ['', 'b a'], ['\x1e1', 'x']]) {
      assert.equal(await count('one_of', vs, cs), expected('one_of', vs, cs), `one_of ${JSON.stringify(vs)} cs=${cs}`);
      assert.equal(await count('not_in', vs, cs), expected('not_in', vs, cs), `not_in ${JSON.stringify(vs)} cs=${cs}`);
    }
  }
  // Under NOT, and beside other leaves in a tree.
  const tree = {
    filter_tree: {
      or: [
        { not: { filter: { type: 'collection', column_id: 'tags', operator: 'contains', value: 'a' } } },
        { filter: { type: 'collection', column_id: 'tags', operator: 'contains', value: '\x1f' } },
      ],
    },
  };
  assert.equal(
    (await store.count('span', projectId, { log_stream_id: runId, ...tree } as never)).total_count,
    3 * TAGS.filter((x) => !(x ?? []).includes('a') || (x ?? []).includes('\x1f')).length,
  );
});
