// The token index of a segment (part of the opt-in text index, beside it as `seg-N.tok`): per text
// column, a dictionary of the column's tokens and, per token, the sorted row positions (file row
// numbers) holding it, as delta varints. A token is a maximal run of ASCII letters and digits, plus
// U+0130 (read as i) and U+212A, the Kelvin sign (read as k), lowered as DuckDB's lower() does: those
// two are the only code points outside ASCII that it lowers into ASCII (text-index.ts). So a
// case-insensitive `contains` of a needle of ASCII letters and digits (compile-filter.ts: each needle
// character matches its two cases, and i and k those two code points too) matches a row exactly when
// one of the row's tokens contains the lowercased needle: a match is a run of token characters, so it
// lies inside one token. Counts of such filters come from the postings without reading the text
// (src/query/exec/token-count.ts).
// Built by token-builder.ts in the text index's pass over each row group's UTF-8 bytes.
import { closeSync, openSync, readSync } from 'node:fs';
import { crc32 } from '../crc32.js';
import { indexReads, withFile } from '../fs-util.js';

export const TOKEN_MAGIC = 0x314b_4f54; // "TOK1"
const MAGIC = TOKEN_MAGIC;

/** One column's dictionary in memory; postings stay in the file (read per query). */
export interface TokenColumn {
  readonly dict: Buffer;
  /** Offset of each token in dict, and dict.length at the end. */
  readonly starts: Uint32Array;
  readonly counts: Uint32Array;
  /** Absolute file offset of each token's postings, and the end of the last. */
  readonly at: Float64Array;
}

export interface TokenIndex {
  readonly path: string;
  readonly rows: number;
  readonly columns: number;
  /** A column's dictionary, read on its first use (a count reads only the columns it tests); null when damaged. */
  column(c: number): TokenColumn | null;
}

const readVarint = (buf: Uint8Array, pos: { o: number }): number => {
  let v = 0;
  let mul = 1;
  for (;;) {
    const b = buf[pos.o++]!;
    v += (b & 0x7f) * mul;
    if (b < 0x80) return v;
    mul *= 128;
    if (mul > 2 ** 35) throw new Error('bad varint');
  }
};

/** Whether a whole file's bytes are sound: magic, length and checksum. */
export function tokenFileSound(buf: Uint8Array): boolean {
  if (buf.length < 16) return false;
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  return v.getUint32(0, true) === MAGIC && crc32(buf.subarray(0, buf.length - 4)) === v.getUint32(buf.length - 4, true);
}

/**
 * The row count of a file that is sound (magic, length and checksum), or null; read a chunk at a time,
 * so checking a segment's index on open never holds the file (hundreds of MB at 10M spans) in memory.
 */
export function tokenFileRows(path: string, chunkBytes = 4 << 20): number | null {
  return withFile(path, (fd, total) => {
    if (total < 16) return null;
    const chunk = Buffer.allocUnsafe(Math.max(8, Math.min(total, chunkBytes)));
    let crc = 0;
    let rows = -1;
    for (let at = 0; at < total - 4; ) {
      const n = readSync(fd, chunk, 0, Math.min(chunk.length, total - 4 - at), at);
      if (n <= 0) return null;
      if (at === 0) {
        if (n < 8 || chunk.readUInt32LE(0) !== MAGIC) return null;
        rows = chunk.readUInt32LE(4);
      }
      crc = crc32(chunk.subarray(0, n), crc);
      at += n;
    }
    const tail = Buffer.alloc(4);
    if (readSync(fd, tail, 0, 4, total - 4) !== 4) return null;
    return tail.readUInt32LE(0) === crc ? rows : null;
  });
}

function readAt(path: string, at: number, len: number): Buffer {
  const fd = openSync(path, 'r');
  try {
    const b = Buffer.allocUnsafe(len);
    if (readSync(fd, b, 0, len, at) !== len) throw new Error('short');
    return b;
  } finally {
    closeSync(fd);
  }
}

