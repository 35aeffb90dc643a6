// The store's dead sequence numbers in JavaScript, kept as one sorted typed array plus two small sets:
// additions not yet merged in, and removals not yet taken out. A JS Set of a large delete's million
// seqs cost most of a second to fill (and its memory); merging a sorted batch into the array costs
// milliseconds. The sorted array also answers range questions: which segments and memory tables hold
// no dead row at all, so reads may skip the dead-row filter on them (snapshot.ts). Each change of
// membership bumps a version and notes the range of seqs it touched, so a cache built from the set's
// part in a range (snapshot/segment-dead-rows.ts) knows it is still current without looking at it.

import { lowerBound } from '../memtable/seq-lists.js';

/** Additions (or removals) kept in a small set before they are merged into the sorted array. */
const PENDING_MAX = 1024;

/** Changes whose ranges are kept for `changedIn` (at least this many, at most twice as many). */
const CHANGES_KEPT = 1024;

export class DeadSet {
  /** Distinct, ascending; members unless also in #gone. */
  #sorted: Float64Array = new Float64Array(0);
  /** Members not in #sorted. */
  #recent = new Set<number>();
  /** Values of #sorted that are no longer members. */
  #gone = new Set<number>();
  #version = 0;
  /** The latest changes: their version and the range of seqs they touched, oldest first. */
  #changes: { readonly v: number; readonly lo: number; readonly hi: number }[] = [];
  /** Every change after this version is in #changes. */
  #changesFrom = 0;

  /** Bumped by every call that changes the members. */
  get version(): number {
    return this.#version;
  }

