// A token index file decoded in full (src/storage/indexes/token-index.ts): per column, each token's rows.
// Two files with the same postings may order their dictionaries differently (a merged segment's index
// is made from its inputs', a rebuild from the text), so tests compare these maps, not bytes.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { TEXT_COLUMNS } from '../../src/storage/indexes/text-index.js';
import { loadTokenIndex } from '../../src/storage/indexes/token-index.js';

/** Per column, each token's rows, decoded from a token index file (each token once, its postings where the meta says). */
export function tokenPostings(path: string): Map<string, number[]>[] {
  const ix = loadTokenIndex(path);
  assert.ok(ix, `${path} loads`);
  const bytes = readFileSync(path);
  return TEXT_COLUMNS.map((_, c) => {
    const col = ix.column(c);
    assert.ok(col);
    const out = new Map<string, number[]>();
    for (let k = 0; k < col.counts.length; k++) {
      const rows: number[] = [];
      let o: number = col.at[k]!;
      let row = -1;
      for (let i = 0; i < col.counts[k]!; i++) {
        let d = 0;
        let mul = 1;
        for (;;) {
          const b = bytes[o++]!;
          d += (b & 0x7f) * mul;
          if (b < 0x80) break;
          mul *= 128;
        }
        rows.push((row += d));
      }
      const token = col.dict.toString('latin1', col.starts[k]!, col.starts[k + 1]! - 1);
      assert.equal(o, col.at[k + 1]!, `${TEXT_COLUMNS[c]} ${token}: postings end where the next begin`);
      assert.ok(!out.has(token), `${token} once in the dictionary`);
      out.set(token, rows);
    }
    return out;
  });
}
