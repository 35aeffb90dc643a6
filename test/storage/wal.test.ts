// Guarantees: the write-ahead log keeps whole requests only (a torn tail is cut at the last commit
// line), rolls files on demand, and group-commits concurrent reliable appends.
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { WriteAheadLog } from '../../src/storage/wal.js';
import { tempDir } from '../support/helpers.js';

test('a torn tail is trimmed to the last commit on open', async (t) => {
  const dir = tempDir(t);
  const { wal } = WriteAheadLog.open(dir);
  await wal.append('{"seq":1}\n{"seq":2}\n', 2, true);
  const [file] = wal.roll();
  await wal.close();
  appendFileSync(file!.path, '{"seq":3}\n{"se'); // a request cut short by a crash
  const reopened = WriteAheadLog.open(dir);
  assert.deepEqual(reopened.replay.map((f) => f.number), [file!.number]);
  assert.equal(readFileSync(file!.path, 'utf8'), '{"seq":1}\n{"seq":2}\n{"commit":2}\n');
  await reopened.wal.close();
});

test('a file with no complete request is emptied and dropped', async (t) => {
  const dir = tempDir(t);
  const { wal } = WriteAheadLog.open(dir);
  await wal.close();
  appendFileSync(`${dir}/wal-000000001.ndjson`, '{"seq":1}\n');
  const reopened = WriteAheadLog.open(dir);
  assert.equal(reopened.replay.length, 0);
  await reopened.wal.close();
});

test('concurrent reliable appends all resolve, across a roll', async (t) => {
  const dir = tempDir(t);
  const { wal } = WriteAheadLog.open(dir);
  const pending: Promise<void>[] = [];
  const files = [];
  for (let i = 1; i <= 50; i++) {
    pending.push(wal.append(`{"seq":${i}}\n`, i, true));
    if (i === 25) files.push(...wal.roll());
  }
  await Promise.all(pending);
  files.push(...wal.roll());
  assert.equal(files.length, 2);
  const text = files.map((f) => readFileSync(f.path, 'utf8')).join('');
  assert.equal(text.split('\n').filter((l) => l.startsWith('{"commit"')).length, 50);
  await wal.close();
});
