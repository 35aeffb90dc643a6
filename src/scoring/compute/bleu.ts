// Sentence BLEU (Papineni et al. 2002) of a candidate against one or more references: modified n-gram
// precisions for n = 1..4 clipped by the references' counts, their geometric mean with equal weights,
// times the brevity penalty for the reference length closest to the candidate's. Zero counts are
// smoothed by adding 0.1 to the numerator (Chen and Cherry's "method 1"), so a short answer that
// shares no 4-gram with the reference still gets a graded score; no shared word at all scores 0.
// Checked against NLTK's sentence_bleu with SmoothingFunction().method1 (test/scoring).

const EPSILON = 0.1;

function ngrams(tokens: readonly string[], n: number): Map<string, number> {
  const out = new Map<string, number>();
  for (let i = 0; i + n <= tokens.length; i++) {
    const key = tokens.slice(i, i + n).join('\u0000');
    out.set(key, (out.get(key) ?? 0) + 1);
  }
  return out;
}

/** BLEU in [0, 1]; 0 for an empty candidate. */
export function sentenceBleu(references: readonly (readonly string[])[], candidate: readonly string[], maxN = 4): number {
  if (candidate.length === 0 || references.length === 0) return 0;
  const logs: number[] = [];
  let anyMatch = false;
  for (let n = 1; n <= maxN; n++) {
    const cand = ngrams(candidate, n);
    const maxRef = new Map<string, number>();
    for (const ref of references) for (const [g, c] of ngrams(ref, n)) maxRef.set(g, Math.max(maxRef.get(g) ?? 0, c));
    let clipped = 0;
    let total = 0;
    for (const [g, c] of cand) {
      clipped += Math.min(c, maxRef.get(g) ?? 0);
      total += c;
    }
    const denominator = Math.max(1, total);
    if (n === 1 && clipped === 0) return 0;
    if (clipped > 0) anyMatch = true;
    logs.push(Math.log((clipped === 0 ? EPSILON : clipped) / denominator));
  }
  if (!anyMatch) return 0;
  const c = candidate.length;
  // The reference length closest to the candidate's (the shorter one on a tie).
  let r = references[0]!.length;
  for (const ref of references) {
    const d = Math.abs(ref.length - c);
    if (d < Math.abs(r - c) || (d === Math.abs(r - c) && ref.length < r)) r = ref.length;
  }
  const bp = c > r ? 1 : r === 0 ? 0 : Math.exp(1 - r / c);
  return bp * Math.exp(logs.reduce((a, b) => a + b, 0) / maxN);
}
