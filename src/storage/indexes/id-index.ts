// Which record ids already exist, so a retried or updated record replaces its old version instead
// of duplicating it. Each sealed segment keeps its sorted 53-bit id hashes in a `.ids` file and a
// small filter of them in a `.idf` file (id-filter.ts), both written with the segment. In memory the
// index holds only the filters (about 1.3 bytes per id); a filter hit is checked against the one
// block of `.ids` it can lie in (ids-file.ts). A hash hit is only a candidate: the caller confirms
// it in DuckDB.
import { probe, type IdFilter } from './id-filter.js';
import { IdsFile } from './ids-file.js';
import { hasSorted } from './sorted-search.js';

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

export interface IndexedSegment {
  /** Stable key of the segment (its file path relative to the data folder). */
  readonly key: string;
  readonly partition: string;
  /** Its filter (built with it or read from its `.idf` file). */
  readonly filter: IdFilter;
  /** Absolute path of its `.ids` file. */
  readonly ids: string;
}

interface Held {
  readonly key: string;
  readonly partition: string;
  readonly filter: IdFilter;
  readonly file: IdsFile;
}

/**
 * The run a partition belongs to (`records/project_id=../run_id=../`), or '' when it names none. A
 * lookup asks about one run: only that run's segments are looked at.
 */
function runOf(partition: string): string {
  const at = partition.indexOf('/run_id=');
  if (at < 0) return '';
  const end = partition.indexOf('/', at + 1);
  return end < 0 ? '' : partition.slice(0, end + 1);
}

export class SealedIdIndex {
  #segments = new Map<string, Held>();
  #runs = new Map<string, Held[]>();
  #count = 0;

  add(segment: IndexedSegment): void {
    this.remove(segment.key);
    const held = { key: segment.key, partition: segment.partition, filter: segment.filter, file: new IdsFile(segment.ids, segment.filter) };
    this.#segments.set(segment.key, held);
    const run = runOf(segment.partition);
    this.#runs.set(run, [...(this.#runs.get(run) ?? []), held]);
    this.#count += segment.filter.count;
  }

  /** Closes the segment's file, if open: a merge is about to retire it. */
  remove(key: string): void {
    const seg = this.#segments.get(key);
    if (!seg) return;
    seg.file.close();
    this.#segments.delete(key);
    const run = runOf(seg.partition);
    const rest = this.#runs.get(run)!.filter((x) => x !== seg);
    if (rest.length > 0) this.#runs.set(run, rest);
    else this.#runs.delete(run);
    this.#count -= seg.filter.count;
  }

  /** Closes every file held (the store is closing). */
  close(): void {
    for (const seg of this.#segments.values()) seg.file.close();
    this.#segments.clear();
    this.#runs.clear();
    this.#count = 0;
  }

  /** Segments of `partition` that may hold `id` (almost always none). */
  candidates(id: string, partitionPrefix: string): string[] {
    const h = idHash(id);
    const p = probe(h);
    let out: string[] | null = null;
    if (runOf(partitionPrefix) === partitionPrefix) {
      // Every segment of the run starts with the prefix.
      const segs = this.#runs.get(partitionPrefix);
      if (segs === undefined) return [];
      for (let i = 0; i < segs.length; i++) {
        const seg = segs[i]!;
        if (seg.filter.hasProbe(p) && seg.file.has(h)) (out ??= []).push(seg.key);
      }
    } else {
      for (const seg of this.#segments.values())
        if (seg.partition.startsWith(partitionPrefix) && seg.filter.hasProbe(p) && seg.file.has(h)) (out ??= []).push(seg.key);
    }
    return out ?? [];
  }

  /**
   * Of the segments `keys`, those that hold one of `hashes` (ascending): a key the index does not hold is
   * kept (nothing known), others only on a hash hit. A bulk load's batch asks this before joining
   * its ids with the run's segments: with new ids that is none of them, where the join read the id
   * column of every segment of the run (at 100M spans, 100M ids per 1M-row batch).
   */
  mayHoldAny(keys: readonly string[], hashes: ArrayLike<number>): Set<string> {
    const out = new Set<string>();
    let ascending = true;
    for (let i = 1; i < hashes.length && ascending; i++) ascending = hashes[i - 1]! <= hashes[i]!;
    for (const key of keys) {
      const seg = this.#segments.get(key);
      if (!seg) {
        out.add(key);
        continue;
      }
      // A batch of more than 1/16 of the segment's hashes costs more through the filter (a probe per
      // hash, a block read per false hit) than merged with the file read in chunks.
      if (ascending && hashes.length * 16 > seg.filter.count) {
        if (seg.file.meetsAny(hashes)) out.add(key);
        continue;
      }
      for (let i = 0; i < hashes.length; i++) {
        const h = hashes[i]!;
        if (seg.filter.hasProbe(probe(h)) && seg.file.has(h)) {
          out.add(key);
          break;
        }
      }
    }
    return out;
  }

  /** Hashes held (in the segments' `.ids` files). */
  get size(): number {
    return this.#count;
  }

  /** Bytes held in memory by the filters and their fences (for stats and benchmarks). */
  get bytes(): number {
    let n = 0;
    for (const seg of this.#segments.values()) n += seg.filter.bytes;
    return n;
  }
}
