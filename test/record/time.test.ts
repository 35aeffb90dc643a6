// Guarantees: timestamps parse to exact epoch microseconds (zones applied, no zone = UTC) and format back.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatTimestampUs, parseTimestampUs } from '../../src/record/time.js';

test('parse and format timestamps', () => {
  const base = Date.UTC(2026, 10, 21, 22, 23, 31, 766) * 1000;
  assert.equal(parseTimestampUs('2026-11-21T22:23:31.766Z'), base);
  assert.equal(parseTimestampUs('2026-11-21T22:23:31.766'), base, 'no zone is UTC');
  assert.equal(parseTimestampUs('2026-11-21T23:23:31.766+01:00'), base);
  assert.equal(parseTimestampUs('2026-11-21T22:23:31.766123456Z'), base + 123, 'nanoseconds truncate to µs');
  assert.equal(parseTimestampUs('2026-11-21'), Date.UTC(2026, 10, 21) * 1000);
  assert.equal(parseTimestampUs(Date.UTC(2026, 0, 1)), Date.UTC(2026, 0, 1) * 1000, 'numbers are epoch ms');
  for (const bad of ['yesterday', '2026-13-01T00:00:00Z', '2026-11-21T25:00:00Z', '']) assert.equal(parseTimestampUs(bad), null, bad);
  assert.equal(formatTimestampUs(base), '2026-11-21T22:23:31.766Z');
  assert.equal(formatTimestampUs(base + 5), '2026-11-21T22:23:31.766005Z');
});