  /**
   * Whether a change after `version` touched a seq in [lo, hi] (false: the members in that range are
   * those at `version`), or null when the changes since are no longer kept. Ranges of calls that
   * changed many seqs at once span them all, so true may be said of a range only their ends straddle.
   */
  changedIn(version: number, lo: number, hi: number): boolean | null {
    if (version === this.#version) return false;
    if (version < this.#changesFrom || version > this.#version) return null;
    const c = this.#changes;
    for (let i = c.length - 1; i >= 0 && c[i]!.v > version; i--) if (c[i]!.lo <= hi && c[i]!.hi >= lo) return true;
    return false;
  }

  #changed(lo: number, hi: number): void {
    this.#changes.push({ v: ++this.#version, lo, hi });
    if (this.#changes.length > 2 * CHANGES_KEPT) {
      const cut = this.#changes.length - CHANGES_KEPT;
      this.#changesFrom = this.#changes[cut - 1]!.v;
      this.#changes = this.#changes.slice(cut);
    }
  }

  get size(): number {
    return this.#sorted.length - this.#gone.size + this.#recent.size;
  }

  has(seq: number): boolean {
    if (this.#recent.has(seq)) return true;
    return this.#inSorted(seq) && !this.#gone.has(seq);
  }

  add(seq: number): this {
    if (this.#add(seq)) this.#changed(seq, seq);
    return this;
  }

  /** Adds one seq; whether it was not a member. */
  #add(seq: number): boolean {
    if (this.#recent.has(seq)) return false;
    if (this.#inSorted(seq)) return this.#gone.delete(seq);
    this.#recent.add(seq);
    if (this.#recent.size > PENDING_MAX) this.#settle();
    return true;
  }

  /** Applies `change` to each of a few seqs one by one; the range of those it changed is noted once. */
  #each(seqs: readonly number[], change: (seq: number) => boolean): void {
    let lo = Number.POSITIVE_INFINITY;
    let hi = Number.NEGATIVE_INFINITY;
    for (const q of seqs) {
      if (!change(q)) continue;
      if (q < lo) lo = q;
      if (q > hi) hi = q;
    }
    if (lo <= hi) this.#changed(lo, hi);
  }

  /** Adds every value of `seqs` (any order, repeats allowed) in one merge. */
  addAll(seqs: readonly number[]): void {
    if (seqs.length === 0) return;
    if (seqs.length <= PENDING_MAX) {
      this.#each(seqs, (q) => this.#add(q));
      return;
    }
    this.#settle();
    const add = Float64Array.from(seqs);
    // A delete's seqs come sorted already: the sort is skipped then.
    let ascending = true;
    for (let i = 1; i < add.length && ascending; i++) if (add[i]! < add[i - 1]!) ascending = false;
    if (!ascending) add.sort();
    const before = this.#sorted.length;
    this.#sorted = union(this.#sorted, add);
    if (this.#sorted.length !== before) this.#changed(add[0]!, add[add.length - 1]!);
  }

  delete(seq: number): boolean {
    if (!this.#delete(seq)) return false;
    this.#changed(seq, seq);
    return true;
  }

  /** Removes one seq; whether it was a member. */
  #delete(seq: number): boolean {
    if (this.#recent.delete(seq)) return true;
    if (!this.#inSorted(seq) || this.#gone.has(seq)) return false;
    this.#gone.add(seq);
    if (this.#gone.size > PENDING_MAX) this.#settle();
    return true;
  }

  /** Removes every value of `seqs` (any order), in one pass over the array when there are many. */
  deleteAll(seqs: readonly number[]): void {
    if (seqs.length === 0) return;
    if (seqs.length <= PENDING_MAX) {
      this.#each(seqs, (q) => this.#delete(q));
      return;
    }
    this.#settle();
    const out = Float64Array.from(seqs).sort();
    const s = this.#sorted;
    const kept = new Float64Array(s.length);
    let k = 0;
    let j = 0;
    for (let i = 0; i < s.length; i++) {
      const q = s[i]!;
      while (j < out.length && out[j]! < q) j++;
      if (j < out.length && out[j] === q) continue;
      kept[k++] = q;
    }
    this.#sorted = kept.slice(0, k);
    if (k !== s.length) this.#changed(out[0]!, out[out.length - 1]!);
  }

  clear(): void {
    const had = this.size > 0;
    this.#sorted = new Float64Array(0);
    this.#recent.clear();
    this.#gone.clear();
    if (had) this.#changed(Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY);
  }

  *[Symbol.iterator](): IterableIterator<number> {
    const gone = this.#gone;
    for (const q of this.#sorted) if (!gone.has(q)) yield q;
    yield* this.#recent;
  }

  /** The members, ascending. */
  sorted(): Float64Array {
    this.#settle();
    return this.#sorted;
  }

  /** Whether some dead seq lies in [lo, hi]. */
  anyIn(lo: number, hi: number): boolean {
    for (const q of this.#recent) if (q >= lo && q <= hi) return true;
    const s = this.#sorted;
    for (let a = lowerBound(s, lo); a < s.length && s[a]! <= hi; a++) if (!this.#gone.has(s[a]!)) return true;
    return false;
  }

  #inSorted(seq: number): boolean {
    const s = this.#sorted;
    const a = lowerBound(s, seq);
    return a < s.length && s[a] === seq;
  }

  /** Merges the pending additions and removals into the sorted array. */
  #settle(): void {
    if (this.#gone.size > 0) {
      const gone = this.#gone;
      this.#sorted = this.#sorted.filter((q) => !gone.has(q));
      this.#gone = new Set();
    }
    if (this.#recent.size > 0) {
      this.#sorted = union(this.#sorted, Float64Array.from(this.#recent).sort());
      this.#recent = new Set();
    }
  }
}

/** The distinct values of two ascending arrays (`add` may repeat values), ascending. */
function union(old: Float64Array, add: Float64Array): Float64Array {
  const out = new Float64Array(old.length + add.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < old.length || j < add.length) {
    const q = j >= add.length || (i < old.length && old[i]! <= add[j]!) ? old[i++]! : add[j++]!;
    if (k === 0 || out[k - 1] !== q) out[k++] = q;
  }
  return k === out.length ? out : out.slice(0, k);
}
