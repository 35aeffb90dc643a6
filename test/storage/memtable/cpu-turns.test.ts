// Guarantees: cpuTurn hands out turns in the order they were asked for, one per event-loop iteration,
// so completed I/O and timers run between two writers' CPU-heavy steps. Nothing here depends on how
// fast the machine is: writers take turns until a file read and a timer have completed, and the
// limit on turns is far beyond what that needs (a few loop iterations), yet far below what
// writers chained through promise continuations would run before any callback (all of them).
import assert from 'node:assert/strict';
import { readFile } from 'node:fs';
import { test } from 'node:test';
import { cpuTurn } from '../../../src/storage/memtable/cpu-turns.js';

test('turns run in the order they were asked for, each in a loop iteration of its own', async () => {
  const order: (number | string)[] = [];
  await Promise.all(
    Array.from({ length: 8 }, async (_, i) => {
      await cpuTurn();
      order.push(i);
      // A callback for the next loop iteration, queued by the first writer's step.
      if (i === 0)
        await new Promise<void>((r) =>
          setImmediate(() => {
            order.push('next iteration');
            r();
          }),
        );
    }),
  );
  assert.deepEqual(
    order.filter((e) => typeof e === 'number'),
    [0, 1, 2, 3, 4, 5, 6, 7],
  );
  // Eight turns handed out in one iteration would all run before it.
  assert.ok(order.indexOf('next iteration') < order.indexOf(7), order.join(' '));
});

test('one turn per loop iteration: I/O completions and timers run between writers', async () => {
  const LIMIT = 100_000;
  let io = false;
  let timer = false;
  readFile(new URL(import.meta.url), () => (io = true));
  setTimeout(() => (timer = true), 0);
  // Four writers, each asking for its next turn as soon as its step ends, until both callbacks ran.
  const turns = await Promise.all(
    Array.from({ length: 4 }, async () => {
      let n = 0;
      while (!(io && timer) && n < LIMIT) {
        await cpuTurn();
        n++;
      }
      return n;
    }),
  );
  const total = turns.reduce((a, b) => a + b, 0);
  assert.ok(io && timer, `after ${total} turns the file read ${io ? 'ran' : 'had not run'} and the timer ${timer ? 'ran' : 'had not run'}`);
});
