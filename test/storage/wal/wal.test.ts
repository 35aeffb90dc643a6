// Guarantees: the write-ahead log is a plain Arrow IPC stream any Arrow reader reads; it keeps whole
// requests only (a torn or corrupted tail is cut at the last whole request on open); rolled files end
// with an end-of-stream marker; concurrent reliable appends share an fsync.
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { RecordBatchStreamReader } from 'apache-arrow';
import { BatchBuilder } from '../../../src/storage/memtable/batch-builder.js';
import { encodeEntry, listWalFiles, readWalFile, WriteAheadLog } from '../../../src/storage/wal/wal.js';
import { tempDir } from '../../support/helpers.js';

const row = (seq: number, name: string) => ({
  seq,
  id: `00000000-0000-4000-8000-${String(seq).padStart(12, '0')}`,
  type: 'tool',
  project_id: 'p',
  run_id: 'r',
  name,
  input: { q: name },
  output: name,
  created_at: 1_700_000_000_000_000 + seq,
  updated_at: 1_700_000_000_000_000 + seq,
  tags: ['a', name],
  metrics: { latency: seq / 2 },
  is_complete: true,
  has_children: false,
});

function entry(seqs: number[], dead: number[] = []): Uint8Array {
  const batch = new BatchBuilder().build(seqs.map((s) => row(s, `n${s}`)));
  return encodeEntry(batch, dead, seqs[seqs.length - 1] ?? 0);
}

test('a log file is an Arrow IPC stream: the rows, the commit metadata and the first seq read back with apache-arrow', async (t) => {
  const dir = tempDir(t);
  const { wal } = WriteAheadLog.open(dir);
  wal.start(1);
  await wal.append(entry([1, 2]), true);
  await wal.append(encodeEntry(null, [1], 2), true);
  const closed = wal.roll(3);
  await wal.close();
  const [file] = listWalFiles(dir).filter((f) => f.number === closed);
  const reader = RecordBatchStreamReader.from(readFileSync(file!.path));
  reader.open();
  assert.equal(reader.schema.metadata.get('tracelake.first_seq'), '1');
  const batches = [...reader];
  assert.equal(batches.length, 2);
  assert.deepEqual(batches[0]!.getChild('name')!.toArray(), ['n1', 'n2']);
  assert.equal(batches[0]!.getChild('input')!.get(1), '{"q":"n2"}');
  assert.deepEqual(JSON.parse(batches[1]!.metadata.get('tracelake.commit')!).dead, [1]);
  const read = readWalFile(file!.path);
  assert.equal(read.entries.length, 2);
  assert.equal(read.entries[0]!.batch!.numRows, 2);
  assert.equal(read.entries[1]!.batch, null);
  assert.equal(read.validBytes, statSync(file!.path).size - 8, 'everything but the end-of-stream marker');
});

test('a torn tail is cut at the last whole request on open', async (t) => {
  const dir = tempDir(t);
  const { wal } = WriteAheadLog.open(dir);
  wal.start(1);
  await wal.append(entry([1, 2]), true);
  await wal.close();
  const [file] = listWalFiles(dir);
  const whole = statSync(file!.path).size;
  const next = entry([3]);
  appendFileSync(file!.path, next.subarray(0, next.length - 7)); // a request cut short by a crash
  const reopened = WriteAheadLog.open(dir);
  assert.deepEqual(
    reopened.replay.map((f) => f.number),
    [file!.number],
  );
  assert.equal(statSync(file!.path).size, whole);
  assert.equal(readWalFile(file!.path).entries.length, 1);
});

test('a request whose body does not match its CRC ends the file, and so does garbage after it', async (t) => {
  const dir = tempDir(t);
  const { wal } = WriteAheadLog.open(dir);
  wal.start(1);
  await wal.append(entry([1]), true);
  await wal.close();
  const [file] = listWalFiles(dir);
  const good = statSync(file!.path).size;
  const bad = Buffer.from(entry([2, 3]));
  bad[bad.length - 20]! ^= 0xff; // one flipped byte in the body
  appendFileSync(file!.path, bad);
  appendFileSync(file!.path, Buffer.alloc(4096)); // zeros a power cut can leave
  const { entries, validBytes } = readWalFile(file!.path);
  assert.equal(entries.length, 1);
  assert.equal(validBytes, good);
  WriteAheadLog.open(dir);
  assert.equal(statSync(file!.path).size, good);
});

