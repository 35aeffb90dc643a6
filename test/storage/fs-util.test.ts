// Guarantees: a ScratchBuffer hands out one memory for every ask within its size (from its start, so
// any typed array lies aligned on it), grows by doubling to hold a larger ask, gives fresh memory past
// its size; words() are zeroed whatever the buffer held.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ScratchBuffer } from '../../src/storage/fs-util.js';

test('a scratch buffer is shared by asks within its size, grown for larger ones, and fresh past it', () => {
  const s = new ScratchBuffer(1 << 20);
  const a = s.get(100);
  a.fill(7);
  const b = s.get(50);
  assert.equal(b.buffer, a.buffer, 'the same memory');
  assert.equal(b.byteOffset, 0);
  assert.equal(b.length, 50);
  assert.equal(b[0], 7, 'holding what it held');
  const w = s.words(10);
  assert.equal(w.buffer, a.buffer);
  assert.deepEqual([...w], new Array(10).fill(0), 'words are zeroed');
  // A larger ask: new memory (the old is let go), kept for the next asks.
  const big = s.get(200_000);
  assert.notEqual(big.buffer, a.buffer);
  assert.ok(big.buffer.byteLength >= 200_000);
  assert.equal(s.get(10).buffer, big.buffer);
  // Past its size: fresh memory each time, the kept buffer untouched.
  const huge = s.get(2 << 20);
  assert.notEqual(huge.buffer, big.buffer);
  assert.notEqual(s.get(2 << 20).buffer, huge.buffer);
  assert.equal(s.get(10).buffer, big.buffer);
});
