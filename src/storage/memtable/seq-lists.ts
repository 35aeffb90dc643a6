// Lists of sequence numbers as a delete handles them: deduplicated and sorted once, then searched.

/**
 * The distinct values of `seqs` that `keep` accepts, ascending: one typed-array sort (none when they
 * ascend already), where a Set of a large delete's seqs (a million at 1% of 100M spans) cost most of
 * a second to build and copy.
 */
export function distinctSorted(seqs: readonly number[], keep: (q: number) => boolean): number[] {
  const a = ascending(seqs) ? seqs : Float64Array.from(seqs).sort();
  const out: number[] = [];
  for (let i = 0; i < a.length; i++) {
    const q = a[i]!;
    if ((i === 0 || q !== a[i - 1]) && keep(q)) out.push(q);
  }
  return out;
}

/**
 * The distinct values of `a` and `b` (any order), ascending: a merge when both ascend already (the
 * manifest's dead list does once written by this version), else one typed-array sort.
 */
export function sortedUnion(a: readonly number[], b: readonly number[]): number[] {
  const sa = ascending(a) ? a : Array.from(Float64Array.from(a).sort());
  const sb = ascending(b) ? b : Array.from(Float64Array.from(b).sort());
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < sa.length || j < sb.length) {
    const q = j >= sb.length || (i < sa.length && sa[i]! <= sb[j]!) ? sa[i++]! : sb[j++]!;
    if (out.length === 0 || out[out.length - 1] !== q) out.push(q);
  }
  return out;
}

/** Whether `a` never descends (a check in one pass, where a sort of a million values takes ~100 ms). */
export function ascending(a: ArrayLike<number>): boolean {
  for (let i = 1; i < a.length; i++) if (a[i]! < a[i - 1]!) return false;
  return true;
}

/** The first index of the ascending `sorted` whose value is >= `q` (binary search). */
export function lowerBound(sorted: ArrayLike<number>, q: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const m = (lo + hi) >>> 1;
    if (sorted[m]! < q) lo = m + 1;
    else hi = m;
  }
  return lo;
}

/** The first index of the ascending `sorted` whose value is > `q` (binary search). */
export function upperBound(sorted: ArrayLike<number>, q: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const m = (lo + hi) >>> 1;
    if (sorted[m]! <= q) lo = m + 1;
    else hi = m;
  }
  return lo;
}

/** Whether the ascending list `sorted` holds `q`. */
export function sortedHas(sorted: ArrayLike<number>, q: number): boolean {
  const at = lowerBound(sorted, q);
  return at < sorted.length && sorted[at] === q;
}
