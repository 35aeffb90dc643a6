// Edit distance (insertions, deletions and substitutions of one UTF-16 unit, each costing 1) and the
// similarity it gives: 1 - distance / length of the longer text, so 1 is identical and 0 shares nothing.

/** Longest text compared (longer ones are cut): the distance takes time proportional to the product of the lengths. */
export const MAX_LEVENSHTEIN_CHARS = 20_000;

export function levenshtein(a: string, b: string): number {
  if (a === b) return 0;
  if (a.length < b.length) [a, b] = [b, a];
  if (b.length === 0) return a.length;
  let prev = new Uint32Array(b.length + 1);
  let cur = new Uint32Array(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    const ca = a.charCodeAt(i - 1);
    for (let j = 1; j <= b.length; j++) {
      const cost = ca === b.charCodeAt(j - 1) ? 0 : 1;
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
    }
    [prev, cur] = [cur, prev];
  }
  return prev[b.length]!;
}

/** 1 - distance / max(length); 1 for two empty texts. */
export function levenshteinRatio(a: string, b: string): number {
  const x = a.slice(0, MAX_LEVENSHTEIN_CHARS);
  const y = b.slice(0, MAX_LEVENSHTEIN_CHARS);
  const longest = Math.max(x.length, y.length);
  if (longest === 0) return 1;
  return 1 - levenshtein(x, y) / longest;
}
