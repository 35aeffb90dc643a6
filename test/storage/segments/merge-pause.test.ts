// Guarantees: background merges wait for a pause in appends (mergePauseMs), so they do not compete
// with a burst of logging, and run once it ends; and they wait no longer than mergeMaxDelayMs, so
// under endless logging segments still merge. Pauses here are seconds long, so a slow machine's
// stalls between the test's appends (ms apart) cannot pass for a pause.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import type { RecordStore } from '../../../src/storage/record-store.js';
import { openRecordStore, ROWS_PROJECT, ROWS_RUN, toolRows } from '../../support/helpers.js';

const scope = { projectId: ROWS_PROJECT, runId: ROWS_RUN, kinds: ['span'] as const };

function segments(store: RecordStore): number {
  const snap = store.snapshot();
  try {
    return snap.segmentsFor(scope).length;
  } finally {
    snap.release();
  }
}

/** Logs and seals `n` small segments, appending a row every few ms in between. */
async function burst(store: RecordStore, n: number, from: number): Promise<number> {
  let k = from;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < 5; j++) {
      await store.append(toolRows(k++, 1), false);
      await sleep(5);
    }
    await store.seal();
  }
  return k;
}

async function until(what: () => boolean, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(50)) if (what()) return true;
  return what();
}

test('background merges wait while rows arrive, then run once appends pause', { timeout: 120_000 }, async (t) => {
  const { store } = await openRecordStore(t, { autoCompact: true, mergePauseMs: 3_000, mergeMaxDelayMs: 600_000 });
  let k = await burst(store, 6, 0);
  // Six segments, enough for a merge (four at a time), and none has happened while rows kept coming.
  assert.equal(segments(store), 6);
  k = await burst(store, 2, k);
  assert.equal(segments(store), 8, 'still no merge while appends continue');
  await store.settled();
  assert.ok(await until(() => segments(store) < 8, 60_000), 'segments merge once appends pause');
});

test('a merge waits no longer than mergeMaxDelayMs for a pause that never comes', { timeout: 120_000 }, async (t) => {
  const { store } = await openRecordStore(t, { autoCompact: true, mergePauseMs: 600_000, mergeMaxDelayMs: 300 });
  let k = 0;
  let merged = false;
  // Appends never pause for 10 minutes; after at most 300 ms of waiting a merge runs anyway.
  for (let round = 0; round < 40 && !merged; round++) {
    k = await burst(store, 2, k);
    merged = segments(store) < 2 * (round + 1);
  }
  assert.ok(merged, 'segments merged while appends continued');
});
