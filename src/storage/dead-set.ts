// The store's dead sequence numbers in JavaScript, with a sorted copy for range questions: which
// segments hold no dead row at all, so reads may skip the dead-row filter on them (snapshot.ts).
// The sorted copy is rebuilt only after the set changed, on the first question that needs it.

export class DeadSet extends Set<number> {
  #version = 0;
  #sorted: Float64Array | null = null;

  override add(seq: number): this {
    if (!super.has(seq)) this.#changed();
    return super.add(seq);
  }

  override delete(seq: number): boolean {
    const gone = super.delete(seq);
    if (gone) this.#changed();
    return gone;
  }

  override clear(): void {
    super.clear();
    this.#changed();
  }

  /** Bumped on every change. */
  get version(): number {
    return this.#version;
  }

  #changed(): void {
    this.#version++;
    this.#sorted = null;
  }

  /** Whether some dead seq lies in [lo, hi]. */
  anyIn(lo: number, hi: number): boolean {
    if (this.size === 0) return false;
    const sorted = (this.#sorted ??= Float64Array.from(this).sort());
    let a = 0;
    let b = sorted.length;
    while (a < b) {
      const m = (a + b) >>> 1;
      if (sorted[m]! < lo) a = m + 1;
      else b = m;
    }
    return a < sorted.length && sorted[a]! <= hi;
  }
}
