// The token index of a segment (part of the opt-in text index, beside it as `seg-N.tok`): per text
// column, a dictionary of the column's tokens and, per token, the sorted row positions (file row
// numbers) holding it, as delta varints. A token is a maximal run of ASCII letters and digits, plus
// U+0130 (read as i) and U+212A, the Kelvin sign (read as k), lowered as DuckDB's lower() does: those
// two are the only code points outside ASCII that it lowers into ASCII (text-index.ts). So a
// case-insensitive `contains` of a needle of ASCII letters and digits (compile-filter.ts: each needle
// character matches its two cases, and i and k those two code points too) matches a row exactly when
// one of the row's tokens contains the lowercased needle: a match is a run of token characters, so it
// lies inside one token. Counts of such filters come from the postings without reading the text
// (src/engine/token-count.ts).
//
// Built in the text index's pass over each row group's UTF-8 bytes: a hash table over byte ranges,
// no JS string per value or token. A token seen in one row only keeps that row inline (most distinct
// tokens are rare); others grow a byte buffer of their own.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { crc32 } from './crc32.js';

const MAGIC = 0x314b_4f54; // "TOK1"

/** Lowered ASCII token byte, or 0 for a byte that ends a token. */
const CLASS = new Uint8Array(256);
for (let c = 48; c <= 57; c++) CLASS[c] = c;
for (let c = 97; c <= 122; c++) CLASS[c] = c;
for (let c = 65; c <= 90; c++) CLASS[c] = c + 32;

/** One column's tokens and postings while a segment's index is built. */
export class TokenBuilder {
  #slots = new Int32Array(1 << 12); // token id + 1, open addressing
  #hash = new Uint32Array(1 << 10);
  #start = new Uint32Array(1 << 10);
  #len = new Uint32Array(1 << 10);
  #first = new Uint32Array(1 << 10);
  #last = new Int32Array(1 << 10);
  #count = new Uint32Array(1 << 10);
  #post: (Uint8Array | undefined)[] = [];
  #postLen = new Uint32Array(1 << 10);
  #arena = new Uint8Array(1 << 16);
  #arenaLen = 0;
  #tokens = 0;
  #tok = new Uint8Array(256);

  get tokens(): number {
    return this.#tokens;
  }

  /** Adds the tokens of bytes [from, to) of `text` (one value's UTF-8) to row `row` (rows come in increasing order). */
  add(text: Uint8Array, from: number, to: number, row: number): void {
    let tok = this.#tok;
    let n = 0;
    let h = 0x811c9dc5;
    for (let i = from; i <= to; i++) {
      let c = i < to ? text[i]! : 0;
      if (c >= 128) {
        if (c === 0xc4 && i + 1 < to && text[i + 1] === 0xb0) {
          c = 0x69; // U+0130
          i += 1;
        } else if (c === 0xe2 && i + 2 < to && text[i + 1] === 0x84 && text[i + 2] === 0xaa) {
          c = 0x6b; // U+212A
          i += 2;
        } else c = 0;
      } else c = CLASS[c]!;
      if (c !== 0) {
        if (n === tok.length) {
          const t = new Uint8Array(n * 2);
          t.set(tok);
          this.#tok = tok = t;
        }
        tok[n++] = c;
        h = Math.imul(h ^ c, 0x01000193);
      } else if (n > 0) {
        this.#posting(this.#id(tok, n, h >>> 0), row);
        n = 0;
        h = 0x811c9dc5;
      }
    }
  }

