// Guarantees of the token index (src/storage/indexes/token-index.ts, built in text-index.ts):
// - over adversarial text (either case, the Kelvin sign and U+0130, dotless i, fullwidth letters,
//   JSON escapes, U+0080 (the build's value separator), NULLs, empty values, long tokens, values that
//   end mid-character), for needles of ASCII letters and digits, the rows whose tokens contain the
//   lowercased needle are exactly those DuckDB's case-insensitive scan (the filter compiler's
//   pattern, and contains over lower()) finds, in every column, across row groups;
// - the file's sections parse back, and a damaged or cut file is refused.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Database } from '../../../src/db/database.js';
import { caselessPattern } from '../../../src/query/compile-filter.js';
import { buildTextIndexFiles, TEXT_COLUMNS } from '../../../src/storage/indexes/text-index.js';
import {
  loadTokenIndex,
  markRows,
  tokenFileRows,
  tokenFileSound,
  tokenNeedle,
  tokensContaining,
} from '../../../src/storage/indexes/token-index.js';
import { tempDir } from '../../support/helpers.js';
import { ident, sql } from '../../../src/query/sql.js';
import { stringLiteral } from '../../../src/db/sql-string.js';

const FRAGMENTS = [
  'warranty',
  'WARRANTY',
  'Warranty',
  'warRanty',
  'nowarrantyhere',
  'war-ranty',
  'war ranty',
  'warrant',
  'y',
  ' ',
  '\u212Aiwi',
  'kiwi',
  'KİWİ',
  'kıwı',
  'İstanbul',
  'ISTANBUL',
  '\u212A',
  'İ',
  'ｗａｒｒａｎｔｙ',
  'warr\u00ADanty',
  '{"q":"\\nwarranty"}',
  '"warranty\\u00e9"',
  '\\u0077arranty',
  'warrantyé',
  'éwarranty',
  'a\u0080warranty',
  '\u0080',
  '123warranty456',
  '0',
  '42',
  'ß',
  'ﬁle',
  'file',
  '😀warranty😀',
  'x'.repeat(700),
  'wArRaNtY'.repeat(40),
  '\n',
  '\t',
  '_',
  'k_i',
];
const NEEDLES = [
  'warranty',
  'WarRanty',
  'k',
  'i',
  'kiwi',
  'iwi',
  'istanbul',
  '0',
  '42',
  'y',
  'ranty4',
  'nowarrantyhere',
  'file',
  'x',
  'xxxx',
  'zzz',
  'tyw',
];

function rowsOf(n: number, seed: number): (string | null)[] {
  let x = seed >>> 0;
  const next = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0) >>> 8;
  return Array.from({ length: n }, () => {
    const r = next() % 100;
    if (r < 5) return null;
    if (r < 8) return '';
    const k = 1 + (next() % 5);
    return Array.from({ length: k }, () => FRAGMENTS[next() % FRAGMENTS.length]!).join(next() % 3 === 0 ? ' ' : '');
  });
}

test('token postings equal DuckDB case-insensitive contains on adversarial text', { timeout: 120_000 }, async (t) => {
  const dir = tempDir(t);
  const db = await Database.open();
  t.after(() => db.close());
  const conn = await db.dedicated();
  const n = 7000;
  const cols = { name: rowsOf(n, 1), input: rowsOf(n, 2), output: rowsOf(n, 3) };
  const file = join(dir, 'seg-1.parquet');
  await conn.run(sql`CREATE TABLE t (seq BIGINT, name VARCHAR, input VARCHAR, output VARCHAR)`);
  for (let i = 0; i < n; i += 500) {
    const ids = Array.from({ length: Math.min(500, n - i) }, (_, k) => i + k);
    await conn.run(
      sql`INSERT INTO t SELECT unnest(${ids}::BIGINT[]), unnest(${ids.map((k) => cols.name[k]!)}::VARCHAR[]),
          unnest(${ids.map((k) => cols.input[k]!)}::VARCHAR[]), unnest(${ids.map((k) => cols.output[k]!)}::VARCHAR[])`,
    );
  }
  await conn.run(sql`COPY (SELECT * FROM t ORDER BY seq) TO ${stringLiteral(file)} (FORMAT parquet, ROW_GROUP_SIZE 2048)`);
  const groups = await conn.all(sql`SELECT count(*) AS g FROM parquet_metadata(${file}) WHERE path_in_schema = 'seq'`);
  assert.ok(Number(groups[0]!['g']) >= 3, 'several row groups');

  const path = join(dir, 'seg-1.tok');
  await buildTextIndexFiles(conn, file, { tix: join(dir, 'seg-1.tix'), tok: path });
  const tok = readFileSync(path);
  assert.ok(tokenFileSound(readFileSync(path)));
  const ix = loadTokenIndex(path);
  assert.ok(ix);
  assert.equal(ix.rows, n);
  let nonEmpty = 0;
  for (const needle of NEEDLES) {
    const lowered = tokenNeedle(needle);
    assert.ok(lowered !== null, needle);
    for (let c = 0; c < TEXT_COLUMNS.length; c++) {
      const column = TEXT_COLUMNS[c]!;
      const bits = new Uint32Array(Math.ceil(n / 32));
      const col = ix.column(c);
      assert.ok(col);
      markRows(ix, col, tokensContaining(col, lowered), bits);
      const got: number[] = [];
      for (let r = 0; r < n; r++) if (bits[r >>> 5]! & (1 << (r & 31))) got.push(r);
      const byPattern = await conn.all(
        sql`SELECT seq FROM read_parquet(${file}) WHERE regexp_matches(${ident(column)}, ${caselessPattern(needle)!}) ORDER BY seq`,
      );
      const byLower = await conn.all(
        sql`SELECT seq FROM read_parquet(${file}) WHERE contains(lower(${ident(column)}), lower(${needle})) ORDER BY seq`,
      );
      assert.deepEqual(
        got,
        byPattern.map((r) => Number(r['seq'])),
        `${column} ${needle}: the filter's pattern`,
      );
      assert.deepEqual(
        got,
        byLower.map((r) => Number(r['seq'])),
        `${column} ${needle}: lower()`,
      );
      if (got.length > 0) nonEmpty++;
    }
  }
  assert.ok(nonEmpty > 30, 'most needles match somewhere');
  // A needle with anything but ASCII letters and digits is not for the token index.
  for (const bad of ['war ranty', 'war-ranty', 'é', '', 'İ', 'k_i']) assert.equal(tokenNeedle(bad), null, bad);

  // Damage: a flipped byte fails the checksum, a cut file does not load. The check on open reads the
  // file a chunk at a time (chunks of 7 and 4,096 bytes here: a checksum carried across chunks).
  assert.equal(tokenFileRows(path, 7), n);
  assert.equal(tokenFileRows(path, 4096), n);
  const damaged = Buffer.from(tok);
  damaged[damaged.length >> 1]! ^= 0x10;
  assert.equal(tokenFileSound(damaged), false);
  writeFileSync(path, damaged);
  assert.equal(tokenFileRows(path, 7), null);
  assert.equal(tokenFileRows(path), null);
  writeFileSync(path, tok.subarray(0, tok.length - 9));
  assert.equal(loadTokenIndex(path), null);
});
