// Packed seq lists must give back exactly the list packed (any order, repeats, values up to 2^52) and
// refuse text that is cut short or not base64, never reading it as some other list.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { packSeqs, unpackSeqs } from '../../src/storage/seq-pack.js';

test('a packed list unpacks to the same values in the same order', () => {
  const runs: number[] = [];
  for (let q = 5; q < 200_000; q += 1 + (q % 37)) runs.push(q);
  const lists = [[], [0], [1, 1, 2], [9, 3, 7, 3, 0], [2 ** 52 - 1, 0, 2 ** 52 - 2, 2 ** 31, 2 ** 32 + 1], runs];
  for (const list of lists) assert.deepEqual(unpackSeqs(packSeqs(list)), list);
});

test('close ascending seqs take about a byte each, under a fourth of their JSON text', () => {
  const seqs = Array.from({ length: 100_000 }, (_, i) => 50_000_000 + i * 90);
  const packed = packSeqs(seqs);
  assert.ok(packed.length < JSON.stringify(seqs).length / 4, `${packed.length} chars`);
});

test('text cut short, or not base64, is refused', () => {
  const packed = packSeqs([300, 70_000, 70_001]);
  // A value's varint cut in the middle: the bytes end inside a value.
  const long = Buffer.from(packSeqs([2 ** 40]), 'base64');
  assert.throws(() => unpackSeqs(long.subarray(0, 3).toString('base64')), /cut short/);
  assert.throws(() => unpackSeqs(`${packed.slice(0, -1)}~`), /base64/);
  assert.throws(() => unpackSeqs(packed.slice(1)), /base64/);
});

test('negative, fractional or unsafe values are not packed', () => {
  for (const bad of [-1, 1.5, 2 ** 52, Number.NaN]) assert.throws(() => packSeqs([bad]), RangeError);
});

test('a list that is not packed by this scheme (unknown first byte, or empty) is refused', () => {
  assert.throws(() => unpackSeqs(''), /unknown kind/);
  assert.throws(() => unpackSeqs(Buffer.from([7, 1, 2]).toString('base64')), /unknown kind/);
});
