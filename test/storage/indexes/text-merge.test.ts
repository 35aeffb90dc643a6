// Guarantees of a merged segment's text index made from its inputs' (src/storage/indexes/text-merge.ts):
// - its token postings are exactly those a build from the merged file's text writes (every token and
//   its rows, per column), with rows dropped by the merge left out, a token whose every row was
//   dropped left out of the dictionary, and postings spilled to runs on the way;
// - each merged row group's trigram set holds every trigram a build from the text finds there (a
//   superset: skipping stays exact), and the file parses as an index of the merged row groups;
// - it declines, leaving no file, when the merged rows are not its inputs' in order less dropped
//   rows, when an input's token index is not checked yet, or when an input has none.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { type Connection, Database } from '../../../src/db/database.js';
import { stringLiteral } from '../../../src/db/sql-string.js';
import { sql } from '../../../src/query/sql.js';
import {
  buildTextIndexFiles,
  type KeySet,
  parseTextIndex,
  TEXT_COLUMNS,
  textIndexPath,
  tokenIndexPath,
} from '../../../src/storage/indexes/text-index.js';
import { type MergedFrom, mergeTextIndexFiles } from '../../../src/storage/indexes/text-merge.js';
import { loadTokenIndex } from '../../../src/storage/indexes/token-index.js';
import { tokenPostings as postings } from '../../support/token-postings.js';
import { markChecked, markUnchecked } from '../../../src/storage/indexes/unchecked-indexes.js';
import { tempDir } from '../../support/helpers.js';

const WORDS = ['warranty', 'Refund', 'İstanbul', '\u212Aelvin', 'order-42', 'the', 'THE', 'é', 'a1'];
const INPUTS = [5000, 3000, 4500];

/** A cell: common words everywhere, a per-row number on every third row, a word per row, `onlydropped` on dropped rows only. */
function cellOf(seq: number, col: number): string | null {
  if ((seq + col) % 19 === 0) return null;
  const parts: string[] = [];
  for (let k = 0; k < 1 + ((seq * 7 + col) % 4); k++) parts.push(WORDS[(seq * 31 + k * 11 + col) % WORDS.length]!);
  if (seq % 3 === 0) parts.push(`id${seq * 13 + col}`);
  // A word of its own per row (its seq in letters): a merged group's set that missed one of its source
  // groups misses its trigrams.
  parts.push(`zq${String.fromCharCode(97 + (seq % 26), 97 + (Math.floor(seq / 26) % 26), 97 + Math.floor(seq / 676))}`);
  if (dropped(seq)) parts.push('onlydropped');
  return parts.join(' ');
}

/** Rows a merge leaves out: every 41st, and a run that empties most of a row group. */
const dropped = (seq: number) => seq % 41 === 0 || (seq >= 6000 && seq < 7900);

async function segment(conn: Connection, file: string, from: number, n: number): Promise<void> {
  const ids = Array.from({ length: n }, (_, k) => from + k);
  const col = (c: number) => ids.map((r) => cellOf(r, c) ?? '~null~');
  await conn.run(
    sql`COPY (SELECT unnest(${ids}::BIGINT[]) AS seq, nullif(unnest(${col(0)}::VARCHAR[]), '~null~') AS name,
        nullif(unnest(${col(1)}::VARCHAR[]), '~null~') AS input, nullif(unnest(${col(2)}::VARCHAR[]), '~null~') AS output)
        TO ${stringLiteral(file)} (FORMAT parquet, ROW_GROUP_SIZE 2048)`,
  );
}

const keysOf = (set: KeySet): number[] => {
  if ('keys' in set) return [...set.keys];
  const out: number[] = [];
  for (let k = 0; k < set.bits.length * 32; k++) if (set.bits[k >>> 5]! & (1 << (k & 31))) out.push(k);
  return out;
};

