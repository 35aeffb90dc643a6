// Guarantees: the binary's cache folder logic (no binary needed): the base folder's precedence
// (TRACELAKE_CACHE_DIR, XDG_CACHE_HOME, ~/.cache), one unpack then reuse without reading the blob, a
// damaged copy replaced, a lost race resolved to the winner's copy, sizes checked, a folder of another
// user refused, and noexec mounts recognised from mountinfo.
import assert from 'node:assert/strict';
import { chownSync, mkdirSync, readdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { cacheBase, CacheFolderError, unpackRuntime } from '../../src/binary/cache-folder.js';
import { folderName, type Manifest } from '../../src/binary/manifest.js';
import { noexecMountOf } from '../../src/binary/mounts.js';
import { tempDir } from '../support/helpers.js';

const big = Buffer.from('x'.repeat(10_000));
const blob: Record<string, Buffer> = { 'file/a.json': Buffer.from('{"a":1}'), 'file/native/lib.so': gzipSync(big) };
const manifest: Manifest = {
  version: '9.9.9',
  hash: 'ab'.repeat(32),
  files: [
    { key: 'file/a.json', path: 'a.json', size: 7, gzip: false, executable: false },
    { key: 'file/native/lib.so', path: 'native/lib.so', size: big.length, gzip: true, executable: true },
  ],
};

test('the cache base: TRACELAKE_CACHE_DIR, then XDG_CACHE_HOME, then ~/.cache', () => {
  assert.equal(cacheBase({ TRACELAKE_CACHE_DIR: '/srv/c', XDG_CACHE_HOME: '/x' }), '/srv/c');
  assert.equal(cacheBase({ TRACELAKE_CACHE_DIR: 'rel' }), join(process.cwd(), 'rel'));
  assert.equal(cacheBase({ XDG_CACHE_HOME: '/x' }), '/x/tracelake');
  assert.equal(cacheBase({ XDG_CACHE_HOME: 'relative-is-ignored' }), join(homedir(), '.cache', 'tracelake'));
  assert.equal(cacheBase({}), join(homedir(), '.cache', 'tracelake'));
});

test('unpacks once, then reuses the folder without reading the blob', () => {
  const base = join(tempDir(), 'cache');
  let reads = 0;
  const read = (k: string) => {
    reads++;
    return blob[k]!;
  };
  const dir = unpackRuntime(manifest, read, base);
  assert.equal(dir, join(base, folderName(manifest)));
  assert.equal(readFileSync(join(dir, 'a.json'), 'utf8'), '{"a":1}');
  assert.deepEqual(readFileSync(join(dir, 'native', 'lib.so')), big);
  assert.equal(reads, 2);
  assert.equal(
    unpackRuntime(manifest, () => assert.fail('the blob is not read again'), base),
    dir,
  );
  assert.deepEqual(readdirSync(base), [folderName(manifest)], 'no temporary folder left');
});

test('a damaged copy (truncated file) is replaced', () => {
  const base = join(tempDir(), 'cache');
  const dir = unpackRuntime(manifest, (k) => blob[k]!, base);
  truncateSync(join(dir, 'native', 'lib.so'), 10);
  assert.equal(
    unpackRuntime(manifest, (k) => blob[k]!, base),
    dir,
  );
  assert.deepEqual(readFileSync(join(dir, 'native', 'lib.so')), big);
  assert.deepEqual(readdirSync(base), [folderName(manifest)]);
});

test('a lost race uses the copy already published', () => {
  const base = join(tempDir(), 'cache');
  let raced = false;
  // While this start writes its temporary folder, another start publishes a complete copy.
  const read = (k: string) => {
    if (!raced) {
      raced = true;
      unpackRuntime(manifest, (key) => blob[key]!, base);
    }
    return blob[k]!;
  };
  const dir = unpackRuntime(manifest, read, base);
  assert.equal(dir, join(base, folderName(manifest)));
  assert.deepEqual(readdirSync(base), [folderName(manifest)]);
});

test('a file that unpacks to the wrong size is an error, and leaves nothing behind', () => {
  const base = join(tempDir(), 'cache');
  const wrong = { ...manifest, files: [{ ...manifest.files[0]!, size: 8 }] };
  assert.throws(
    () => unpackRuntime(wrong, (k) => blob[k]!, base),
    (e: unknown) => e instanceof CacheFolderError && /expected 8/.test(e.message),
  );
  assert.deepEqual(readdirSync(base), []);
});

test('a folder owned by another user is never used', { skip: process.getuid?.() !== 0 && 'needs root to give a folder away' }, () => {
  const base = join(tempDir(), 'cache');
  const dir = unpackRuntime(manifest, (k) => blob[k]!, base);
  chownSync(dir, 65534, 65534);
  assert.throws(
    () => unpackRuntime(manifest, (k) => blob[k]!, base),
    (e: unknown) => e instanceof CacheFolderError && /belongs to another user/.test(e.message),
  );
});

test('noexec mounts are recognised from mountinfo (longest mount point wins)', () => {
  const dir = tempDir();
  const inside = join(dir, 'sub');
  mkdirSync(inside);
  const info = join(dir, 'mountinfo');
  const line = (point: string, opts: string) => `1 0 8:1 / ${point.replace(/ /g, '\\040')} ${opts} - ext4 /dev/x rw`;
  writeFileSync(info, [line('/', 'rw,relatime'), line(dir, 'rw,noexec,nosuid'), line(inside, 'rw,relatime')].join('\n'));
  assert.equal(noexecMountOf(dir, info), dir);
  assert.equal(noexecMountOf(inside, info), undefined, 'a nested exec mount inside a noexec one is fine');
  assert.equal(noexecMountOf(join(dir, 'missing'), info), undefined, 'unknown folders are not reported');
});
