// Whole-store checks shared by the hostile tests (fuzz, injection, crash, disk, load): every level's
// count equals the records a full paged walk returns, no id appears twice, and spans point at traces
// and sessions that exist.
import assert from 'node:assert/strict';
import type { TraceStore } from '../../src/engine/trace-store.js';
import type { Level } from '../../src/query/columns.js';
import type { RunIds } from '../../src/engine/run-scope.js';

export interface LevelCounts {
  span: number;
  trace: number;
  session: number;
}

export const LEVELS: readonly Level[] = ['span', 'trace', 'session'];

/** Every record of a level (optionally one run), walked page by page in the default order. */
export async function scan(
  store: TraceStore,
  level: Level,
  projectId: string,
  runIds: RunIds = {},
  filters: unknown[] = [],
): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (let token: number | null = 0; token !== null; ) {
    const page = await store.search(level, projectId, {
      ...runIds,
      ...(filters.length ? { filters } : {}),
      starting_token: token,
      limit: 500,
    } as never);
    out.push(...page.records);
    token = page.next_starting_token;
  }
  return out;
}

export async function counts(store: TraceStore, projectId: string, runIds: RunIds = {}): Promise<LevelCounts> {
  const c = async (level: Level) => (await store.count(level, projectId, runIds as never)).total_count;
  return { span: await c('span'), trace: await c('trace'), session: await c('session') };
}

/**
 * Asserts a project is consistent and returns its counts: count = walked records at each level, ids
 * unique, every span's trace and every trace's session present (unless `allowOrphans`).
 */
export async function assertConsistent(
  store: TraceStore,
  projectId: string,
  what = projectId,
  options: { allowOrphans?: boolean } = {},
): Promise<LevelCounts & { ids: Set<string> }> {
  const ids = new Set<string>();
  const byLevel = new Map<Level, Record<string, unknown>[]>();
  for (const level of LEVELS) {
    const records = await scan(store, level, projectId);
    const total = (await store.count(level, projectId, {})).total_count;
    assert.equal(records.length, total, `${what}: ${level} count ${total} but a full walk found ${records.length}`);
    for (const r of records) {
      const id = `${String(r['run_id'] ?? '')}/${String(r['id'])}`;
      assert.ok(!ids.has(id), `${what}: record ${id} appears twice`);
      ids.add(id);
    }
    byLevel.set(level, records);
  }
  if (!options.allowOrphans) {
    const traces = new Set(byLevel.get('trace')!.map((r) => String(r['id'])));
    const sessions = new Set(byLevel.get('session')!.map((r) => String(r['id'])));
    for (const s of byLevel.get('span')!)
      assert.ok(traces.has(String(s['trace_id'])), `${what}: span ${String(s['id'])} has no trace ${String(s['trace_id'])}`);
    for (const t of byLevel.get('trace')!)
      assert.ok(sessions.has(String(t['session_id'])), `${what}: trace ${String(t['id'])} has no session ${String(t['session_id'])}`);
  }
  return { span: byLevel.get('span')!.length, trace: byLevel.get('trace')!.length, session: byLevel.get('session')!.length, ids };
}
