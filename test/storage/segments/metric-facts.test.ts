// Segments keep in their manifest entry which metric columns hold a value in every row (measured from
// the written file's footer, by seals and merges alike): the list must equal what hand-written DuckDB
// counts over the file, and the planner's own-value facts must take it without reading any footer; an
// entry written without it (an older store) has its footer read and gives the same answer.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Database } from '../../../src/db/database.js';
import { OwnValueFacts } from '../../../src/query/exec/own-values.js';
import { ident, sql } from '../../../src/query/sql.js';
import type { LogRow } from '../../../src/record/record.js';
import type { ManifestState, SegmentEntry } from '../../../src/storage/manifest/manifest.js';
import { RecordStore } from '../../../src/storage/record-store.js';
import { countingRunner } from '../../support/counting-runner.js';
import { factMetrics, factRow, factScope } from '../../support/fact-rows.js';
import { tempDir } from '../../support/helpers.js';

const scope = factScope;

/** Every span has a duration; only llm spans have tokens; quality only on the spans of the last batch. */
const span = (k: number, type: 'llm' | 'tool', quality: boolean): LogRow => factRow(k, type, { metrics: factMetrics(k, type, quality) });

test('segments record their full metric columns: equal to DuckDB over the file, no footer read; older entries read it', async (t) => {
  const dir = tempDir(t);
  const open = async () => {
    const db = await Database.open({ tempDirectory: join(dir, 'tmp') });
    return { db, store: await RecordStore.open(dir, db, { autoCompact: false }) };
  };
  let { db, store } = await open();
  const manifestPath = join(dir, 'manifest.json');
  const manifest = () => JSON.parse(readFileSync(manifestPath, 'utf8')) as ManifestState;
  const spanEntries = () => manifest().segments.filter((s) => s.kind === 'span');
  const ASKED = ['duration_ns', 'num_input_tokens', 'quality'];
  /** Of ASKED, the metrics every row of the file holds, by hand. */
  const byHand = async (e: SegmentEntry, ids: Readonly<Record<string, number>>) => {
    const file = join(dir, e.file);
    const out: string[] = [];
    for (const m of ASKED) {
      const id = ids[m];
      if (id === undefined || !e.metrics.includes(id)) continue;
      const [row] = await db.all(sql`SELECT count(*) FILTER (WHERE ${ident(`m${id}`)} IS NULL) AS n FROM read_parquet(${file})`);
      if (Number(row!['n']) === 0) out.push(m);
    }
    return out;
  };
  const named = (e: SegmentEntry, ids: Readonly<Record<string, number>>) =>
    ASKED.filter((m) => ids[m] !== undefined && (e.full_metrics ?? []).includes(ids[m]!));
  try {
    // Four seals (the merge policy merges four small segments of a partition); quality only in the last.
    const batches = [
      [span(1, 'llm', false), span(2, 'tool', false)],
      [span(3, 'llm', false)],
      [span(4, 'llm', false), span(5, 'llm', false)],
      [span(6, 'llm', true), span(7, 'llm', true)],
    ];
    for (const b of batches) {
      await store.append(b, true);
      await store.seal();
    }
    const ids = manifest().metric_ids;
    const sealed = spanEntries();
    assert.equal(sealed.length, 4, 'four span segments');
    for (const e of sealed) {
      assert.ok(e.full_metrics, `${e.file} records its full metrics`);
      assert.deepEqual(named(e, ids), await byHand(e, ids), e.file);
    }
    // The seals differ: tokens full only where every span is an llm span, quality only in the last.
    assert.deepEqual(
      sealed.map((e) => named(e, ids)),
      [
        ['duration_ns'],
        ['duration_ns', 'num_input_tokens'],
        ['duration_ns', 'num_input_tokens'],
        ['duration_ns', 'num_input_tokens', 'quality'],
      ],
    );

    await store.compact();
    const [merged, ...rest] = spanEntries();
    assert.equal(rest.length, 0, 'merged into one segment');
    assert.deepEqual(named(merged!, ids), ['duration_ns'], 'the merge: only duration is in every row');
    assert.deepEqual(await byHand(merged!, ids), ['duration_ns']);

    const asked = async () => {
      const c = countingRunner(db, 'parquet_metadata(');
      const full = await store.read((snap) => new OwnValueFacts(c.runner).full(snap, scope, ASKED));
      return { footers: c.count(), full: [...full].sort() };
    };
    const kept = await asked();
    assert.deepEqual(kept, { footers: 0, full: ['duration_ns'] }, 'taken from the entry, no footer read');

    // An older store: entries without the list have their footers read, with the same answer.
    await store.close();
    await db.close();
    const m = manifest() as unknown as { segments: Record<string, unknown>[] };
    for (const s of m.segments) delete s['full_metrics'];
    writeFileSync(manifestPath, JSON.stringify(m));
    ({ db, store } = await open());
    const old = await asked();
    assert.deepEqual(old, { footers: 1, full: ['duration_ns'] }, 'the footer of the segment without the list is read');
  } finally {
    await store.close();
    await db.close();
  }
});
