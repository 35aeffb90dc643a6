// A segment's id filter (`seg-N.idf`, beside its `.ids`): a blocked Bloom filter over its 53-bit id
// hashes plus every FENCE_STEP-th hash of the sorted `.ids` file. Written once with the segment and
// never changed, so opening a store reads these (about 1.3 bytes per id) instead of every hash (8), and
// a filter hit is confirmed by reading the one block of `.ids` the fences point to (ids-file.ts).
import { closeSync, fstatSync, openSync, readFileSync, readSync, writeFileSync } from 'node:fs';

/** Bits of filter per id: about 1% of absent ids pass a segment's filter (each then costs a 4 KiB read). */
const BITS_PER_KEY = 10;
/** Bits set per key, all in one 64-byte block (one cache line per lookup). */
export const PROBES = 7;
/** Hashes of `.ids` per fence: 4 KiB, one read per confirmed lookup. */
export const FENCE_STEP = 512;

const MAGIC = 0x46494c54; // "TLIF"
const VERSION = 1;
const HEADER = 32;

export function idFilterPath(parquetPath: string): string {
  return parquetPath.replace(/\.parquet$/, '.idf');
}

export class IdFilter {
  /** Hashes in the segment's `.ids` file when the filter was built. */
  readonly count: number;
  readonly blocks: number;
  readonly bits: Uint32Array;
  /** hashes[i * FENCE_STEP] of the sorted `.ids`. */
  readonly fences: Float64Array;

  constructor(count: number, fences: Float64Array, bits: Uint32Array) {
    this.count = count;
    this.fences = fences;
    this.bits = bits;
    this.blocks = bits.length / 16;
  }

  /** The filter of a segment's sorted hashes. */
  static of(sorted: Float64Array): IdFilter {
    const blocks = Math.max(1, Math.ceil((sorted.length * BITS_PER_KEY) / 512));
    const bits = new Uint32Array(blocks * 16);
    const fences = new Float64Array(Math.ceil(sorted.length / FENCE_STEP));
    for (let i = 0; i < fences.length; i++) fences[i] = sorted[i * FENCE_STEP]!;
    const f = new IdFilter(sorted.length, fences, bits);
    for (let i = 0; i < sorted.length; i++) f.#add(sorted[i]!);
    return f;
  }

  /** Bytes held. */
  get bytes(): number {
    return this.bits.byteLength + this.fences.byteLength;
  }

  #add(h: number): void {
    const base = this.#base(h);
    let x = mix(h);
    for (let k = 0; k < PROBES; k++) {
      x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35) + k;
      const bit = x >>> 23;
      this.bits[base + (bit >>> 5)]! |= 1 << (bit & 31);
    }
  }

  /** False: the segment certainly holds no id of hash `h`. */
  has(h: number): boolean {
    return this.hasProbe(probe(h));
  }

  /** `has` for a probe made once for every filter asked about the same hash. */
  hasProbe(p: Probe): boolean {
    return blockHas(this.bits, this.blocks, p);
  }

  /** The block is picked by the hash's top bits, so sorted hashes fill the filter front to back. */
  #base(h: number): number {
    return Math.min(this.blocks - 1, Math.floor((h / 9007199254740992) * this.blocks)) * 16;
  }

  /** The file's bytes: header, fences, filter. */
  encode(): Uint8Array {
    const out = new Uint8Array(HEADER + this.fences.byteLength + this.bits.byteLength);
    const head = new DataView(out.buffer);
    head.setUint32(0, MAGIC, true);
    head.setUint32(4, VERSION, true);
    head.setUint32(8, this.count, true);
    head.setUint32(12, this.blocks, true);
    head.setUint32(16, FENCE_STEP, true);
    head.setUint32(20, this.fences.length, true);
    out.set(new Uint8Array(this.fences.buffer, this.fences.byteOffset, this.fences.byteLength), HEADER);
    out.set(new Uint8Array(this.bits.buffer, this.bits.byteOffset, this.bits.byteLength), HEADER + this.fences.byteLength);
    return out;
  }

  /** A filter from its file's bytes, or null when they are not one (of this version). */
  static decode(buf: Uint8Array): IdFilter | null {
    if (buf.byteLength < HEADER) return null;
    // Views need 8-byte alignment: a small file's buffer may be a slice of a shared pool.
    const own = buf.byteOffset % 8 === 0 ? buf : new Uint8Array(buf);
    const head = new DataView(own.buffer, own.byteOffset, HEADER);
    if (head.getUint32(0, true) !== MAGIC || head.getUint32(4, true) !== VERSION || head.getUint32(16, true) !== FENCE_STEP) return null;
    const count = head.getUint32(8, true);
    const blocks = head.getUint32(12, true);
    const fences = head.getUint32(20, true);
    if (blocks < 1 || fences !== Math.ceil(count / FENCE_STEP) || own.byteLength !== HEADER + fences * 8 + blocks * 64) return null;
    return new IdFilter(
      count,
      new Float64Array(own.buffer, own.byteOffset + HEADER, fences),
      new Uint32Array(own.buffer, own.byteOffset + HEADER + fences * 8, blocks * 16),
    );
  }
}

/**
 * Where a hash's bits lie in any filter: its place in the hash range (the block, once a filter's block
 * count is known) and the word and bit of each probe in the block. Made once per looked-up id.
 */
