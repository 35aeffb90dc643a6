// Guarantees: a segment's top lists file keeps each listed row's name and tags, and a metric-sorted page filtered
// on name or tags is answered from the files in place, equal to the reference evaluator's page over
// every live record (dead and replaced rows in the lists, rows in memory, case-insensitive and escaped
// tags, OR and NOT); lists an older build wrote without those columns leave such pages to the keys
// query (same pages) until the background writes them again.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { internalsOf } from '../../../src/engine/internals.js';
import { TraceStore } from '../../../src/engine/trace-store.js';
import { manifestOf, tempDir } from '../../support/helpers.js';
import { idOf, listedStore, oneSpanTraces, type Rec } from '../../support/metric-pages.js';
import { ReferenceEvaluator, type Filter } from '../../support/reference-eval.js';

const TAGS: string[][] = [[], ['prod'], ['prod', 'web'], ['Web'], ['a\x1fb', 'prod'], ['WEB', 'x']];
const NAMES = ['call', 'plan', 'Call', 'retry'];

/** Traces of one llm span each: quality in tenths (ties), none on every seventh; a name and tags by hash. */
function tagged(from: number, n: number, shift = 0): Rec[] {
  return oneSpanTraces(
    from,
    n,
    (_, x) => ({
      model: x % 3 === 0 ? 'a' : 'b',
      name: NAMES[x % 4],
      metrics: (x % 7 === 0 ? {} : { quality: (x % 11) / 10 }) as Record<string, number>,
    }),
    shift,
  ).map((tr) => {
    const spans = tr['spans'] as Rec[];
    const x = (Math.imul(Number(String(spans[0]!['id']).slice(-6)), 2654435761) >>> 0) >>> 11;
    return { ...tr, spans: spans.map((s) => ({ ...s, tags: TAGS[(x + shift) % TAGS.length] })) };
  });
}

const llm: Filter = { type: 'text', column_id: 'type', operator: 'eq', value: 'llm' };
const FILTERS: { name: string; filters?: Filter[]; filter_tree?: unknown }[] = [
  {
    name: 'tags contains web, any case',
    filters: [{ type: 'collection', column_id: 'tags', operator: 'contains', value: 'web', case_sensitive: false }],
  },
  { name: 'llm, tags contains prod', filters: [llm, { type: 'collection', column_id: 'tags', operator: 'contains', value: 'prod' }] },
  { name: 'an escaped tag', filters: [{ type: 'collection', column_id: 'tags', operator: 'contains', value: 'a\x1fb' }] },
  { name: 'tags one_of', filters: [{ type: 'collection', column_id: 'tags', operator: 'one_of', value: ['x', 'web'] }] },
  { name: 'tags not_in', filters: [{ type: 'collection', column_id: 'tags', operator: 'not_in', value: ['prod'] }] },
  { name: 'name eq', filters: [{ type: 'text', column_id: 'name', operator: 'eq', value: 'call' }] },
  { name: 'name eq, any case', filters: [{ type: 'text', column_id: 'name', operator: 'eq', value: 'CALL', case_sensitive: false }] },
  {
    name: 'name or tag, and not model a',
    filter_tree: {
      and: [
        {
          or: [
            { filter: { type: 'text', column_id: 'name', operator: 'eq', value: 'retry' } },
            { filter: { type: 'collection', column_id: 'tags', operator: 'contains', value: 'x' } },
          ],
        },
        { not: { filter: { type: 'text', column_id: 'model', operator: 'eq', value: 'a' } } },
      ],
    },
  },
];

test('pages filtered on name or tags come from the top lists files, equal to the reference; older lists leave them to the keys query', async (t) => {
  const dir = tempDir(t);
  const steps: string[][] = [];
  const options = listedStore(steps);
  let store = await TraceStore.open(dir, options);
  const projectId = store.createProject({ name: 'p' }).id;
  const log_stream_id = store.createLogStream(projectId, 'default').id;
  for (let b = 0; b < 4; b++) {
    await store.logTraces(projectId, { log_stream_id, traces: tagged(b * 150, 150) } as never);
    await store.flush();
  }
  // Dead rows in the lists (deleted, and replaced by new versions in memory), and more rows in memory.
  const gone = [3, 40, 160, 333].map((i) => idOf(1_000_000 + i));
  await store.records.delete('span', projectId, { filters: [{ type: 'id', column_id: 'id', operator: 'one_of', value: gone }] });
  await store.logTraces(projectId, { log_stream_id, traces: tagged(200, 40, 3) } as never);
  await store.logTraces(projectId, { log_stream_id, traces: tagged(600, 50) } as never);

  const check = async (s: TraceStore, phase: string): Promise<number> => {
    const all: Rec[] = [];
    for (let start = 0; ; start += 1000) {
      const page = await s.search('span', projectId, { log_stream_id, starting_token: start, limit: 1000 });
      all.push(...page.records);
      if (!page.paginated) break;
    }
    assert.ok(all.length > 600 && !all.some((r) => gone.includes(String(r['id']))));
    const ref = new ReferenceEvaluator({ span: all, trace: [], session: [] });
    let listed = 0;
    for (const f of FILTERS) {
      for (const ascending of [false, true]) {
        for (const offset of [0, 7]) {
          const sort = { column_id: 'metrics/quality', ascending };
          const body = { ...(f.filters ? { filters: f.filters } : {}), ...(f.filter_tree ? { filter_tree: f.filter_tree } : {}), sort };
          const want = ref
            .search('span', body as never)
            .slice(offset, offset + 10)
            .map((r) => r['id']);
          assert.ok(want.length === 10, `${f.name}: a full page to compare`);
          steps.length = 0;
          const page = await s.partialSearch('span', projectId, {
            log_stream_id,
            ...body,
            pagination: { starting_token: offset, limit: 10 },
            select_columns: { column_ids: ['id', 'name', 'tags'] },
          } as never);
          const what = `${phase}: ${f.name} asc=${ascending} offset=${offset}: ${steps.flat().join(' → ')}`;
          assert.deepEqual(
            page.records.map((r) => r['id']),
            want,
            what,
          );
          for (const r of page.records) {
            const full = all.find((x) => x['id'] === r['id'])!;
            assert.deepEqual([r['name'], r['tags']], [full['name'], full['tags']], what);
          }
          if (/^keys \(top-k of \d+ listed rows\)$/.test(steps.flat()[0] ?? '')) listed++;
        }
      }
    }
    return listed;
  };
  const asked = FILTERS.length * 4;
  assert.ok((await check(store, 'lists with filter columns')) >= asked - 4, 'the lists answer (nearly) every page');
  await store.close();

  // Lists as an older build wrote them: the entries without the flag (the files' extra columns unread).
  const m = manifestOf(dir);
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ ...m, segments: m.segments.map(({ top_list_filters: _f, ...g }) => g) }));
  const reader = await TraceStore.open(dir, { ...options, readOnly: true });
  assert.equal(await check(reader, 'older lists'), 0, 'no page from lists without the filter columns');
  await reader.close();
  // A writable open writes them again in the background; the pages come from them once more.
  store = await TraceStore.open(dir, options);
  t.after(() => store.close());
  await internalsOf(store).records.factsSettled();
  assert.ok(manifestOf(dir).segments.every((g) => g.top_lists !== true || g.top_list_filters === true));
  assert.ok((await check(store, 'written again')) >= asked - 4);
});
