// Guarantees: background merges wait for a pause in appends (mergePauseMs), so they do not compete
// with a burst of logging, and run once it ends; and they wait no longer than mergeMaxDelayMs, so
// under endless logging segments still merge. No bound on the machine's speed: the test notes when
// each append started, and "no merge yet" is asserted only for a burst whose appends never left a
// gap as long as the pause (a stalled machine leaves one, and may then merge by the rules; that burst
// is tried again, up to five times).
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import type { RecordStore } from '../../../src/storage/record-store.js';
import { openRecordStore, ROWS_PROJECT, ROWS_RUN, toolRows } from '../../support/helpers.js';
import { waitFor } from '../../support/wait-for.js';

const scope = { projectId: ROWS_PROJECT, runId: ROWS_RUN, kinds: ['span'] as const };

function segments(store: RecordStore): number {
  const snap = store.snapshot();
  try {
    return snap.segmentsFor(scope).length;
  } finally {
    snap.release();
  }
}

/** When each append started (the store's pause counts from there), and the longest quiet spell. */
class Appends {
  #last = -Infinity;
  longest = 0;
  note(): void {
    const now = performance.now();
    if (this.#last > -Infinity) this.longest = Math.max(this.longest, now - this.#last);
    this.#last = now;
  }
  /** The longest gap up to now, the time since the last append included. */
  quietUpToNow(): number {
    return Math.max(this.longest, performance.now() - this.#last);
  }
}

/** Logs and seals `n` small segments, appending a row every few ms in between. */
async function burst(store: RecordStore, n: number, from: number, appends?: Appends): Promise<number> {
  let k = from;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < 5; j++) {
      appends?.note();
      await store.append(toolRows(k++, 1), false);
      await sleep(5);
    }
    await store.seal();
  }
  return k;
}

const PAUSE_MS = 3_000;

test('background merges wait while rows arrive, then run once appends pause', { timeout: 300_000 }, async (t) => {
  for (let attempt = 1; ; attempt++) {
    const { store } = await openRecordStore(t, { autoCompact: true, mergePauseMs: PAUSE_MS, mergeMaxDelayMs: 600_000 });
    const appends = new Appends();
    let k = await burst(store, 6, 0, appends);
    // Six segments, enough for a merge (four at a time): none may have happened while rows kept coming.
    const afterSix = segments(store);
    const quietSix = appends.quietUpToNow();
    k = await burst(store, 2, k, appends);
    const afterEight = segments(store);
    const quiet = Math.max(quietSix, appends.quietUpToNow());
    if (quiet >= PAUSE_MS) {
      // The appends paused (the machine stalled): a merge was allowed, so this burst shows nothing.
      t.diagnostic(`attempt ${attempt}: a ${quiet.toFixed(0)} ms gap between appends; trying again`);
      assert.ok(attempt < 5, `five bursts in a row had a gap of ${PAUSE_MS} ms or more between appends`);
      continue;
    }
    assert.equal(afterSix, 6, `no merge while appends continue (longest gap ${quietSix.toFixed(0)} ms)`);
    assert.equal(afterEight, 8, `still no merge while appends continue (longest gap ${quiet.toFixed(0)} ms)`);
    await store.settled();
    await waitFor(() => segments(store) < 8, { limitMs: 60_000, what: 'segments to merge once appends pause' });
    return;
  }
});

test('a merge waits no longer than mergeMaxDelayMs for a pause that never comes', { timeout: 300_000 }, async (t) => {
  const { store } = await openRecordStore(t, { autoCompact: true, mergePauseMs: 600_000, mergeMaxDelayMs: 300 });
  let k = 0;
  let merged = false;
  // Appends never pause for 10 minutes; after at most 300 ms of waiting a merge runs anyway. The
  // appends go on until it has (each round takes 50 ms at least: 400 rounds are minutes past 300 ms).
  for (let round = 0; round < 400 && !merged; round++) {
    k = await burst(store, 2, k);
    merged = segments(store) < 2 * (round + 1);
  }
  assert.ok(merged, 'segments merged while appends continued');
});
