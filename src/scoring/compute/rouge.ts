// ROUGE-1 (Lin 2004) F-measure of a candidate against a reference: the overlap of their unigram
// counts, as recall over the reference's tokens and precision over the candidate's, combined as
// their harmonic mean. Tokens are lower-cased runs of letters and digits.

/** ROUGE-1 F1 in [0, 1]; 0 when either side has no token. */
export function rouge1(reference: readonly string[], candidate: readonly string[]): number {
  if (reference.length === 0 || candidate.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const t of reference) counts.set(t, (counts.get(t) ?? 0) + 1);
  let overlap = 0;
  for (const t of candidate) {
    const left = counts.get(t) ?? 0;
    if (left > 0) {
      overlap++;
      counts.set(t, left - 1);
    }
  }
  if (overlap === 0) return 0;
  const precision = overlap / candidate.length;
  const recall = overlap / reference.length;
  return (2 * precision * recall) / (precision + recall);
}
