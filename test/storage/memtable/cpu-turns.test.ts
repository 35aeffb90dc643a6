import assert from 'node:assert/strict';
import { readFile } from 'node:fs';
import { test } from 'node:test';
import { cpuTurn } from '../../../src/storage/memtable/cpu-turns.js';

/** Keeps the thread busy, as a write's validate/flatten/build step does. */
function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

test('turns run in order, one per loop iteration, so I/O completions run between writers', async () => {
  const events: string[] = [];
  const io = new Promise<void>((resolve) => readFile(new URL(import.meta.url), () => (events.push('io'), resolve())));
  const timer = new Promise<void>((resolve) => setTimeout(() => (events.push('timer'), resolve()), 0));
  const writers = Array.from({ length: 8 }, async (_, i) => {
    await cpuTurn();
    events.push(`w${i}`);
    busy(5);
  });
  await Promise.all([...writers, io, timer]);
  const steps = events.filter((e) => e.startsWith('w'));
  assert.deepEqual(steps, Array.from({ length: 8 }, (_, i) => `w${i}`));
  // Chained through plain promise continuations, all eight steps would run before either callback.
  assert.ok(events.indexOf('io') < events.indexOf('w7'), events.join(' '));
  assert.ok(events.indexOf('timer') < events.indexOf('w7'), events.join(' '));
});
