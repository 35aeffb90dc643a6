// Which record ids already exist, so a retried or updated record replaces its old version instead
// of duplicating it. Each sealed segment keeps its sorted 53-bit id hashes in a `.ids` file and a
// small filter of them in a `.idf` file (id-filter.ts), both written with the segment. A writable
// store also keeps one filter over every segment (store-id-filter.ts): a new id is told apart in one
// probe however many segments there are, and a covered segment keeps no bits in memory (its `.idf` is
// read a block at a time on a hit). A filter hit is checked against the one block of `.ids` it can
// lie in (ids-file.ts). A hash hit is only a candidate: the caller confirms it in DuckDB.
import { readFile } from 'node:fs/promises';
import { IdFilter, IdFilterOnDisk, probe, readIdFilter, type IdFences } from './id-filter.js';
import { StoreIdFilter } from './store-id-filter.js';
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
  /**
   * Its filter (built with it or read from its `.idf` file), or only its fences when the store's
   * filter already covers it (a checkpoint named it).
   */
  readonly filter: IdFilter | IdFences;
  /** Absolute path of its `.ids` file. */
  readonly ids: string;
  /** Its sorted hashes, when at hand (a seal, merge or bulk load): the store's filter takes them. */
  readonly hashes?: Float64Array;
}

interface Held {
  readonly key: string;
  readonly partition: string;
  readonly count: number;
  /** Whether the store's filter holds its hashes (then only the store filter's hits ask it). */
  covered: boolean;
  /**
   * Its own filter's bits in memory: always while the store's filter does not cover it; once it does,
   * only for a small segment within KEPT_BYTES (null: asked from its `.idf` file on a hit).
   */
  filter: IdFilter | null;
  /** Its filter read from its `.idf` a block at a time (asked once the store's filter covers it). */
  readonly disk: IdFilterOnDisk;
  readonly file: IdsFile;
  readonly ids: string;
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

/** Hashes added to the store's filter per turn of the event loop in the background (a few ms each). */
const ADD_STEP = 1 << 18;

/**
 * A covered segment of at most this many hashes keeps its own bits in memory, up to KEPT_BYTES in all:
 * each of the store filter's false hits (1-3% of new ids) asks every segment of its run, and while a
 * run is being logged it has tens of small segments (seals, early merges), so asking them on disk cost
 * a block read each (~1 µs a logged span at 1M). Large segments' bits stay on disk (memory at 100M).
 */
const KEPT_HASHES = 1 << 18;
const KEPT_BYTES = 8 << 20;

export class SealedIdIndex {
  #segments = new Map<string, Held>();
  #runs = new Map<string, Held[]>();
  #count = 0;
  /**
   * One filter over every covered segment (null: none, each segment is asked on its own). A new id is
   * told apart by it in one probe; only its hits (stored ids, ~1-3% of new ones) ask the segments.
   */
  #store: StoreIdFilter | null = null;
  /** The replacement being built in the background when the store's filter filled up. */
  #next: StoreIdFilter | null = null;
  /** Where the checkpoint is saved (a writable store's folder), or null. */
  #dir: string | null = null;
  /** Segments the checkpoint on disk names as covered (key -> hash count). */
  #saved = new Map<string, number>();
  /** Ids the checkpoint may miss before it is saved again (at least a quarter of those it covers). */
  #saveAfter = 0;
  #task: Promise<void> | null = null;
  #closed = false;
  /** Bytes of covered segments' own bits kept in memory (KEPT_BYTES at most). */
  #keptBytes = 0;
  /** What the first background work waits for (deferUntil), then forgets. */
  #defer: ((stopped: () => boolean) => Promise<unknown>) | null = null;

  /**
   * Keeps one filter over every segment, loaded from the checkpoint in `dir` (null: kept in memory
   * only, never saved; a read-only store never calls this). Call before adding segments: those the
   * checkpoint names (with their hash count) need no bits of their own; the others are added to it in
   * the background, then it is saved.
   */
  useStoreFilter(dir: string | null, expectedKeys: number, saveAfter = 1 << 20): void {
    const loaded = dir === null ? null : StoreIdFilter.load(dir);
    this.#store = loaded ?? StoreIdFilter.sized(expectedKeys);
    this.#dir = dir;
    this.#saved = new Map(loaded?.covered ?? []);
    this.#saveAfter = saveAfter;
  }

