// Which record ids already exist, so a retried or updated record replaces its old version instead
// of duplicating it. Sealed segments each keep a sorted array of 53-bit id hashes (persisted next
// to the segment); one Bloom filter over all of them answers "certainly new" for almost every id
// in one or two cache misses. A hash hit is only a candidate: the caller confirms it in DuckDB.

/** 53-bit hash of an id string (two FNV-1a variants), exact as a JS number. */
export function idHash(id: string): number {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
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

/** Binary search of an ascending array of numbers (id hashes here, trigram keys in text-index.ts). */
export function hasSorted(sorted: ArrayLike<number>, h: number): boolean {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = sorted[mid]!;
    if (v === h) return true;
    if (v < h) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/** A blocked Bloom filter sized for `capacity` keys at ~1% false positives; grows by rebuilding. */
class Bloom {
  readonly bits: Uint32Array;
  readonly mask: number;
  constructor(capacity: number) {
    let words = 1024;
    while (words * 32 < capacity * 10) words *= 2;
    this.bits = new Uint32Array(words);
    this.mask = words - 1;
  }
  add(h: number): void {
    const hi = Math.floor(h / 0x200000);
    let x = hi;
    for (let k = 0; k < 7; k++) {
      x = Math.imul(x ^ (x >>> 16), 0x45d9f3b) + (h & 0x1fffff) * (k + 1);
      this.bits[(x >>> 5) & this.mask]! |= 1 << (x & 31);
    }
  }
  has(h: number): boolean {
    const hi = Math.floor(h / 0x200000);
    let x = hi;
    for (let k = 0; k < 7; k++) {
      x = Math.imul(x ^ (x >>> 16), 0x45d9f3b) + (h & 0x1fffff) * (k + 1);
      if ((this.bits[(x >>> 5) & this.mask]! & (1 << (x & 31))) === 0) return false;
    }
    return true;
  }
}

export interface IndexedSegment {
  /** Stable key of the segment (its file path relative to the data folder). */
  readonly key: string;
  readonly partition: string;
  readonly hashes: Float64Array;
}

export class SealedIdIndex {
  #segments = new Map<string, IndexedSegment>();
  #bloom = new Bloom(1 << 16);
  #count = 0;

  add(segment: IndexedSegment): void {
    this.#segments.set(segment.key, segment);
    this.#count += segment.hashes.length;
    if (this.#count * 10 > this.#bloom.bits.length * 32) this.#rebuild();
    else for (const h of segment.hashes) this.#bloom.add(h);
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
    if (!this.#bloom.has(h)) return [];
    const out: string[] = [];
    for (const seg of this.#segments.values()) {
      if (seg.partition.startsWith(partitionPrefix) && hasHash(seg.hashes, h)) out.push(seg.key);
    }
    return out;
  }

  /** The sorted hashes of a segment (empty when unknown). */
  hashesOf(key: string): Float64Array {
    return this.#segments.get(key)?.hashes ?? new Float64Array(0);
  }

  get size(): number {
    return this.#count;
  }

  #rebuild(): void {
    this.#bloom = new Bloom(Math.max(this.#count * 2, 1 << 16));
    for (const seg of this.#segments.values()) for (const h of seg.hashes) this.#bloom.add(h);
  }
}
