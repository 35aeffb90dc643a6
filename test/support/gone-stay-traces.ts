// Traces for the delete and index-repair tests: a root agent span with three workflow spans, each with
// 0-3 llm leaves tagged 'gone' or 'stay' (a delete by tag then leaves some parents without children).
// With `input`, each leaf carries that text (for text counts).

/** Traces k = from .. from + n - 1; leaf l of middle span m of trace k is `l{k}-{m}-{l}`. */
export function goneStayTraces(from: number, n: number, input?: (k: number, m: number, l: number) => string): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) => {
    const k = from + i;
    const leaves = (m: number) =>
      Array.from({ length: (k + m) % 4 }, (_, l) => ({
        type: 'llm',
        name: `l${k}-${m}-${l}`,
        ...(input ? { input: input(k, m, l) } : {}),
        tags: (k + m + l) % 3 === 0 ? ['gone'] : ['stay'],
      }));
    return {
      name: `t${k}`,
      spans: [
        { type: 'agent', name: `root${k}`, spans: [0, 1, 2].map((m) => ({ type: 'workflow', name: `c${k}-${m}`, spans: leaves(m) })) },
      ],
    };
  });
}
