// Building a segment's token index (the file's format and how it is read: token-index.ts): one
// TokenBuilder per text column, fed each value's UTF-8 bytes with its row in the text index's pass
// over the segment (text-index.ts), then encoded. A tight loop over the bytes and a hash table over
// byte ranges: no JS string per value or token. A token seen in one row only keeps that row inline
// (most distinct tokens are rare); others grow a byte buffer of their own. Postings held in memory
// are bounded: past a budget the caller spills them to a run file (posting-runs.ts) and the file is
// written from the runs and what is still held, token by token. The dictionary stays in memory (it
// grows with the distinct tokens, not the rows).
import { type FileSink, varintSize } from './file-sink.js';
import type { RunFile, RunReader } from './posting-runs.js';
import { TOKEN_MAGIC as MAGIC } from './token-index.js';

/** Bytes a posting buffer costs beyond its contents (the typed array object and its backing store's header). */
const BUFFER_OVERHEAD = 96;

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
  /** Posting bytes per token already spilled to runs. */
  #spilled = new Uint32Array(1 << 10);
  #held = 0;
  #arena = new Uint8Array(1 << 16);
  #arenaLen = 0;
  #tokens = 0;
  #tok = new Uint8Array(256);

  get tokens(): number {
    return this.#tokens;
  }

  /** Bytes the postings held in memory take (buffers and their overhead). */
  get heldBytes(): number {
    return this.#held;
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

  /** The id of the token in bytes [from, from + n) of `bytes` (lowercase token characters), added when new. */
  idOf(bytes: Uint8Array, from: number, n: number): number {
    let h = 0x811c9dc5;
    for (let i = from; i < from + n; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
    return this.#id(from === 0 ? bytes : bytes.subarray(from), n, h >>> 0);
  }

  /** Adds `row` to token `id`'s postings (rows of one token come in increasing order). */
  post(id: number, row: number): void {
    this.#posting(id, row);
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
    if (buf === undefined) {
      this.#post[id] = buf = new Uint8Array(8);
      this.#held += 8 + BUFFER_OVERHEAD;
    } else if (o + 5 > buf.length) {
      const b = new Uint8Array(buf.length * 2);
      b.set(buf);
      this.#post[id] = buf = b;
      this.#held += buf.length / 2;
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
    this.#spilled = grow(this.#spilled);
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
   * Appends the held postings to a run (records of token id, length and bytes, in id order) and lets
   * them go; returns the run's section. The deltas continue from each token's last row, so the bytes
   * of all runs and of what is held at the end, joined, are those of one build without spilling.
   */
  spill(run: RunFile): readonly [number, number] {
    const out = run.sink;
    const from = out.position;
    for (let id = 0; id < this.#tokens; id++) {
      const len = this.#postLen[id]!;
      if (len === 0) continue;
      out.varint(id);
      out.varint(len);
      out.write(this.#post[id]!.subarray(0, len));
      this.#spilled[id]! += len;
      this.#postLen[id] = 0;
      this.#post[id] = undefined;
    }
    this.#held = 0;
    return [from, out.position];
  }

  /**
   * Writes the column's section: token count, dictionary length, meta length and postings length
   * (u32 each), the dictionary (each token followed by a newline, which no token holds, so a needle
   * found in it lies in one token), then per token its row count and postings length (varints), then
   * the postings (deltas from the previous row, the first from -1): per token, its first row, then
   * its bytes from each run in order, then those still held.
   */
  writeSection(out: FileSink, runs: readonly RunReader[]): void {
    const n = this.#tokens;
    let metaLen = 0;
    let total = 0;
    for (let id = 0; id < n; id++) {
      const len = this.#postingsLen(id);
      metaLen += varintSize(this.#count[id]!) + varintSize(len);
      total += len;
    }
    if (total > 0xffff_ffff || this.#arenaLen + n > 0xffff_ffff) throw new Error('token index: a column past 4 GiB');
    out.u32(n);
    out.u32(this.#arenaLen + n);
    out.u32(metaLen);
    out.u32(total);
    for (let id = 0; id < n; id++) {
      const s = this.#start[id]!;
      out.write(this.#arena.subarray(s, s + this.#len[id]!));
      out.byte(10);
    }
    for (let id = 0; id < n; id++) {
      out.varint(this.#count[id]!);
      out.varint(this.#postingsLen(id));
    }
    for (let id = 0; id < n; id++) {
      out.varint(this.#first[id]! + 1);
      if (this.#spilled[id]! > 0) {
        for (const r of runs) if (r.id === id) r.copyTo(out);
      }
      const held = this.#postLen[id]!;
      if (held > 0) out.write(this.#post[id]!.subarray(0, held));
    }
    for (const r of runs) if (r.id !== -1) throw new Error('token index: a run holds a token past the last');
  }

  #postingsLen(id: number): number {
    return varintSize(this.#first[id]! + 1) + this.#spilled[id]! + this.#postLen[id]!;
  }
}

/** The file's head: magic, rows, column count (the columns' sections follow, then a CRC-32 of all before it). */
export function writeTokenHead(out: FileSink, rows: number, columns: number): void {
  out.u32(MAGIC);
  out.u32(rows);
  out.u32(columns);
}
