// Binary search over sorted numbers, shared by the indexes that keep sorted keys.

/**
 * Binary search of an ascending array of numbers, or of its slice [from, to) (a block of id hashes in
 * ids-file.ts, trigram keys in text-index.ts).
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