export interface Probe {
  at: number;
  readonly words: Int32Array;
  readonly masks: Int32Array;
}

const shared: Probe = { at: 0, words: new Int32Array(PROBES), masks: new Int32Array(PROBES) };

/** Whether every bit of probe `p` is set in its block of a blocked filter of `blocks` 64-byte blocks. */
export function blockHas(bits: Uint32Array, blocks: number, p: Probe): boolean {
  const base = Math.min(blocks - 1, Math.floor(p.at * blocks)) * 16;
  const words = p.words;
  const masks = p.masks;
  for (let k = 0; k < PROBES; k++) if ((bits[base + words[k]!]! & masks[k]!) === 0) return false;
  return true;
}

/** The probe of `h`, in one object reused by every call (valid until the next one). */
export function probe(h: number): Probe {
  shared.at = h / 9007199254740992;
  let x = mix(h);
  for (let k = 0; k < PROBES; k++) {
    x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35) + k;
    const bit = x >>> 23;
    shared.words[k] = bit >>> 5;
    shared.masks[k] = 1 << (bit & 31);
  }
  return shared;
}

/** 32 bits for the in-block probes, from the low bits of the hash (the block came from the top ones). */
function mix(h: number): number {
  const low = h % 0x200000;
  const top = Math.floor(h / 0x200000);
  return Math.imul(low ^ Math.imul(top, 0x9e3779b1), 0x85ebca6b);
}

/** The filter file of the segment at `parquetPath`, or null when missing or not a filter. */
export function readIdFilter(parquetPath: string): IdFilter | null {
  let buf: Buffer;
  try {
    buf = readFileSync(idFilterPath(parquetPath));
  } catch {
    return null;
  }
  return IdFilter.decode(buf);
}

/**
 * The count and fences of the segment's filter file without its bits (a segment the store's filter
 * covers needs no bits of its own in memory), or null when missing or not a filter.
 */
export function readIdFences(parquetPath: string): IdFences | null {
  let fd: number;
  try {
    fd = openSync(idFilterPath(parquetPath), 'r');
  } catch {
    return null;
  }
  try {
    const size = fstatSync(fd).size;
    const head = new Uint8Array(HEADER);
    if (size < HEADER || readSync(fd, head, 0, HEADER, 0) !== HEADER) return null;
    const view = new DataView(head.buffer);
    if (view.getUint32(0, true) !== MAGIC || view.getUint32(4, true) !== VERSION || view.getUint32(16, true) !== FENCE_STEP) return null;
    const count = view.getUint32(8, true);
    const blocks = view.getUint32(12, true);
    const n = view.getUint32(20, true);
    if (blocks < 1 || n !== Math.ceil(count / FENCE_STEP) || size !== HEADER + n * 8 + blocks * 64) return null;
    const fences = new Float64Array(n);
    if (n > 0 && readSync(fd, new Uint8Array(fences.buffer), 0, n * 8, HEADER) !== n * 8) return null;
    return { count, blocks, fences };
  } finally {
    closeSync(fd);
  }
}

/** What searching a segment's `.ids` file in place needs (ids-file.ts), and where its filter's bits lie. */
export interface IdFences {
  /** Hashes in the `.ids` file. */
  readonly count: number;
  /** Blocks of its filter. */
  readonly blocks: number;
  /** hashes[i * FENCE_STEP] of the sorted `.ids`. */
  readonly fences: Float64Array;
}

/** Writes the filter file (the caller fsyncs it with the segment's folder). */
export function writeIdFilter(parquetPath: string, filter: IdFilter): number {
  const bytes = filter.encode();
  writeFileSync(idFilterPath(parquetPath), bytes);
  return bytes.byteLength;
}

/** One block read from a filter file (reads are synchronous: never two at once). */
const diskBlock = new Int32Array(16);
const diskBlockBytes = new Uint8Array(diskBlock.buffer);

/**
 * A segment's filter asked from its file, one 64-byte block per hash: a segment the store's filter
 * covers keeps no bits in memory, and only the store filter's hits (stored ids, a few % of new ones)
 * get here.
 */
export class IdFilterOnDisk {
  readonly #path: string;
  readonly #blocks: number;
  readonly #bitsAt: number;
  #fd: number | null = null;

  constructor(parquetPath: string, f: IdFences) {
    this.#path = idFilterPath(parquetPath);
    this.#blocks = f.blocks;
    this.#bitsAt = HEADER + f.fences.length * 8;
  }

  hasProbe(p: Probe): boolean {
    const b = Math.min(this.#blocks - 1, Math.floor(p.at * this.#blocks));
    if (this.#fd === null) {
      try {
        this.#fd = openSync(this.#path, 'r');
      } catch {
        return true; // no file tells nothing: the `.ids` file is asked
      }
    }
    // A short read tells nothing either.
    if (readSync(this.#fd, diskBlockBytes, 0, 64, this.#bitsAt + b * 64) !== 64) return true;
    for (let k = 0; k < PROBES; k++) if ((diskBlock[p.words[k]!]! & p.masks[k]!) === 0) return false;
    return true;
  }

  close(): void {
    if (this.#fd !== null) closeSync(this.#fd);
    this.#fd = null;
  }
}
