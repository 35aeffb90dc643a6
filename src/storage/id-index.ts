// Which record ids already exist, so a retried or updated record replaces its old version instead
// of duplicating it. Sealed segments each keep a sorted array of 53-bit id hashes (persisted next
// to the segment); one Bloom filter over all of them answers "certainly new" for almost every id
// in one or two cache misses. A hash hit is only a candidate: the caller confirms it in DuckDB.
// In memory each segment keeps its hashes packed (PackedHashes, ~4.4 bytes per id instead of 8).

/** 53-bit hash of an id string (two FNV-1a variants), exact as a JS number. */
export function idHash(id: string): number {
  return idHashAt(id, 0, id.length);
}

/**
 * idHash of text.slice(from, to), without making that string: a bulk load hashes ids out of one
 * string per block of rows (no JS string per id).
 */
export function idHashAt(text: string, from: number, to: number): number {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  return (a >>> 0) * 0x200000 + ((b >>> 0) & 0x1fffff);
}

export function sortedHashes(ids: Iterable<string>): Float64Array {
  const out: number[] = [];
  for (const id of ids) out.push(idHash(id));
  return Float64Array.from(out).sort();
}

export function hasHash(sorted: Float64Array, h: number): boolean {
  return hasSorted(sorted, h);
}

/**
 * Binary search of an ascending array of numbers, or of its slice [from, to) (id hashes here, a
 * packed bucket below, trigram keys in text-index.ts).
 */
