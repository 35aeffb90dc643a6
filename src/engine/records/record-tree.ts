// A record with its descendants nested, read through the store's own searches (paged by created_at).
import type { Catalog } from '../../catalog/catalog.js';
import { NotFoundError } from '../../errors.js';
import type { Level } from '../../query/columns.js';
import type { SearchRequest } from '../../schemas/query.js';
import type { RunIds } from '../run-scope.js';
import type { SearchResult } from '../../query/exec/record-queries.js';

interface TreeHost {
  readonly catalog: Catalog;
  search(level: Level, projectId: string, body: SearchRequest): Promise<SearchResult>;
}

/** One record with its descendants nested (a trace's spans, a span's subtree, a session's traces). */
export async function recordTree(store: TreeHost, level: Level, projectId: string, id: string): Promise<Record<string, unknown>> {
  const project = store.catalog.project(projectId);
  const key = id.toLowerCase();
  const filter = (column: string, value = key) => ({ filters: [{ type: 'id', column_id: column, operator: 'eq', value }] });
  const found = await store.search(level, project.id, { ...filter('id'), limit: 1 });
  const record = found.records[0];
  if (!record) throw new NotFoundError(`${level} ${id} not found`);
  const runIds = { log_stream_id: String(record['run_id']) } as RunIds;
  const linkValue = level === 'span' ? String(record['trace_id']) : key;
  const all = async (lvl: Level, column: string) => {
    const out: Record<string, unknown>[] = [];
    for (let token: number | null = 0; token !== null; ) {
      const page = await store.search(lvl, project.id, {
        ...runScopeOf(store.catalog, project.id, runIds),
        ...filter(column, linkValue),
        starting_token: token,
        limit: 1000,
        sort: { column_id: 'created_at', ascending: true },
      });
      out.push(...page.records);
      token = page.next_starting_token;
    }
    return out;
  };
  if (level === 'session') {
    const traces = await all('trace', 'session_id');
    const spans = await all('span', 'session_id');
    return {
      ...record,
      traces: traces.map((t) => ({
        ...t,
        spans: nest(
          spans.filter((s) => s['trace_id'] === t['id']),
          String(t['id']),
        ),
      })),
    };
  }
  return { ...record, spans: nest(await all('span', 'trace_id'), key) };
}

/** Children of `parentId` among `spans`, each with its own children nested, in step order. */
function nest(spans: Record<string, unknown>[], parentId: string): Record<string, unknown>[] {
  const byParent = new Map<string, Record<string, unknown>[]>();
  for (const sp of spans) {
    const p = String(sp['parent_id']);
    const list = byParent.get(p) ?? [];
    list.push(sp);
    byParent.set(p, list);
  }
  const build = (pid: string, depth: number): Record<string, unknown>[] =>
    (byParent.get(pid) ?? [])
      .sort((a, b) => Number(a['step_number'] ?? 0) - Number(b['step_number'] ?? 0))
      .map((sp) => ({ ...sp, spans: depth > 256 ? [] : build(String(sp['id']), depth + 1) }));
  return build(parentId, 0);
}

/** The run ids of a record's run, as a request body would give them. */
function runScopeOf(catalog: Catalog, projectId: string, ids: RunIds): RunIds {
  const run = catalog.run(projectId, String(ids.log_stream_id));
  return run.kind === 'log_stream'
    ? { log_stream_id: run.id }
    : run.kind === 'experiment'
      ? { experiment_id: run.id }
      : { metrics_testing_id: run.id };
}
