// Fixtures for metric-sorted page tests: traces of one llm span each, with many ties on the sort key,
// records without it and two models, and the page such a search must return, computed in JavaScript
// from every live record.
import assert from 'node:assert/strict';
import type { TraceStore } from '../../src/engine/trace-store.js';

export type Rec = Record<string, unknown>;

/** Options of a store whose every seal gets top lists (small row groups, no merges, every filter rate tried); plans go to `steps`. */
export const listedStore = (steps: string[][]) => ({
  threads: 1,
  rowGroupSize: 16,
  sealRows: 1_000_000,
  autoCompact: false,
  topListMinRows: 0,
  metricTopKRowsPerCandidate: 0,
  onPlan: (s: readonly string[]) => steps.push([...s]),
});

export const idOf = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** What an llm span of oneSpanTraces carries, from its index `i` and that index's hash `x`. */
export type SpanShape = (i: number, x: number) => { model: string; metrics: Record<string, number>; name?: string };

/**
 * Traces `from`..`from + n - 1` of one llm span each (span ids from 1,000,000 + i), one second apart;
 * the span's model, metrics and name (default `call`) from `shape`.
 */
export function oneSpanTraces(from: number, n: number, shape: SpanShape, shift = 0): Rec[] {
  return Array.from({ length: n }, (_, j) => {
    const i = from + j;
    const x = (Math.imul(i, 2654435761) >>> 0) + shift;
    const created_at = new Date(1_700_000_000_000 + i * 1000).toISOString();
    const { name = 'call', model, metrics } = shape(i, x);
    return {
      id: idOf(i),
      name: `t${i}`,
      input: 'q',
      created_at,
      spans: [{ type: 'llm', id: idOf(1_000_000 + i), name, input: 'x', created_at, model, metrics }],
    };
  });
}

/**
 * Traces `from`..`from + n - 1` of one llm span each; quality in tenths (many ties), none on every
 * seventh; tokens 0-96; model a or b. `shift` changes the values (a replaced record).
 */
export function llmTraces(from: number, n: number, shift = 0): Rec[] {
  return oneSpanTraces(
    from,
    n,
    (_, x) => ({
      model: x % 3 === 0 ? 'a' : 'b',
      metrics: { ...(x % 7 === 0 ? {} : { quality: (x % 11) / 10 }), tokens: x % 97 },
    }),
    shift,
  );
}

const metric = (r: Rec, name: string) => ((r['metrics'] as Rec | undefined)?.[name] as number | undefined) ?? null;
const cmpId = (a: Rec, b: Rec, ascending: boolean) => (String(a['id']) < String(b['id']) ? -1 : 1) * (ascending ? 1 : -1);

/**
 * Ids of the page of llm spans (of `model`, or with more than `tokensOver` tokens) by quality, NULLs
 * last either way, ties by id in the same direction.
 */
export function expectedPage(
  all: readonly Rec[],
  where: { model?: string; tokensOver?: number },
  ascending: boolean,
  offset: number,
  limit: number,
): string[] {
  const rows = all.filter(
    (r) =>
      r['type'] === 'llm' &&
      (where.model === undefined || r['model'] === where.model) &&
      (where.tokensOver === undefined || (metric(r, 'tokens') ?? -Infinity) > where.tokensOver),
  );
  rows.sort((a, b) => {
    const va = metric(a, 'quality');
    const vb = metric(b, 'quality');
    if (va === null || vb === null) return va === vb ? cmpId(a, b, ascending) : va === null ? 1 : -1;
    if (va !== vb) return ascending ? va - vb : vb - va;
    return cmpId(a, b, ascending);
  });
  return rows.slice(offset, offset + limit).map((r) => String(r['id']));
}

/**
 * Fills a store for these tests: four flushed batches of 120 traces, then the llm spans of traces
 * `goneAt` deleted, traces 200-229 replaced by new versions with other values (in memory) and 40 more in
 * memory. Returns the deleted span ids and every live record (read page by page).
 */