/** A column's dictionary, token counts and postings offsets, from its section at `o`; null when damaged. */
function loadColumn(path: string, o: number): TokenColumn | null {
  try {
    const h = readAt(path, o, 16);
    const n = h.readUInt32LE(0);
    const dictLen = h.readUInt32LE(4);
    const metaLen = h.readUInt32LE(8);
    const postLen = h.readUInt32LE(12);
    o += 16;
    const both = readAt(path, o, dictLen + metaLen);
    const dict = both.subarray(0, dictLen);
    const starts = new Uint32Array(n + 1);
    let t = 0;
    for (let i = 0; i < dictLen; i++) if (dict[i] === 10) starts[++t] = i + 1;
    if (t !== n) return null;
    const meta = both.subarray(dictLen);
    const counts = new Uint32Array(n);
    const at = new Float64Array(n + 1);
    const pos = { o: 0 };
    let p = o + dictLen + metaLen;
    for (let i = 0; i < n; i++) {
      counts[i] = readVarint(meta, pos);
      at[i] = p;
      p += readVarint(meta, pos);
    }
    at[n] = p;
    return pos.o === metaLen && p === o + dictLen + metaLen + postLen ? { dict, starts, counts, at } : null;
  } catch {
    return null;
  }
}

/**
 * Reads a file's header and the places of its column sections (dictionaries are read on first use,
 * postings per query); null when damaged or missing. The checksum is tested on open
 * (ensureTextIndex), not here: a query reads a few MB of the file, not all of it.
 */
export function loadTokenIndex(path: string): TokenIndex | null {
  return withFile(path, (fd, total): TokenIndex | null => {
    const read = (at: number, len: number): Buffer => {
      const b = Buffer.allocUnsafe(len);
      if (at + len > total || readSync(fd, b, 0, len, at) !== len) throw new Error('short');
      return b;
    };
    const head = read(0, 12);
    if (head.readUInt32LE(0) !== MAGIC) return null;
    const rows = head.readUInt32LE(4);
    const ncol = head.readUInt32LE(8);
    const sections: number[] = [];
    let o = 12;
    for (let c = 0; c < ncol; c++) {
      sections.push(o);
      const h = read(o, 16);
      o += 16 + h.readUInt32LE(4) + h.readUInt32LE(8) + h.readUInt32LE(12);
    }
    if (o + 4 !== total) return null;
    const loaded = new Map<number, TokenColumn | null>();
    return {
      path,
      rows,
      columns: ncol,
      column(c) {
        let col = loaded.get(c);
        if (col === undefined) loaded.set(c, (col = c < sections.length ? loadColumn(path, sections[c]!) : null));
        return col;
      },
    };
  });
}

/** Ids of the tokens of a column that contain `needle` (lowercase ASCII letters and digits). */
export function tokensContaining(col: TokenColumn, needle: string): number[] {
  const out: number[] = [];
  const s = col.starts;
  let from = 0;
  for (;;) {
    const i = col.dict.indexOf(needle, from, 'latin1');
    if (i < 0) return out;
    let a = 0;
    let b = s.length - 1;
    while (a < b) {
      const m = (a + b + 1) >>> 1;
      if (s[m]! <= i) a = m;
      else b = m - 1;
    }
    out.push(a);
    from = s[a + 1]!;
  }
}

/** Sets the bits of the rows holding any of `tokens` (postings read from the file). */
export function markRows(ix: TokenIndex, col: TokenColumn, tokens: readonly number[], bits: Uint32Array): void {
  if (tokens.length === 0) return;
  const fd = openSync(ix.path, 'r');
  try {
    for (const t of tokens) {
      const len = col.at[t + 1]! - col.at[t]!;
      const buf = indexReads.get(len);
      if (readSync(fd, buf, 0, len, col.at[t]!) !== len) throw new Error(`token index ${ix.path}: short read`);
      let row = -1;
      let o = 0;
      for (let k = 0; k < col.counts[t]!; k++) {
        let d = 0;
        let shift = 0;
        for (;;) {
          const b = buf[o++]!;
          d += (b & 0x7f) * 2 ** shift;
          if (b < 0x80) break;
          shift += 7;
        }
        row += d;
        bits[row >>> 5]! |= 1 << (row & 31);
      }
    }
  } finally {
    closeSync(fd);
  }
}

export function popcount(bits: Uint32Array): number {
  let n = 0;
  for (let i = 0; i < bits.length; i++) {
    let x = bits[i]!;
    // Most words of a selective answer are empty.
    if (x === 0) continue;
    x -= (x >>> 1) & 0x55555555;
    x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
    n += Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
  }
  return n;
}

/** Whether a case-insensitive `contains` needle can be answered from tokens: ASCII letters and digits only. */
export function tokenNeedle(needle: string): string | null {
  return /^[A-Za-z0-9]+$/.test(needle) ? needle.toLowerCase() : null;
}
