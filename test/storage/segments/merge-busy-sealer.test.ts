// Guarantee: segments merge while logging goes on even when the sealer never goes idle, i.e. tables
// freeze as fast as they are sealed. The compactor used to be scheduled only when the sealer's loop
// found no frozen table left, so under such load no merge ran until ingest stopped: small segments
// piled up (slower reads) and all merging landed in the final compaction.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RecordStore } from '../../../src/storage/record-store.js';
import { openRecordStore, ROWS_PROJECT, ROWS_RUN, toolRows } from '../../support/helpers.js';

const scope = { projectId: ROWS_PROJECT, runId: ROWS_RUN, kinds: ['span'] as const };

function segmentRows(store: RecordStore): number[] {
  const snap = store.snapshot();
  try {
    return snap.segmentsFor(scope).map((g) => g.rows);
  } finally {
    snap.release();
  }
}

test('segments merge while tables freeze as fast as they are sealed', { timeout: 120_000 }, async (t) => {
  const ROWS = 20;
  // Every append fills a table (sealRows), and appends are not awaited one by one, so a frozen table
  // is always waiting when a seal ends (the writers wait only for backpressure). No pause is needed
  // for a merge to start (mergeMaxDelayMs 0), so only the scheduling decides whether one runs.
  const { store } = await openRecordStore(t, { autoCompact: true, sealRows: ROWS, mergePauseMs: 600_000, mergeMaxDelayMs: 0 });
  let merged = false;
  let seals = 0;
  let k = 0;
  for (let round = 0; round < 100 && !merged; round++) {
    const batch = [];
    for (let i = 0; i < 4; i++, k += ROWS) batch.push(store.append(toolRows(k, ROWS), false));
    await Promise.all(batch);
    seals += 4;
    // A merged segment holds more rows than one table; seals alone never write one.
    merged = segmentRows(store).some((n) => n > ROWS);
  }
  assert.ok(merged, `no merge while ${seals} tables were logged and sealed back to back`);
  const rows = segmentRows(store);
  assert.ok(rows.length < seals, 'fewer segments than seals');
  // Merges lose and double nothing: once all is sealed the segments hold every row once.
  await store.seal();
  assert.equal(
    segmentRows(store).reduce((a, b) => a + b, 0),
    k,
  );
});

test('while rows keep arriving, merges take segments of one size: a big segment is not rewritten with each burst of small ones', {
  timeout: 120_000,
}, async (t) => {
  const ROWS = 20;
  const { store } = await openRecordStore(t, { autoCompact: true, sealRows: ROWS, mergePauseMs: 600_000, mergeMaxDelayMs: 0 });
  // One append fills one table: a segment of 20 tables' worth, far above a seal's size.
  await store.append(toolRows(0, 20 * ROWS), false);
  await store.seal();
  const files = () => {
    const snap = store.snapshot();
    try {
      return snap.segmentsFor(scope).map((g) => ({ file: g.file, rows: g.rows }));
    } finally {
      snap.release();
    }
  };
  const [big] = files();
  assert.equal(big!.rows, 20 * ROWS);
  let k = 20 * ROWS;
  let merged = false;
  for (let round = 0; round < 100 && !merged; round++) {
    const batch = [];
    for (let i = 0; i < 4; i++, k += ROWS) batch.push(store.append(toolRows(k, ROWS), false));
    await Promise.all(batch);
    merged = files().some((g) => g.rows > ROWS && g.file !== big!.file);
  }
  assert.ok(merged, 'small segments merged while logging went on');
  assert.ok(
    files().some((g) => g.file === big!.file),
    'the big segment was rewritten with small ones',
  );
  await store.seal();
  assert.equal(
    files().reduce((a, g) => a + g.rows, 0),
    k,
  );
});