export function hasSorted(sorted: ArrayLike<number>, h: number, from = 0, to = sorted.length): boolean {
  let lo = from;
  let hi = to - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = sorted[mid]!;
    if (v === h) return true;
    if (v < h) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/**
 * A segment's sorted id hashes in about 4.4 bytes each instead of 8: the top `bits` bits of a hash
 * pick a bucket (2^bits buckets, n/8 to n/4 of them: 0.25-0.5 bytes per hash of offsets), and the
 * next 32 bits are stored. So 32 + bits (about 29 + log2 n) of the 53 bits are compared: a segment
 * answers "maybe" for an absent id about once in 2^29 lookups, and every hit is a candidate the
 * caller confirms in DuckDB anyway. The full hashes stay in the segment's .ids file (merges read them
 * from there).
 */
export class PackedHashes {
  readonly length: number;
  readonly bits: number;
  readonly #offsets: Uint32Array;
  readonly #low: Uint32Array;

  constructor(sorted: Float64Array) {
    this.length = sorted.length;
    this.bits = Math.max(0, Math.min(21, Math.floor(Math.log2(Math.max(1, sorted.length))) - 3));
    const buckets = 2 ** this.bits;
    this.#offsets = new Uint32Array(buckets + 1);
    this.#low = new Uint32Array(sorted.length);
    const span = 2 ** (53 - this.bits);
    const step = 2 ** (21 - this.bits);
    let b = 0;
    for (let i = 0; i < sorted.length; i++) {
      const h = sorted[i]!;
      const p = Math.floor(h / span);
      while (b < p) this.#offsets[++b] = i;
      this.#low[i] = Math.floor(h / step) % 0x100000000;
    }
    while (b < buckets) this.#offsets[++b] = sorted.length;
  }

  /** Bytes held. */
  get bytes(): number {
    return this.#offsets.byteLength + this.#low.byteLength;
  }

  has(h: number): boolean {
    const p = Math.floor(h / 2 ** (53 - this.bits));
    const q = Math.floor(h / 2 ** (21 - this.bits)) % 0x100000000;
    return hasSorted(this.#low, q, this.#offsets[p]!, this.#offsets[p + 1]!);
  }

  /** Calls `fn` with the top 32 bits of every hash (what the Bloom filter is keyed on). */
  forEachTop(fn: (top: number) => void): void {
    const shift = 2 ** this.bits;
    const hiMul = 2 ** (32 - this.bits);
    for (let p = 0; p + 1 < this.#offsets.length; p++) {
      for (let i = this.#offsets[p]!; i < this.#offsets[p + 1]!; i++) fn(p * hiMul + Math.floor(this.#low[i]! / shift));
    }
  }
}

/** The top 32 bits of a 53-bit id hash. */
const top32 = (h: number) => Math.floor(h / 0x200000);

/**
 * A Bloom filter over the top 32 bits of id hashes, ~10-20 bits per key; grows by rebuilding. Blocked:
 * a key's 7 bits lie in one 64-byte block, so an add or a lookup costs one cache miss, where 7 bits
 * spread over the whole array cost 7 (opening a 10M-span store spent ~4 s of CPU filling the filter).
 * At 10 bits a key it answers "maybe" for ~1.0% of absent keys (0.8% unblocked).
 */
export class IdBloom {
  readonly bits: Uint32Array;
  /** log2 of the number of 16-word blocks. */
  readonly #blockBits: number;
  constructor(capacity: number) {
    let words = 1024;
    while (words * 32 < capacity * 10) words *= 2;
    this.bits = new Uint32Array(words);
    this.#blockBits = Math.log2(words / 16);
  }
  add(top: number): void {
    const base = (top >>> (32 - this.#blockBits)) << 4;
    let x = Math.imul(top ^ (top >>> 16), 0x85ebca6b);
    for (let k = 0; k < 7; k++) {
      x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35) + k;
      const bit = x >>> 23;
      this.bits[base + (bit >>> 5)]! |= 1 << (bit & 31);
    }
  }
  has(top: number): boolean {
    const base = (top >>> (32 - this.#blockBits)) << 4;
    let x = Math.imul(top ^ (top >>> 16), 0x85ebca6b);
    for (let k = 0; k < 7; k++) {
      x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35) + k;
      const bit = x >>> 23;
      if ((this.bits[base + (bit >>> 5)]! & (1 << (bit & 31))) === 0) return false;
    }
    return true;
  }
}

export interface IndexedSegment {
  /** Stable key of the segment (its file path relative to the data folder). */
  readonly key: string;
  readonly partition: string;
  /** Its sorted 53-bit hashes (kept packed, not as given). */
  readonly hashes: Float64Array;
}

interface Packed {
  readonly partition: string;
  readonly hashes: PackedHashes;
}

export class SealedIdIndex {
  #segments = new Map<string, Packed>();
  #bloom = new IdBloom(1 << 16);
  #count = 0;

  add(segment: IndexedSegment): void {
    this.remove(segment.key);
    const packed = new PackedHashes(segment.hashes);
    this.#segments.set(segment.key, { partition: segment.partition, hashes: packed });
    this.#count += packed.length;
    if (this.#count * 10 > this.#bloom.bits.length * 32) this.#rebuild();
    else for (const h of segment.hashes) this.#bloom.add(top32(h));
  }

  /** Removing leaves stale bits in the filter until the next rebuild: harmless false positives. */
  remove(key: string): void {
    const seg = this.#segments.get(key);
    if (!seg) return;
    this.#segments.delete(key);
    this.#count -= seg.hashes.length;
  }

  /** Segments of `partition` that may hold `id` (almost always none). */
  candidates(id: string, partitionPrefix: string): string[] {
    const h = idHash(id);
    if (!this.#bloom.has(top32(h))) return [];
    const out: string[] = [];
    for (const [key, seg] of this.#segments) {
      if (seg.partition.startsWith(partitionPrefix) && seg.hashes.has(h)) out.push(key);
    }
    return out;
  }

  /**
   * Of the segments `keys`, those that may hold one of `hashes`: a key the index does not hold is
   * kept (nothing known), others only on a hash hit. A bulk load's batch asks this before joining
   * its ids with the run's segments: with new ids that is none of them, where the join read the id
   * column of every segment of the run (at 100M spans, 100M ids per 1M-row batch).
   */
  mayHoldAny(keys: readonly string[], hashes: ArrayLike<number>): Set<string> {
    const out = new Set<string>();
    const open: Packed[] = [];
    const openKeys: string[] = [];
    for (const key of keys) {
      const seg = this.#segments.get(key);
      if (!seg) out.add(key);
      else {
        open.push(seg);
        openKeys.push(key);
      }
    }
    for (let i = 0; i < hashes.length && open.length > 0; i++) {
      const h = hashes[i]!;
      if (!this.#bloom.has(top32(h))) continue;
      for (let j = open.length - 1; j >= 0; j--) {
        if (!open[j]!.hashes.has(h)) continue;
        out.add(openKeys[j]!);
        open.splice(j, 1);
        openKeys.splice(j, 1);
      }
    }
    return out;
  }

  get size(): number {
    return this.#count;
  }

  /** Bytes held by the packed hashes and the filter (for stats and benchmarks). */
  get bytes(): number {
    let n = this.#bloom.bits.byteLength;
    for (const seg of this.#segments.values()) n += seg.hashes.bytes;
    return n;
  }

  #rebuild(): void {
    this.#bloom = new IdBloom(Math.max(this.#count * 2, 1 << 16));
    for (const seg of this.#segments.values()) seg.hashes.forEachTop((t) => this.#bloom.add(t));
  }
}