test('files up to the sealed number are deleted on open; empty and headerless files too', async (t) => {
  const dir = tempDir(t);
  const { wal } = WriteAheadLog.open(dir);
  wal.start(1);
  await wal.append(entry([1]), true);
  wal.roll(2);
  await wal.append(entry([2]), true);
  wal.roll(3);
  await wal.close();
  writeFileSync(`${dir}/wal-000000009.arrows`, 'not arrow');
  const files = listWalFiles(dir);
  assert.equal(files.length, 4);
  truncateSync(files[2]!.path, 0);
  const { replay } = WriteAheadLog.open(dir, files[0]!.number);
  assert.deepEqual(
    replay.map((f) => f.number),
    [files[1]!.number],
  );
  assert.deepEqual(
    listWalFiles(dir).map((f) => f.number),
    [files[1]!.number],
  );
});

test('concurrent reliable appends all resolve, sharing fsyncs', async (t) => {
  const dir = tempDir(t);
  const { wal } = WriteAheadLog.open(dir);
  wal.start(1);
  await Promise.all(Array.from({ length: 50 }, (_, i) => wal.append(entry([i + 1]), true)));
  await wal.close();
  const [file] = listWalFiles(dir);
  assert.equal(readWalFile(file!.path).entries.length, 50);
});

/** A log file holding one entry with a few dead seqs, then `next` as appended by a crash or a later write. */
async function logWith(t: Parameters<typeof tempDir>[0], next: Uint8Array): Promise<{ path: string; good: number }> {
  const dir = tempDir(t);
  const { wal } = WriteAheadLog.open(dir);
  wal.start(1);
  await wal.append(encodeEntry(null, [1, 2], 2), true);
  await wal.close();
  const [file] = listWalFiles(dir);
  const good = statSync(file!.path).size;
  appendFileSync(file!.path, next);
  return { path: file!.path, good };
}

const manySeqs = (n: number) => Array.from({ length: n }, (_, i) => 1_000 + i * 7 + (i % 3));

test("a large delete's seqs are packed in the entry and read back exactly; a short list stays a JSON array", async (t) => {
  const dead = manySeqs(50_000);
  const childless = manySeqs(300).map((q) => q + 1);
  const big = encodeEntry(null, dead, 40_000, childless);
  const { path } = await logWith(t, big);
  const { entries } = readWalFile(path);
  assert.equal(entries.length, 2);
  assert.deepEqual(entries[0]!.dead, [1, 2], 'the short list, a JSON array as older versions wrote it');
  assert.deepEqual(entries[1]!.dead, dead);
  assert.deepEqual(entries[1]!.childless, childless);
  assert.equal(entries[1]!.lastSeq, 40_000);
  assert.ok(big.length < JSON.stringify(dead).length / 4, `${big.length} bytes for ${dead.length} seqs`);
  const reader = RecordBatchStreamReader.from(readFileSync(path));
  const commits = [...reader].map((b) => JSON.parse(b.metadata.get('tracelake.commit')!) as Record<string, unknown>);
  assert.deepEqual(commits[0]!['dead'], [1, 2]);
  assert.equal(commits[1]!['dead'], undefined);
  assert.equal(typeof commits[1]!['dead_packed'], 'string');
});

test('a packed entry cut short ends the file at the entry before it', async (t) => {
  const big = encodeEntry(null, manySeqs(5_000), 40_000);
  const { path, good } = await logWith(t, big.subarray(0, Math.floor(big.length / 2)));
  const { entries, validBytes } = readWalFile(path);
  assert.equal(entries.length, 1);
  assert.equal(validBytes, good);
});

test('a packed list changed in the metadata (same length, body intact) ends the file there', async (t) => {
  const big = Buffer.from(encodeEntry(null, manySeqs(5_000), 40_000));
  const at = big.indexOf('"dead_packed":"') + '"dead_packed":"'.length + 100;
  big[at] = big[at] === 0x41 ? 0x42 : 0x41; // another base64 letter: still a valid list, other seqs
  const { path, good } = await logWith(t, big);
  const { entries, validBytes } = readWalFile(path);
  assert.equal(entries.length, 1, 'the changed entry is not replayed');
  assert.equal(validBytes, good);
});