  #id(tok: Uint8Array, n: number, h: number): number {
    const slots = this.#slots;
    const mask = slots.length - 1;
    let s = h & mask;
    for (;;) {
      const v = slots[s]!;
      if (v === 0) break;
      const id = v - 1;
      if (this.#hash[id] === h && this.#len[id] === n) {
        const a = this.#arena;
        const o = this.#start[id]!;
        let k = 0;
        while (k < n && a[o + k] === tok[k]) k++;
        if (k === n) return id;
      }
      s = (s + 1) & mask;
    }
    const id = this.#tokens++;
    if (id === this.#hash.length) this.#growIds();
    if (this.#arenaLen + n > this.#arena.length) {
      const a = new Uint8Array(Math.max(this.#arena.length * 2, this.#arenaLen + n));
      a.set(this.#arena.subarray(0, this.#arenaLen));
      this.#arena = a;
    }
    this.#arena.set(tok.subarray(0, n), this.#arenaLen);
    this.#start[id] = this.#arenaLen;
    this.#arenaLen += n;
    this.#len[id] = n;
    this.#hash[id] = h;
    this.#last[id] = -1;
    slots[s] = id + 1;
    if (this.#tokens * 2 > slots.length) this.#rehash();
    return id;
  }

  #posting(id: number, row: number): void {
    const last = this.#last[id]!;
    if (last === row) return;
    if (last < 0) {
      this.#first[id] = row;
      this.#last[id] = row;
      this.#count[id] = 1;
      return;
    }
    if (row < last) throw new Error(`token index: row ${row} after ${last}`);
    let d = row - last;
    this.#last[id] = row;
    this.#count[id]!++;
    let buf = this.#post[id];
    let o = this.#postLen[id]!;
    if (buf === undefined) this.#post[id] = buf = new Uint8Array(8);
    else if (o + 5 > buf.length) {
      const b = new Uint8Array(buf.length * 2);
      b.set(buf);
      this.#post[id] = buf = b;
    }
    while (d >= 0x80) {
      buf[o++] = (d & 0x7f) | 0x80;
      d >>>= 7;
    }
    buf[o++] = d;
    this.#postLen[id] = o;
  }

  #growIds(): void {
    const grow = <T extends Uint32Array | Int32Array>(a: T): T => {
      const b = new (a.constructor as new (n: number) => T)(a.length * 2);
      b.set(a);
      return b;
    };
    this.#hash = grow(this.#hash);
    this.#start = grow(this.#start);
    this.#len = grow(this.#len);
    this.#first = grow(this.#first);
    this.#last = grow(this.#last);
    this.#count = grow(this.#count);
    this.#postLen = grow(this.#postLen);
  }

  #rehash(): void {
    const slots = new Int32Array(this.#slots.length * 2);
    const mask = slots.length - 1;
    for (let id = 0; id < this.#tokens; id++) {
      let s = this.#hash[id]! & mask;
      while (slots[s] !== 0) s = (s + 1) & mask;
      slots[s] = id + 1;
    }
    this.#slots = slots;
  }

  /**
   * The column's section: token count, dictionary length, the dictionary (each token followed by a
   * newline, which no token holds, so a needle found in it lies in one token), then per token its
   * row count and postings length (varints), then the postings (deltas from the previous row, the
   * first from -1).
   */
  encode(): Uint8Array[] {
    const n = this.#tokens;
    const dict = new Uint8Array(this.#arenaLen + n);
    let o = 0;
    for (let id = 0; id < n; id++) {
      const s = this.#start[id]!;
      dict.set(this.#arena.subarray(s, s + this.#len[id]!), o);
      o += this.#len[id]!;
      dict[o++] = 10;
    }
    const meta = new Uint8Array(n * 10 + 5);
    let m = 0;
    const put = (buf: Uint8Array, at: number, v: number): number => {
      while (v >= 0x80) {
        buf[at++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
      buf[at++] = v;
      return at;
    };
    const heads = new Uint8Array(n * 5);
    let hLen = 0;
    const headAt = new Uint32Array(n + 1);
    for (let id = 0; id < n; id++) {
      headAt[id] = hLen;
      hLen = put(heads, hLen, this.#first[id]! + 1);
    }
    headAt[n] = hLen;
    let total = 0;
    for (let id = 0; id < n; id++) {
      const len = headAt[id + 1]! - headAt[id]! + this.#postLen[id]!;
      total += len;
      m = put(meta, m, this.#count[id]!);
      m = put(meta, m, len);
    }
    const postings = new Uint8Array(total);
    let p = 0;
    for (let id = 0; id < n; id++) {
      postings.set(heads.subarray(headAt[id]!, headAt[id + 1]!), p);
      p += headAt[id + 1]! - headAt[id]!;
      const b = this.#post[id];
      if (b !== undefined) {
        postings.set(b.subarray(0, this.#postLen[id]!), p);
        p += this.#postLen[id]!;
      }
    }
    const head = new Uint8Array(16);
    const v = new DataView(head.buffer);
    v.setUint32(0, n, true);
    v.setUint32(4, dict.length, true);
    v.setUint32(8, m, true);
    v.setUint32(12, total, true);
    return [head, dict, meta.subarray(0, m), postings];
  }
}

/** A whole file's bytes: magic, rows, column count, the columns' sections, then a CRC-32 of all before it. */
export function encodeTokenIndex(rows: number, columns: readonly TokenBuilder[]): Uint8Array {
  const parts: Uint8Array[] = [];
  const head = new Uint8Array(12);
  const hv = new DataView(head.buffer);
  hv.setUint32(0, MAGIC, true);
  hv.setUint32(4, rows, true);
  hv.setUint32(8, columns.length, true);
  parts.push(head);
  for (const c of columns) parts.push(...c.encode());
  const total = parts.reduce((n, x) => n + x.length, 0);
  const out = new Uint8Array(total + 4);
  let o = 0;
  for (const x of parts) {
    out.set(x, o);
    o += x.length;
  }
  new DataView(out.buffer).setUint32(total, crc32(out.subarray(0, total)), true);
  return out;
}

// ---------------------------------------------------------------- reading

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
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null;
  }
  try {
    const total = fstatSync(fd).size;
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
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
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
      const buf = Buffer.allocUnsafe(len);
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
    x -= (x >>> 1) & 0x55555555;
    x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
    n += (Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24);
  }
  return n;
}

/** Whether a case-insensitive `contains` needle can be answered from tokens: ASCII letters and digits only. */
export function tokenNeedle(needle: string): string | null {
  return /^[A-Za-z0-9]+$/.test(needle) ? needle.toLowerCase() : null;
}
