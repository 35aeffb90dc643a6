// The planner's facts about spans still in memory come from notes the memory tables keep as rows
// arrive: they must say what a scan of the rows says (types with children, types carrying a kind
// column), including versions that gained children later, and fall back to a scan for rows replayed
// from the log, whose columns nobody looked at. Segments carry theirs in their manifest entries
// (measured when written, by seals and merges alike): they must say what hand-written DuckDB over the
// file says, and spare the planner its scan; a segment written without them (an older store) is scanned
// and gives the same facts.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Database } from '../../../src/db/database.js';
import { sql } from '../../../src/query/sql.js';
import type { ManifestState } from '../../../src/storage/manifest/manifest.js';
import { DataFactsCache, NOTED_COLUMNS } from '../../../src/query/exec/data-facts.js';
import { RecordStore } from '../../../src/storage/record-store.js';
import type { LogRow } from '../../../src/record/record.js';
import { countingRunner } from '../../support/counting-runner.js';
import { factRow, factScope } from '../../support/fact-rows.js';
import { tempDir } from '../../support/helpers.js';

const scope = factScope;
const ASKED = new Set(['model', 'temperature', 'tool_call_id']);

const span = (k: number, type: string, extra: Record<string, unknown> = {}): LogRow => factRow(k, type, extra);

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

test('segments keep their type facts in the manifest: equal to DuckDB over the file, no scan needed; older entries are scanned', async (t) => {
  const dir = tempDir(t);
  const open = async () => {
    const db = await Database.open({ tempDirectory: join(dir, 'tmp') });
    return { db, store: await RecordStore.open(dir, db, { autoCompact: false, notedColumns: NOTED_COLUMNS }) };
  };
  let { db, store } = await open();
  const manifestPath = join(dir, 'manifest.json');
  const spanEntries = () => (JSON.parse(readFileSync(manifestPath, 'utf8')) as ManifestState).segments.filter((s) => s.kind === 'span');
  try {
    // Four seals (the merge policy merges four small segments of a partition).
    const batches = [
      [span(1, 'llm', { model: 'gpt-4o', temperature: 0.2 })],
      [span(3, 'tool', { tool_call_id: 'c1' })],
      [span(4, 'workflow', { model: 'm', has_children: true }), span(5, 'agent')],
      [span(6, 'llm')],
    ];
    for (const b of batches) {
      await store.append(b, true);
      await store.seal();
    }
    const sealed = spanEntries();
    assert.equal(sealed.length, 4, 'four span segments');
    assert.ok(
      sealed.every((e) => e.type_facts !== undefined),
      'every sealed segment records its type facts',
    );
    await store.compact();
    const entries = spanEntries();
    assert.equal(entries.length, 1, 'merged into one segment');
    const expected = {
      children: ['workflow'],
      with: { model: ['llm', 'workflow'], temperature: ['llm'], tool_call_id: ['tool'] },
    };

    // The merged entry's facts against a GROUP BY written by hand over its file.
    const facts = entries[0]!.type_facts;
    assert.ok(facts, 'the merged segment records its type facts');
    const file = join(dir, entries[0]!.file);
    const byHand = await db.all(
      sql`SELECT type, bool_or(has_children) AS hc, bool_or(model IS NOT NULL) AS model,
            bool_or(temperature IS NOT NULL) AS temperature, bool_or(tool_call_id IS NOT NULL) AS tool_call_id
          FROM read_parquet(${file}) GROUP BY type ORDER BY type`,
    );
    assert.deepEqual(
      Object.keys(facts.types).sort(),
      byHand.map((r) => r['type']),
    );
    for (const r of byHand) {
      const f: { readonly children: boolean; readonly set: readonly string[] } = facts.types[String(r['type'])]!;
      assert.equal(f.children, r['hc'], `children of ${r['type']}`);
      for (const c of ['model', 'temperature', 'tool_call_id']) assert.equal(f.set.includes(c), r[c], `${c} of ${r['type']}`);
    }

    const asked = async () => {
      const c = countingRunner(db, 'bool_or(r.has_children)');
      const f: Awaited<ReturnType<DataFactsCache['facts']>> = await store.read((snap) =>
        new DataFactsCache(c.runner, store.notedColumns).facts(snap, scope, ASKED),
      );
      return {
        scans: c.count(),
        children: [...f.typesWithChildren].sort(),
        with: Object.fromEntries([...f.typesWith].map(([k, ts]) => [k, [...ts].sort()]).sort()),
      };
    };
    const kept = await asked();
    assert.equal(kept.scans, 0, 'no segment scanned');
    assert.deepEqual({ children: kept.children, with: kept.with }, expected);

    // An older store: entries without facts are scanned, with the same answer.
    await store.close();
    await db.close();
    const m = JSON.parse(readFileSync(manifestPath, 'utf8')) as { segments: Record<string, unknown>[] };
    for (const s of m.segments) delete s['type_facts'];
    writeFileSync(manifestPath, JSON.stringify(m));
    ({ db, store } = await open());
    const old = await asked();
    assert.equal(old.scans, 1, 'the segment without facts is scanned');
    assert.deepEqual({ children: old.children, with: old.with }, expected);
  } finally {
    await store.close();
    await db.close();
  }
});
