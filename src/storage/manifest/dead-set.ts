// The store's dead sequence numbers in JavaScript, with a sorted copy for range questions: which
// segments and memory tables hold no dead row at all, so reads may skip the dead-row filter on them
// (snapshot.ts). Additions go to a short unsorted list merged into the sorted copy now and then, so a
// read after each write does not sort the whole set again; a removal (rare: merges purging seqs)
// rebuilds the copy on the next question.

/** Additions kept unsorted (scanned on each question) before they are merged into the sorted copy. */
const RECENT_MAX = 1024;

export class DeadSet extends Set<number> {
  #sorted = new Float64Array(0);
  #recent: number[] = [];
  /** The sorted copy is missing removals: rebuild it before the next question. */
  #stale = false;

  override add(seq: number): this {
    if (!super.has(seq) && !this.#stale) this.#recent.push(seq);
    return super.add(seq);
  }

  override delete(seq: number): boolean {
    const gone = super.delete(seq);
    if (gone) this.#stale = true;
    return gone;
  }

  override clear(): void {
    super.clear();
    this.#stale = true;
  }

  /** Whether some dead seq lies in [lo, hi]. */
  anyIn(lo: number, hi: number): boolean {
    if (this.size === 0) return false;
    this.#settle();
    for (const q of this.#recent) if (q >= lo && q <= hi) return true;
    const s = this.#sorted;
    let a = 0;
    let b = s.length;
    while (a < b) {
      const m = (a + b) >>> 1;
      if (s[m]! < lo) a = m + 1;
      else b = m;
    }
    return a < s.length && s[a]! <= hi;
  }

  #settle(): void {
    if (this.#stale) {
      // Set.prototype.values, not our own iteration: the set holds exactly the live seqs.
      this.#sorted = Float64Array.from(super.values()).sort();
      this.#recent = [];
      this.#stale = false;
      return;
    }
    if (this.#recent.length <= RECENT_MAX) return;
    const add = Float64Array.from(this.#recent).sort();
    const old = this.#sorted;
    const out = new Float64Array(old.length + add.length);
    let i = 0;
    let j = 0;
    let k = 0;
    while (i < old.length && j < add.length) out[k++] = old[i]! <= add[j]! ? old[i++]! : add[j++]!;
    while (i < old.length) out[k++] = old[i++]!;
    while (j < add.length) out[k++] = add[j++]!;
    this.#sorted = out;
    this.#recent = [];
  }
}
