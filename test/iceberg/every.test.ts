// Guarantees: publishing on a timer (`serve --iceberg-every`) publishes again after each interval,
// reports a failed publish and goes on, and stops (waiting for a publish under way) when asked.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { publishEvery } from '../../src/iceberg/every.js';
import type { Iceberg, PublishResult } from '../../src/iceberg/publish.js';

test('publishes every interval, survives a failure, stops when asked', async () => {
  let calls = 0;
  let running = 0;
  const fake = {
    publish: async () => {
      calls++;
      running++;
      assert.equal(running, 1, 'one publish at a time');
      await new Promise((r) => setTimeout(r, 20));
      running--;
      if (calls === 2) throw new Error('upload refused');
      return { to: 'x', tables: {}, bytesSent: 0, ms: 20 } as unknown as PublishResult;
    },
  } as unknown as Iceberg;
  const done: number[] = [];
  const failed: string[] = [];
  const p = publishEvery(fake, {}, 10, { done: () => done.push(calls), failed: (e) => failed.push((e as Error).message) });
  while (calls < 4) await new Promise((r) => setTimeout(r, 5));
  await p.stop();
  const at = calls;
  await new Promise((r) => setTimeout(r, 60));
  assert.equal(calls, at, 'no publish after stop');
  assert.equal(running, 0, 'stop waited for the publish under way');
  assert.deepEqual(failed, ['upload refused']);
  assert.ok(done.length >= 2);
});
