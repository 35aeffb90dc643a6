// Building a segment's token index (the file's format and how it is read: token-index.ts): one
// TokenBuilder per text column, fed each value's UTF-8 bytes with its row in the text index's pass
// over the segment (text-index.ts), then encoded. A tight loop over the bytes and a hash table over
// byte ranges: no JS string per value or token. A token seen in one row only keeps that row inline
// (most distinct tokens are rare); others grow a byte buffer of their own.
import { withCrc } from '../crc32.js';
import { TOKEN_MAGIC as MAGIC } from './token-index.js';

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
  return withCrc(parts);
}
