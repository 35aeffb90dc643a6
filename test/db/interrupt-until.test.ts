// Work of several statements ignores an interrupt that lands between two of them: the interrupt is
// repeated until the work settles, and a failed work settles the wait too.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { interruptUntilSettled } from '../../src/db/interrupt-until.js';

/** Work that ends at its third interrupt (the first two land between statements). */
function work(fail: boolean) {
  let interrupts = 0;
  let end!: () => void;
  const task = new Promise<void>((resolve, reject) => {
    end = () => (fail ? reject(new Error('interrupted')) : resolve());
  });
  const conn = {
    interrupt: () => {
      if (++interrupts === 3) end();
    },
  };
  return { task, conn, count: () => interrupts };
}

for (const fail of [false, true]) {
  test(`interrupts until the work ${fail ? 'fails' : 'ends'}, then stops interrupting`, async () => {
    const w = work(fail);
    w.task.catch(() => undefined);
    await interruptUntilSettled(w.task, () => w.conn);
    assert.equal(w.count(), 3);
    await new Promise((r) => setTimeout(r, 60));
    assert.equal(w.count(), 3, 'no interrupt after the work settled');
  });
}

test('settles at once for settled work and without a connection yet', async () => {
  await interruptUntilSettled(Promise.resolve(), () => null);
  let n = 0;
  const later = new Promise<void>((r) => setTimeout(r, 50));
  await interruptUntilSettled(later, () => {
    n++;
    return null;
  });
  assert.ok(n >= 2, 'asked for the connection on each tick');
});
