// Guarantees of the bounded text index build (text-index.ts buildTextIndexFiles, token-builder.ts,
// posting-runs.ts):
// - a build that spills its postings to a run file after every row group writes the same bytes, in
//   both files, as one that holds them all;
// - every token's postings in the file are exactly the rows holding it (tokens found here in JS), so
//   a run boundary that dropped or repeated a posting fails;
// - no run or temporary file is left beside the index, after a build or a failed one.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Database } from '../../../src/db/database.js';
import { stringLiteral } from '../../../src/db/sql-string.js';
import { sql } from '../../../src/query/sql.js';
import { buildTextIndexFiles, TEXT_COLUMNS } from '../../../src/storage/indexes/text-index.js';
import { loadTokenIndex } from '../../../src/storage/indexes/token-index.js';
import { tempDir } from '../../support/helpers.js';
import { tokenPostings } from '../../support/token-postings.js';

const WORDS = ['warranty', 'Refund', 'İstanbul', '\u212Aelvin', 'x'.repeat(300), 'a1', 'é', 'order-42', 'ＡＢ', '😀ok', 'the', 'THE'];

/** Values where common words repeat in every row group and rare ones (per-row numbers) appear once. */
function cellOf(row: number, col: number): string | null {
  if ((row + col) % 17 === 0) return null;
  const parts: string[] = [];
  for (let k = 0; k < 1 + ((row * 7 + col) % 5); k++) parts.push(WORDS[(row * 31 + k * 11 + col) % WORDS.length]!);
  if (row % 3 === 0) parts.push(`id${row * 13 + col}`);
  return parts.join(row % 2 === 0 ? ' ' : '\n');
}

/** Tokens of a value as the index reads them: runs of ASCII letters and digits, lowered; U+0130 is i, U+212A k. */
function tokensOf(v: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (const ch of v) {
    const c = ch === '\u0130' ? 'i' : ch === '\u212A' ? 'k' : ch;
    if (/^[A-Za-z0-9]$/.test(c)) cur += c.toLowerCase();
    else if (cur) {
      out.push(cur);
      cur = '';
    }
  }
  if (cur) out.push(cur);
  return out;
}

test('a build spilling after every row group writes the bytes of one holding everything; postings equal the rows', {
  timeout: 120_000,
}, async (t) => {
  const dir = tempDir(t);
  const db = await Database.open();
  t.after(() => db.close());
  const conn = await db.dedicated();
  const n = 20_000;
  const file = join(dir, 'seg-1.parquet');
  await conn.run(sql`CREATE TABLE t (seq BIGINT, name VARCHAR, input VARCHAR, output VARCHAR)`);
  for (let i = 0; i < n; i += 2000) {
    const ids = Array.from({ length: 2000 }, (_, k) => i + k);
    // NULLs as a marker turned back into NULL in SQL (lists bound with NULLs in them came out shifted).
    const col = (c: number) => ids.map((r) => cellOf(r, c) ?? '~null~');
    await conn.run(
      sql`INSERT INTO t SELECT unnest(${ids}::BIGINT[]), nullif(unnest(${col(0)}::VARCHAR[]), '~null~'),
          nullif(unnest(${col(1)}::VARCHAR[]), '~null~'), nullif(unnest(${col(2)}::VARCHAR[]), '~null~')`,
    );
  }
  await conn.run(sql`COPY (SELECT * FROM t ORDER BY seq) TO ${stringLiteral(file)} (FORMAT parquet, ROW_GROUP_SIZE 2048)`);

  const held = { tix: join(dir, 'held.tix'), tok: join(dir, 'held.tok') };
  const spilled = { tix: join(dir, 'spilled.tix'), tok: join(dir, 'spilled.tok') };
  assert.equal((await buildTextIndexFiles(conn, file, held, Number.POSITIVE_INFINITY)).runs, 0);
  const { runs } = await buildTextIndexFiles(conn, file, spilled, 1);
  assert.ok(readFileSync(held.tok).equals(readFileSync(spilled.tok)), 'token files equal byte for byte');
  assert.ok(readFileSync(held.tix).equals(readFileSync(spilled.tix)), 'trigram files equal byte for byte');
  assert.ok(runs >= 9, `a run per row group (${runs})`);
  assert.deepEqual(readdirSync(dir).sort(), ['held.tix', 'held.tok', 'seg-1.parquet', 'spilled.tix', 'spilled.tok']);

  // Every token's postings, decoded from the spilled build's file, against the rows found here.
  const ix = loadTokenIndex(spilled.tok);
  assert.ok(ix);
  assert.equal(ix.rows, n);
  const decoded = tokenPostings(spilled.tok);
  for (let c = 0; c < TEXT_COLUMNS.length; c++) {
    const want = new Map<string, number[]>();
    for (let r = 0; r < n; r++) {
      const v = cellOf(r, c);
      if (v === null) continue;
      for (const tok of new Set(tokensOf(v))) {
        let rows = want.get(tok);
        if (!rows) want.set(tok, (rows = []));
        rows.push(r);
      }
    }
    const got = decoded[c]!;
    assert.equal(got.size, want.size, `${TEXT_COLUMNS[c]}: distinct tokens`);
    for (const [token, rows] of want) assert.deepEqual(got.get(token), rows, `${TEXT_COLUMNS[c]} ${token}`);
    assert.ok((want.get('warranty')?.length ?? 0) > n / 10, 'a token in every row group');
  }
});

test('a failed build leaves neither file nor run beside them', async (t) => {
  const dir = tempDir(t);
  const db = await Database.open();
  t.after(() => db.close());
  const conn = await db.dedicated();
  const to = { tix: join(dir, 'x.tix'), tok: join(dir, 'x.tok') };
  await assert.rejects(buildTextIndexFiles(conn, join(dir, 'missing.parquet'), to, 1));
  assert.deepEqual(readdirSync(dir), []);
});