  /** Whether the store's filter covers the segment `key` of `count` hashes (its own bits are not needed). */
  covers(key: string, count: number): boolean {
    return this.#store?.covered.get(key) === count;
  }

  add(segment: IndexedSegment): void {
    this.remove(segment.key);
    const f = segment.filter;
    const fences = { count: f.count, blocks: f.blocks, fences: f.fences };
    const held: Held = {
      key: segment.key,
      partition: segment.partition,
      count: f.count,
      covered: false,
      filter: f instanceof IdFilter ? f : null,
      disk: new IdFilterOnDisk(segment.ids.replace(/\.ids$/, '.parquet'), fences),
      file: new IdsFile(segment.ids, fences),
      ids: segment.ids,
    };
    const store = this.#store;
    if (store !== null) {
      if (segment.hashes !== undefined) {
        store.add(segment.hashes, probe);
        store.covered.set(held.key, held.count);
        if (this.#next !== null) {
          this.#next.add(segment.hashes, probe);
          this.#next.covered.set(held.key, held.count);
        }
      }
      if (store.covered.get(held.key) === held.count) this.#cover(held);
    }
    if (!held.covered && held.filter === null) throw new Error(`id index: segment ${held.key} came without its filter`);
    this.#segments.set(segment.key, held);
    const run = runOf(segment.partition);
    this.#runs.set(run, [...(this.#runs.get(run) ?? []), held]);
    this.#count += held.count;
    if (store !== null && (!held.covered || store.full || this.#stale())) this.#maintain();
  }

  /**
   * The next background work (after an open: covering what the checkpoint missed, up to a quarter of
   * the ids) first waits for `wait`: hashing them on this thread delayed the first questions after an
   * open by tens of ms at 1M. Meanwhile writes ask the uncovered segments' own filters: slower, as exact.
   */
  deferUntil(wait: (stopped: () => boolean) => Promise<unknown>): void {
    this.#defer = wait;
  }

  /** Closes the segment's file, if open: a merge is about to retire it. */
  remove(key: string): void {
    const seg = this.#segments.get(key);
    if (!seg) return;
    seg.file.close();
    seg.disk.close();
    this.#segments.delete(key);
    if (seg.covered) this.#keptBytes -= seg.filter?.bits.byteLength ?? 0;
    const run = runOf(seg.partition);
    const rest = this.#runs.get(run)!.filter((x) => x !== seg);
    if (rest.length > 0) this.#runs.set(run, rest);
    else this.#runs.delete(run);
    this.#count -= seg.count;
    // Its ids stay in the store's filter (extra hits only); the checkpoint no longer names it.
    this.#store?.covered.delete(key);
    this.#next?.covered.delete(key);
  }

  /** Stops the background work (a checkpoint being written is abandoned between two pieces). */
  async stop(): Promise<void> {
    this.#closed = true;
    await this.#task;
  }

  /** Closes every file held (the store is closing; call stop first). */
  close(): void {
    this.#closed = true;
    for (const seg of this.#segments.values()) {
      seg.file.close();
      seg.disk.close();
    }
    this.#segments.clear();
    this.#runs.clear();
    this.#count = 0;
    this.#keptBytes = 0;
    this.#store = null;
    this.#next = null;
  }

  /** Settles when the background work asked for so far is done (tests, benchmarks). */
  async settled(): Promise<void> {
    while (this.#task !== null) await this.#task;
  }

  /**
   * Segments of `partition` that may hold `id` (almost always none). `reading`: a question, not a
   * write: while the store's filter is still on disk, the segments' own filters on disk are asked
   * instead of reading it (a read by id asks about a few ids; writes ask about every id they log).
   */
  candidates(id: string, partitionPrefix: string, reading = false): string[] {
    const h = idHash(id);
    const p = probe(h);
    // False: no covered segment holds it, only those with their own filter need asking.
    const maybe = this.#store === null || (reading && !this.#store.loaded) || this.#store.hasProbe(p);
    let out: string[] | null = null;
    if (runOf(partitionPrefix) === partitionPrefix) {
      // Every segment of the run starts with the prefix.
      const segs = this.#runs.get(partitionPrefix);
      if (segs === undefined) return [];
      for (let i = 0; i < segs.length; i++) {
        const seg = segs[i]!;
        if ((maybe || !seg.covered) && (seg.filter ?? seg.disk).hasProbe(p) && seg.file.has(h)) (out ??= []).push(seg.key);
      }
    } else {
      for (const seg of this.#segments.values())
        if (seg.partition.startsWith(partitionPrefix) && (maybe || !seg.covered) && (seg.filter ?? seg.disk).hasProbe(p) && seg.file.has(h))
          (out ??= []).push(seg.key);
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
    // Only the hashes the store's filter holds can be in a segment it covers (new ids: ~1-3% of them).
    let hits: number[] | null = null;
    const hitsOf = (): number[] => {
      if (hits !== null) return hits;
      hits = [];
      const store = this.#store!;
      for (let i = 0; i < hashes.length; i++) if (store.hasProbe(probe(hashes[i]!))) hits.push(hashes[i]!);
      return hits;
    };
    for (const key of keys) {
      const seg = this.#segments.get(key);
      if (!seg) {
        out.add(key);
        continue;
      }
      const asked = seg.covered ? hitsOf() : hashes;
      if (asked.length === 0) continue;
      // A batch of more than 1/16 of the segment's hashes costs more through a filter (a probe per
      // hash, a block read per false hit) than merged with the file read in chunks.
      if (ascending && asked.length * 16 > seg.count) {
        if (seg.file.meetsAny(asked)) out.add(key);
        continue;
      }
      // A covered segment's own bits are on disk: worth reading for more than a few hashes.
      const own = seg.filter ?? (asked.length > 64 ? readIdFilter(seg.ids.replace(/\.ids$/, '.parquet')) : null) ?? seg.disk;
      for (let i = 0; i < asked.length; i++) {
        const h = asked[i]!;
        if (own.hasProbe(probe(h)) && seg.file.has(h)) {
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
    let n = (this.#store?.bytes ?? 0) + (this.#next?.bytes ?? 0);
    for (const seg of this.#segments.values()) n += (seg.filter?.bits.byteLength ?? 0) + seg.file.fenceBytes;
    return n;
  }

  /** Of `bytes`, the own bits of covered segments kept in memory (small segments, 8 MiB at most). */
  get keptBytes(): number {
    return this.#keptBytes;
  }

  /** Bytes of the store filter's bits in memory (0 until a write or a merge first asks it). */
  get storeFilterBytes(): number {
    return this.#store?.bytes ?? 0;
  }

  /** Share of the store filter's bits set (0 without one). */
  get storeFill(): number {
    return this.#store?.fill ?? 0;
  }

  /** Segments held that the store's filter does not cover yet. */
  get uncovered(): number {
    let n = 0;
    for (const seg of this.#segments.values()) if (!seg.covered) n++;
    return n;
  }

  /**
   * Whether the checkpoint misses enough covered ids to be saved again: ids of covered segments it does
   * not name, so a merge's output counts (it replaces segments the checkpoint names; counting ids alone,
   * a store compacted before it closed had every next open hash the merged segments' ids again).
   */
  #stale(): boolean {
    if (this.#dir === null || this.#store === null) return false;
    let named = 0;
    let unnamed = 0;
    for (const [key, n] of this.#store.covered) {
      if (this.#saved.get(key) === n) named += n;
      else unnamed += n;
    }
    return unnamed > Math.max(this.#saveAfter, named / 4);
  }

  /** Starts the background work unless it runs: cover segments, rebuild when full, save. */
  #maintain(): void {
    if (this.#task !== null || this.#closed) return;
    this.#task = this.#work()
      .catch((err: unknown) => process.emitWarning(`tracelake: the store's id filter could not be updated: ${(err as Error).message}`))
      .finally(() => {
        this.#task = null;
      });
  }

  async #work(): Promise<void> {
    const defer = this.#defer;
    this.#defer = null;
    if (defer !== null) await defer(() => this.#closed);
    for (;;) {
      // A turn first: segments added in one go (an open, a seal's outputs) are all seen.
      await new Promise((r) => setImmediate(r));
      if (this.#closed) return;
      const store = this.#store!;
      if (store.full) {
        await this.#rebuild();
        continue;
      }
      const seg = [...this.#segments.values()].find((x) => !x.covered);
      if (seg !== undefined) {
        if ((await this.#hashesOf(seg)) !== null && this.#store === store) {
          store.covered.set(seg.key, seg.count);
          this.#cover(seg);
        }
        continue;
      }
      if (!this.#stale()) return;
      // Segments merged away since the checkpoint was loaded are named no more (their bits stay: extra
      // hits only), so the names do not grow with every merge of the store's life.
      for (const key of [...store.covered.keys()]) if (!this.#segments.has(key)) store.covered.delete(key);
      const named = new Map(store.covered);
      if (!(await store.save(this.#dir!, () => this.#closed))) return;
      this.#saved = named;
    }
  }

  /**
   * A segment's hashes added to the store's filter (and to its replacement, if one is being built)
   * in steps; null when the segment left the index meanwhile (merged away or dropped).
   */
  async #hashesOf(seg: Held, into?: StoreIdFilter): Promise<Float64Array | null> {
    let buf: Buffer;
    try {
      buf = await readFile(seg.ids);
    } catch (err) {
      if (this.#segments.get(seg.key) !== seg) return null;
      throw err;
    }
    if (this.#segments.get(seg.key) !== seg || this.#closed) return null;
    const hashes =
      buf.byteOffset % 8 === 0
        ? new Float64Array(buf.buffer, buf.byteOffset, buf.byteLength / 8)
        : new Float64Array(new Uint8Array(buf).buffer);
    const targets = into ? [into] : [this.#store!];
    for (let at = 0; at < hashes.length; at += ADD_STEP) {
      for (const t of targets) t.add(hashes.subarray(at, Math.min(hashes.length, at + ADD_STEP)), probe);
      await new Promise((r) => setImmediate(r));
      if (this.#closed) return null;
    }
    return this.#segments.get(seg.key) === seg ? hashes : null;
  }

  /** The store's filter now holds the segment's hashes: its own bits are dropped unless small enough to keep. */
  #cover(seg: Held): void {
    if (seg.covered) return;
    seg.covered = true;
    const bytes = seg.filter?.bits.byteLength ?? 0;
    if (seg.filter !== null && seg.count <= KEPT_HASHES && this.#keptBytes + bytes <= KEPT_BYTES) this.#keptBytes += bytes;
    else seg.filter = null;
  }

  /** A new store filter does not hold the segment: it is asked through its own bits (on disk if dropped) until covered again. */
  #uncover(seg: Held): void {
    if (!seg.covered) return;
    seg.covered = false;
    this.#keptBytes -= seg.filter?.bits.byteLength ?? 0;
  }

  /** A fresh filter sized for the ids held now, built from every segment's `.ids`, then swapped in. */
  async #rebuild(): Promise<void> {
    const next = StoreIdFilter.sized(this.#count);
    this.#next = next;
    try {
      for (const seg of [...this.#segments.values()]) {
        if (this.#closed) return;
        const hashes = await this.#hashesOf(seg, next);
        if (hashes !== null) next.covered.set(seg.key, seg.count);
      }
      if (this.#closed) return;
      this.#store = next;
      for (const seg of this.#segments.values()) {
        if (next.covered.get(seg.key) === seg.count) this.#cover(seg);
        else this.#uncover(seg);
      }
      // The checkpoint on disk is of the old filter: save this one.
      this.#saved = new Map();
    } finally {
      this.#next = null;
    }
  }
}