export async function fillWithDeadAndMemoryRows(
  store: TraceStore,
  projectId: string,
  log_stream_id: string,
  goneAt: readonly number[],
): Promise<{ gone: string[]; all: Rec[] }> {
  for (let b = 0; b < 4; b++) {
    await store.logTraces(projectId, { log_stream_id, traces: llmTraces(b * 120, 120) } as never);
    await store.flush();
  }
  const gone = goneAt.map((i) => idOf(1_000_000 + i));
  await store.records.delete('span', projectId, { filters: [{ type: 'id', column_id: 'id', operator: 'one_of', value: gone }] });
  await store.logTraces(projectId, { log_stream_id, traces: llmTraces(200, 30, 5) } as never);
  await store.logTraces(projectId, { log_stream_id, traces: llmTraces(480, 40) } as never);
  assert.ok(store.records.stats.sealedRows > 0 && store.records.stats.memRows > 0, 'rows both sealed and in memory');
  const all = await everySpan(store, projectId, log_stream_id);
  assert.ok(
    all.every((r) => !gone.includes(String(r['id']))),
    'deleted spans are gone',
  );
  return { gone, all };
}

type PageScope = { projectId: string; log_stream_id: string; all: readonly Rec[]; steps: string[][] };

/**
 * Asks a page of spans by quality (the body's filters, order and rows), checks its ids against
 * `expected`, and returns the plan's steps (`steps` is what the store's onPlan fills).
 */
async function askQualityPage(store: TraceStore, scope: PageScope, body: Rec, expected: string[], what: string): Promise<string[]> {
  const { projectId, log_stream_id, steps } = scope;
  steps.length = 0;
  const page = await store.partialSearch('span', projectId, { log_stream_id, ...body, select_columns: { column_ids: ['id'] } } as never);
  assert.deepEqual(
    page.records.map((r) => r['id']),
    expected,
    `${what}${steps.flat().join(' → ')}`,
  );
  return steps.flat();
}

/**
 * Asks the first `limit` spans with more than `over` tokens by quality, best first, checks their ids
 * against expectedPage over `all` (every span of these fixtures is an llm span), and returns the
 * plan's steps.
 */
export function askTokensPage(store: TraceStore, scope: PageScope, over: number, limit: number): Promise<string[]> {
  const body = {
    filters: [{ type: 'number', column_id: 'metrics/tokens', operator: 'gt', value: over }],
    sort: { column_id: 'metrics/quality', ascending: false },
    limit,
  };
  return askQualityPage(store, scope, body, expectedPage(scope.all, { tokensOver: over }, false, 0, limit), '');
}

/**
 * Asks the page of llm spans (of `model`, when given) by quality, ten rows from `offset`, checks its ids
 * against expectedPage over `all`, and returns the plan's steps.
 */
export function askLlmPage(
  store: TraceStore,
  scope: PageScope,
  model: string | undefined,
  ascending: boolean,
  offset: number,
): Promise<string[]> {
  const body = {
    filters: [
      { type: 'text', column_id: 'type', operator: 'eq', value: 'llm' },
      ...(model === undefined ? [] : [{ type: 'text', column_id: 'model', operator: 'eq', value: model }]),
    ],
    sort: { column_id: 'metrics/quality', ascending },
    pagination: { starting_token: offset, limit: 10 },
  };
  const expected = expectedPage(scope.all, model === undefined ? {} : { model }, ascending, offset, 10);
  return askQualityPage(store, scope, body, expected, `model ${model} asc=${ascending} offset=${offset}: `);
}

/** Every span record of a stream, page by page (the reference a page is checked against). */
export async function everySpan(store: TraceStore, projectId: string, log_stream_id: string): Promise<Rec[]> {
  const all: Rec[] = [];
  for (let start = 0; ; start += 1000) {
    const page = await store.search('span', projectId, { log_stream_id, starting_token: start, limit: 1000 });
    all.push(...page.records);
    if (!page.paginated) return all;
  }
}
