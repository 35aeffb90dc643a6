// The planner's facts about spans still in memory come from notes the memory tables keep as rows
// arrive: they must say what a scan of the rows says (types with children, types carrying a kind
// column), including versions that gained children later, and fall back to a scan for rows replayed
// from the log, whose columns nobody looked at.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { Database } from '../../../src/db/database.js';
import { DataFactsCache, NOTED_COLUMNS } from '../../../src/query/exec/data-facts.js';
import { RecordStore } from '../../../src/storage/record-store.js';
import type { LogRow } from '../../../src/record/record.js';
import { tempDir } from '../../support/helpers.js';

const P = '11111111-1111-4111-8111-111111111111';
const R = '22222222-2222-4222-8222-222222222222';
const idOf = (k: number) => `00000000-0000-4000-8000-${String(k).padStart(12, '0')}`;
const scope = { projectId: P, runId: R, kinds: ['span'] as const };
const ASKED = new Set(['model', 'temperature', 'tool_call_id']);

function span(k: number, type: string, extra: Record<string, unknown> = {}): LogRow {
  return {
    seq: 0,
    id: idOf(k),
    type,
    project_id: P,
    run_id: R,
    trace_id: idOf(1000),
    parent_id: idOf(1000),
    name: `s${k}`,
    input: 'x',
    created_at: 1_700_000_000_000_000 + k,
    updated_at: 0,
    is_complete: true,
    has_children: false,
    ...extra,
  };
}

/** Facts as plain sorted lists, from notes (the engine's cache) and from a scan (a cache told nothing is noted). */
async function both(db: Database, store: RecordStore) {
  const plain = (f: Awaited<ReturnType<DataFactsCache['facts']>>) => ({
    children: [...f.typesWithChildren].sort(),
    with: Object.fromEntries([...f.typesWith].map(([c, ts]) => [c, [...ts].sort()]).sort()),
  });
  return store.read(async (snap) => ({
    noted: plain(await new DataFactsCache(db, store.notedColumns).facts(snap, scope, ASKED)),
    scanned: plain(await new DataFactsCache(db, []).facts(snap, scope, ASKED)),
    unnoted: snap.memoryNotes(scope).unnoted.length,
  }));
}

test('memory tables note span facts at ingest; replayed rows are scanned instead', async (t) => {
  const dir = tempDir(t);
  const open = async () => {
    const db = await Database.open({ tempDirectory: join(dir, 'tmp') });
    return { db, store: await RecordStore.open(dir, db, { autoCompact: false, notedColumns: NOTED_COLUMNS }) };
  };
  let { db, store } = await open();
  try {
    await store.append(
      [span(1, 'llm', { model: 'gpt-4o', temperature: 0.2 }), span(2, 'llm', { model: 'gpt-4o' }), span(3, 'tool', { tool_call_id: 'c1' })],
      true,
    );
    // A workflow span with a model (as OpenTelemetry may log it) and children; an agent that gains a child later.
    await store.append([span(4, 'workflow', { model: 'm', has_children: true }), span(5, 'agent')], true);
    await store.append([span(5, 'agent', { has_children: true })], true);
    const expected = {
      children: ['agent', 'workflow'],
      with: { model: ['llm', 'workflow'], temperature: ['llm'], tool_call_id: ['tool'] },
    };

    const live = await both(db, store);
    assert.equal(live.unnoted, 0, 'every memory table kept notes');
    assert.deepEqual(live.noted, expected);
    assert.deepEqual(live.scanned, expected);

    // Reopened without a seal: the rows come back from the log, their notes unknown.
    await store.close({ seal: false });
    await db.close();
    ({ db, store } = await open());
    await store.append([span(6, 'retriever')], true);
    const replayed = await both(db, store);
    assert.ok(replayed.unnoted > 0, 'the replayed table is scanned');
    assert.deepEqual(replayed.noted, expected);
    assert.deepEqual(replayed.scanned, expected);
  } finally {
    await store.close();
    await db.close();
  }
});
