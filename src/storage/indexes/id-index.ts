// Which record ids already exist, so a retried or updated record replaces its old version instead
// of duplicating it. Sealed segments each keep a sorted array of 53-bit id hashes (persisted next
// to the segment); one Bloom filter over all of them answers "certainly new" for almost every id
// in one cache miss. A hash hit is only a candidate: the caller confirms it in DuckDB.
// In memory each segment keeps its hashes packed (PackedHashes, ~4.4 bytes per id instead of 8).
// The filter is keyed on the top 32 bits of the hashes (all a packed segment keeps for sure), so it
// answers "maybe" for at least ids/2^32 of new ids (2.7% at 115M ids); each "maybe" costs a binary
// search per segment.

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

  /** Number of buckets. */
  get buckets(): number {
    return this.#offsets.length - 1;
  }

  /**
   * Calls `fn` with the top 32 bits of every hash in buckets [from, to) (what the Bloom filter is
   * keyed on), in ascending order; returns how many.
   */
  forEachTop(fn: (top: number) => void, from = 0, to = this.buckets): number {
    const shift = 2 ** this.bits;
    const hiMul = 2 ** (32 - this.bits);
    for (let p = from; p < to; p++) {
      for (let i = this.#offsets[p]!; i < this.#offsets[p + 1]!; i++) fn(p * hiMul + Math.floor(this.#low[i]! / shift));
    }
    return this.#offsets[to]! - this.#offsets[from]!;
  }
}

/** The top 32 bits of a 53-bit id hash. */
const top32 = (h: number) => Math.floor(h / 0x200000);

/** Bits of filter per key when it is built; it is rebuilt (bigger) once it holds 10 bits a key. */
const BUILD_BITS = 15;
const FULL_BITS = 10;

/**
 * A Bloom filter over the top 32 bits of id hashes. Blocked: a key's 7 bits lie in one 64-byte block,
 * so an add or a lookup touches one cache line; and the block is picked by the key's top bits, so a
 * segment's sorted hashes fill it front to back (several times faster than 7 bits spread over the
 * whole array). At 10 bits a key it answers "maybe" for ~1% of absent keys (0.8% unblocked). Sized to
 * the key count, not to a power of two, which could nearly double it.
 */
export class IdBloom {
  readonly bits: Uint32Array;
  readonly #blocks: number;
  constructor(capacity: number, bitsPerKey = FULL_BITS) {
    this.#blocks = Math.max(64, Math.ceil((capacity * bitsPerKey) / 512));
    this.bits = new Uint32Array(this.#blocks * 16);
  }
  /** Keys it holds at FULL_BITS a key. */
  get capacity(): number {
    return (this.bits.length * 32) / FULL_BITS;
  }
  #base(top: number): number {
    return Math.min(this.#blocks - 1, Math.floor((top / 4294967296) * this.#blocks)) * 16;
  }
  add(top: number): void {
    const base = this.#base(top);
    let x = Math.imul(top ^ (top >>> 16), 0x85ebca6b);
    for (let k = 0; k < 7; k++) {
      x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35) + k;
      const bit = x >>> 23;
      this.bits[base + (bit >>> 5)]! |= 1 << (bit & 31);
    }
  }
  has(top: number): boolean {
    const base = this.#base(top);
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
  /** The bigger filter being filled, a slice per event-loop turn; #bloom answers until it is whole. */
  #next: IdBloom | null = null;
  /** Segments were added without filling the filter (`add(.., false)`) and `refill` has not run. */
  #unfilled = false;
  #count = 0;

  /**
   * `fill` false (opening a store): the filter is left alone until `refill`, which sizes it once for
   * every segment; adding them one by one refilled a growing filter from all segments held so far
   * (quadratic in the segment count).
   */
  add(segment: IndexedSegment, fill = true): void {
    this.remove(segment.key);
    const packed = new PackedHashes(segment.hashes);
    this.#segments.set(segment.key, { partition: segment.partition, hashes: packed });
    this.#count += packed.length;
    if (!fill) {
      this.#unfilled = true;
      return;
    }
    for (const h of segment.hashes) {
      this.#bloom.add(top32(h));
      this.#next?.add(top32(h));
    }
    if (this.#next === null && this.#count > this.#bloom.capacity) this.#grow();
  }

  /** A filter sized for the segments held, filled from their hashes at once. */
  refill(): void {
    const bloom = new IdBloom(Math.max(this.#count, 1 << 16), BUILD_BITS);
    for (const [seg, from, to] of fillOrder(
      bloom,
      [...this.#segments.values()].map((x) => x.hashes),
    ))
      seg.forEachTop((t) => bloom.add(t), from, to);
    this.#bloom = bloom;
    this.#next = null;
    this.#unfilled = false;
  }

  /** Whether the filter may hold `id` (false: no segment holds it). */
  maybe(id: string): boolean {
    return this.#unfilled || this.#bloom.has(top32(idHash(id)));
  }

  /** A bigger filter is being filled. */
  get growing(): boolean {
    return this.#next !== null;
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
    if (!this.#unfilled && !this.#bloom.has(top32(h))) return [];
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
      if (!this.#unfilled && !this.#bloom.has(top32(h))) continue;
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

  /**
   * A filter for 1.5x the keys, filled from the packed hashes in slices of ~64k keys, one per
   * event-loop turn (at 100M ids a whole refill is seconds of CPU: writes and reads would wait
   * behind it). Keys added meanwhile go into both filters; the full one answers until then (more
   * "maybe"s, each confirmed by the segments' hashes, never a wrong "no").
   */
  #grow(): void {
    const next = new IdBloom(this.#count * 1.5, BUILD_BITS);
    this.#next = next;
    const order = fillOrder(
      next,
      [...this.#segments.values()].map((x) => x.hashes),
    );
    const slice = () => {
      if (this.#next !== next) return;
      for (let done = 0; done < 65_536; ) {
        const step = order.next();
        if (step.done) {
          this.#bloom = next;
          this.#next = null;
          // Segments added while it filled may have outgrown it already.
          if (this.#count > next.capacity) this.#grow();
          return;
        }
        const [seg, from, to] = step.value;
        done += seg.forEachTop((t) => next.add(t), from, to);
      }
      setImmediate(slice).unref();
    };
    slice();
  }
}

/**
 * The order in which to fill `bloom` from sorted segments: a stripe of ~256 KiB of the filter at a
 * time (a key's block follows its top bits, like the segments' buckets), from every segment in turn,
 * so the adds stay in cache. Segment by segment, each key of a large segment in a large filter was a
 * cache miss, and opening a big store took seconds of CPU.
 */
function* fillOrder(bloom: IdBloom, segments: readonly PackedHashes[]): Generator<[PackedHashes, number, number]> {
  const stripes = Math.max(1, Math.ceil(bloom.bits.byteLength / 262_144));
  for (let r = 0; r < stripes; r++) {
    for (const seg of segments) {
      const from = Math.floor((r * seg.buckets) / stripes);
      const to = Math.floor(((r + 1) * seg.buckets) / stripes);
      if (to > from) yield [seg, from, to];
    }
  }
}
