// Guarantees: the writer keeps a retired segment only while an unexpired lease names a generation
// before its retirement, and never past its grace period (a stuck reader that keeps renewing cannot
// make it keep files for ever); expired leases and a killed reader's temporary file are removed by the
// writer once stale; a reader that cannot write the readers folder runs without a lease.
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { KeptFiles, READERS_DIR, ReaderLease, readLeases } from '../../../src/storage/readers/leases.js';
import { tempDir } from '../../support/helpers.js';

function setup(): { dir: string; removed: string[]; lease: (name: string, generation: number, expiresAt: number) => void } {
  const dir = tempDir();
  mkdirSync(join(dir, READERS_DIR));
  const removed: string[] = [];
  const lease = (name: string, generation: number, expiresAt: number) =>
    writeFileSync(join(dir, READERS_DIR, `${name}.json`), JSON.stringify({ pid: 1, generation, expires_at: expiresAt }));
  return { dir, removed, lease };
}

test('a retired segment is kept while a live lease names an older generation, and no longer than the grace period', () => {
  const { dir, removed, lease } = setup();
  const now = Date.now();
  lease('100-0000000a', 4, now + 60_000);
  const kept = new KeptFiles(dir, (f) => removed.push(f), 5_000);
  kept.retire('a.parquet', 5); // retired after generation 4: the reader may still read it
  kept.retire('b.parquet', 4); // retired at the reader's own generation: it cannot read it
  assert.deepEqual(removed, ['b.parquet']);
  assert.deepEqual(kept.files, ['a.parquet']);
  kept.sweep(now + 1_000);
  assert.deepEqual(kept.files, ['a.parquet'], 'still needed');
  // The lease keeps being renewed (a stuck reader), but the grace period ends it.
  lease('100-0000000a', 4, now + 600_000);
  kept.sweep(now + 5_100);
  assert.deepEqual(removed, ['b.parquet', 'a.parquet']);
  kept.close();
});

test('a lease that expires lets its files go; without a grace period nothing is kept', () => {
  const { dir, removed, lease } = setup();
  const now = Date.now();
  lease('100-0000000b', 1, now + 1_000);
  const kept = new KeptFiles(dir, (f) => removed.push(f), 60_000);
  kept.retire('a.parquet', 2);
  assert.deepEqual(kept.files, ['a.parquet']);
  kept.sweep(now + 2_000);
  assert.deepEqual(removed, ['a.parquet']);
  const none = new KeptFiles(dir, (f) => removed.push(f), 0);
  lease('100-0000000c', 1, now + 60_000);
  none.retire('c.parquet', 2);
  assert.deepEqual(removed, ['a.parquet', 'c.parquet']);
  kept.close();
  none.close();
});

test('stale leases and temporary files of killed readers are removed; unreadable ones are skipped', () => {
  const { dir, lease } = setup();
  const now = Date.now();
  lease('100-0000000d', 1, now - 120_000); // expired two minutes ago
  lease('101-0000000e', 1, now + 10_000);
  writeFileSync(join(dir, READERS_DIR, '102-0000000f.json'), '{not json');
  writeFileSync(join(dir, READERS_DIR, '103-00000010.json.tmp'), '{}');
  utimesSync(join(dir, READERS_DIR, '103-00000010.json.tmp'), (now - 120_000) / 1000, (now - 120_000) / 1000);
  writeFileSync(join(dir, READERS_DIR, 'notes.txt'), 'not a lease');
  assert.deepEqual(
    readLeases(dir, now).map((l) => l.expires_at),
    [now + 10_000],
  );
  assert.deepEqual(readdirSync(join(dir, READERS_DIR)).sort(), ['101-0000000e.json', '102-0000000f.json', 'notes.txt']);
});

test('a reader takes, renews and removes its lease; with no writable readers folder it has none', () => {
  const { dir } = setup();
  let generation = 3;
  const lease = ReaderLease.take(dir, () => generation, 30_000)!;
  assert.ok(lease);
  assert.deepEqual(
    readLeases(dir).map((l) => [l.pid, l.generation]),
    [[process.pid, 3]],
  );
  generation = 7;
  lease.renew();
  assert.deepEqual(
    readLeases(dir).map((l) => l.generation),
    [7],
  );
  lease.stop();
  assert.deepEqual(readdirSync(join(dir, READERS_DIR)), []);
  assert.equal(
    ReaderLease.take(join(dir, 'missing'), () => 1),
    null,
  );
});
