// A segment's sorted id hashes searched in place: the filter's fences name the one 4 KiB block of the
// `.ids` file a hash can lie in, and that block is read (from the page cache, usually) and searched.
// Only ids that pass the segment's filter get here: ids already stored, and ~1% of new ones.
import { closeSync, openSync, readSync } from 'node:fs';
import { FENCE_STEP, type IdFences } from './id-filter.js';
import { hasSorted } from './sorted-search.js';

/** One buffer for every read (lookups are synchronous, so they never overlap), and what it holds. */
const block = new Float64Array(FENCE_STEP);
const blockBytes = new Uint8Array(block.buffer);
let heldFile: IdsFile | null = null;
/** Blocks per chunk of a scan (`meetsAny`): 1 MiB. */
const SCAN_BLOCKS = 256;
const scan = new Float64Array(SCAN_BLOCKS * FENCE_STEP);
const scanBytes = new Uint8Array(scan.buffer);
let heldBlock = -1;
let heldCount = 0;

export class IdsFile {
  readonly path: string;
  readonly #filter: IdFences;
  #fd: number | null = null;

  constructor(path: string, filter: IdFences) {
    this.path = path;
    this.#filter = filter;
  }

  /** Whether the file holds hash `h` (every 53 bits compared). */
  has(h: number): boolean {
    const fences = this.#filter.fences;
    if (fences.length === 0 || h < fences[0]!) return false;
    // The last fence not above h starts the only block that can hold it.
    let lo = 0;
    let hi = fences.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (fences[mid]! <= h) lo = mid;
      else hi = mid - 1;
    }
    if (fences[lo] === h) return true;
    // Sorted lookups (a bulk load's batch) often ask the same block again: it is read once.
    if (heldFile !== this || heldBlock !== lo) {
      const first = lo * FENCE_STEP;
      const n = Math.min(FENCE_STEP, this.#filter.count - first);
      this.#fd ??= openSync(this.path, 'r');
      heldFile = null;
      heldCount = Math.floor(readSync(this.#fd, blockBytes, 0, n * 8, first * 8) / 8);
      heldFile = this;
      heldBlock = lo;
    }
    return hasSorted(block, h, 0, heldCount);
  }

  /**
   * Whether the file holds one of the ascending `sorted` hashes: the file is read in 1 MiB chunks and
   * merged with them (what a large batch costs: every block would be read one by one otherwise),
   * skipping chunks no asked hash falls in.
   */
  meetsAny(sorted: ArrayLike<number>): boolean {
    const count = this.#filter.count;
    const fences = this.#filter.fences;
    const per = SCAN_BLOCKS * FENCE_STEP;
    let i = 0;
    for (let from = 0; from < count && i < sorted.length; from += per) {
      const to = Math.min(count, from + per);
      // The next chunk starts above every hash left before it: those cannot be in this one.
      const next = to < count ? fences[to / FENCE_STEP]! : Number.POSITIVE_INFINITY;
      if (sorted[i]! >= next) {
        while (i < sorted.length && sorted[i]! < next) i++;
        continue;
      }
      this.#fd ??= openSync(this.path, 'r');
      if (heldFile === this) heldFile = null;
      const n = Math.floor(readSync(this.#fd, scanBytes, 0, (to - from) * 8, from * 8) / 8);
      for (let j = 0; j < n && i < sorted.length; ) {
        const a = scan[j]!;
        const b = sorted[i]!;
        if (a === b) return true;
        if (a < b) j++;
        else i++;
      }
      while (i < sorted.length && sorted[i]! < next) i++;
    }
    return false;
  }

  /** Bytes of fences held in memory. */
  get fenceBytes(): number {
    return this.#filter.fences.byteLength;
  }

  close(): void {
    if (heldFile === this) heldFile = null;
    if (this.#fd !== null) closeSync(this.#fd);
    this.#fd = null;
  }
}