/** Three indexed input segments and their merge (inputs in order, dropped rows left out), as merge.ts writes it. */
async function fixture(t: TestContext, order = 'seq') {
  const dir = tempDir(t);
  const db = await Database.open();
  t.after(() => db.close());
  const conn = await db.dedicated();
  const inputs: string[] = [];
  let from = 0;
  for (const n of INPUTS) {
    const file = join(dir, `seg-${inputs.length + 1}.parquet`);
    await segment(conn, file, from, n);
    await buildTextIndexFiles(conn, file, { tix: textIndexPath(file), tok: tokenIndexPath(file) });
    inputs.push(file);
    from += n;
  }
  const drop = Array.from({ length: from }, (_, s) => s).filter(dropped);
  const merged = join(dir, 'seg-9.parquet');
  // `order` only ever names a column of this fixture.
  const sorted = order === 'seq' ? sql`` : sql` ORDER BY seq DESC`;
  await conn.run(
    sql`COPY (SELECT * FROM read_parquet(${inputs}) WHERE NOT list_contains(${drop}::BIGINT[], seq)${sorted})
        TO ${stringLiteral(merged)} (FORMAT parquet, ROW_GROUP_SIZE 6144)`,
  );
  const rowGroups = async (f: string) =>
    (
      await conn.all(sql`SELECT row_group_num_rows AS n FROM parquet_metadata(${f}) WHERE path_in_schema = 'seq' ORDER BY row_group_id`)
    ).map((r) => Number(r['n']));
  const mergedFrom: MergedFrom = {
    inputs: await Promise.all(inputs.map(async (abs) => ({ abs, rowGroups: await rowGroups(abs) }))),
    dropped: new Set(drop),
  };
  return { dir, conn, inputs, merged, mergedFrom, to: { tix: join(dir, 'm.tix'), tok: join(dir, 'm.tok') } };
}

test("a merged segment's index from its inputs' has the postings of a build from its text, and trigram supersets", {
  timeout: 120_000,
}, async (t) => {
  const fx = await fixture(t);
  // A budget of one byte spills after every thousand tokens of every input column.
  assert.equal(await mergeTextIndexFiles(fx.conn, fx.merged, fx.mergedFrom, fx.to, 1), true);
  const built = { tix: join(fx.dir, 'b.tix'), tok: join(fx.dir, 'b.tok') };
  await buildTextIndexFiles(fx.conn, fx.merged, built);

  const got = postings(fx.to.tok);
  const want = postings(built.tok);
  for (let c = 0; c < TEXT_COLUMNS.length; c++) {
    assert.equal(got[c]!.size, want[c]!.size, `${TEXT_COLUMNS[c]}: distinct tokens`);
    for (const [token, rows] of want[c]!) assert.deepEqual(got[c]!.get(token), rows, `${TEXT_COLUMNS[c]} ${token}`);
    assert.equal(got[c]!.has('onlydropped'), false, 'a token of dropped rows only is left out');
    assert.ok((want[c]!.get('warranty')?.length ?? 0) > 1000, 'a common token');
  }
  assert.equal(loadTokenIndex(fx.to.tok)?.rows, loadTokenIndex(built.tok)?.rows);

  const mergedSets = parseTextIndex(readFileSync(fx.to.tix));
  const builtSets = parseTextIndex(readFileSync(built.tix));
  assert.ok(mergedSets && builtSets);
  assert.deepEqual(mergedSets.rows, builtSets.rows, 'the merged row groups');
  assert.ok(mergedSets.rows.length < 8, 'merged row groups hold rows of several input row groups');
  for (let g = 0; g < builtSets.rows.length; g++) {
    for (let c = 0; c < TEXT_COLUMNS.length; c++) {
      const have = new Set(keysOf(mergedSets.sets[g]![c]!));
      const missing: number[] = keysOf(builtSets.sets[g]![c]!).filter((k) => !have.has(k));
      assert.deepEqual(missing, [], `row group ${g}, ${TEXT_COLUMNS[c]}: every trigram of its text`);
    }
  }
  assert.deepEqual(
    readdirSync(fx.dir).filter((f) => f.includes('.run-')),
    [],
    'no run file left',
  );
});

test('it declines, leaving no file, when rows moved, an input is unchecked or has no index', { timeout: 120_000 }, async (t) => {
  const moved = await fixture(t, 'desc');
  assert.equal(await mergeTextIndexFiles(moved.conn, moved.merged, moved.mergedFrom, moved.to), false, 'rows out of order');
  assert.equal(existsSync(moved.to.tix) || existsSync(moved.to.tok), false);

  const fx = await fixture(t);
  markUnchecked('tokens', fx.inputs[1]!);
  t.after(() => markChecked('tokens', fx.inputs[1]!));
  assert.equal(await mergeTextIndexFiles(fx.conn, fx.merged, fx.mergedFrom, fx.to), false, 'an input not checked since open');
  markChecked('tokens', fx.inputs[1]!);
  rmSync(tokenIndexPath(fx.inputs[2]!));
  assert.equal(await mergeTextIndexFiles(fx.conn, fx.merged, fx.mergedFrom, fx.to), false, 'an input without a token index');
  assert.equal(existsSync(fx.to.tix) || existsSync(fx.to.tok), false);
});
