// The manifest's dead seqs: many are packed under format 3 (older versions refuse that file rather than
// read it without them), few stay a JSON array under format 2, and manifests of older versions with a
// long JSON array still load with every seq.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { EMPTY_MANIFEST, loadManifest, saveManifest } from '../../../src/storage/manifest/manifest.js';
import { tempDir } from '../../support/helpers.js';

const raw = (dir: string) => JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Record<string, unknown>;
const many = Array.from({ length: 20_000 }, (_, i) => 3 + i * 101);

test('many dead seqs are written packed under format 3 and load back exactly', (t) => {
  const dir = tempDir(t);
  const state = { ...EMPTY_MANIFEST, generation: 4, dead: many, childless: [7, 9] };
  const bytes = saveManifest(dir, state);
  assert.ok(bytes < JSON.stringify(many).length / 4, `${bytes} bytes`);
  const file = raw(dir);
  assert.equal(file['format'], 3);
  assert.equal(file['dead'], undefined);
  assert.deepEqual(file['childless'], [7, 9]);
  assert.deepEqual(loadManifest(dir), state);
});

test('a few dead seqs stay a JSON array under format 2', (t) => {
  const dir = tempDir(t);
  const state = { ...EMPTY_MANIFEST, dead: [5, 1, 3] };
  saveManifest(dir, state);
  assert.equal(raw(dir)['format'], 2);
  assert.deepEqual(raw(dir)['dead'], [5, 1, 3]);
  assert.deepEqual(loadManifest(dir), state);
});

test("an older version's manifest with a long JSON array of dead seqs loads with every one", (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ ...EMPTY_MANIFEST, format: 2, generation: 2, dead: many }));
  const m = loadManifest(dir);
  assert.deepEqual(m.dead, many);
  assert.equal(m.generation, 2);
});

test('a packed list that does not unpack makes the manifest unreadable, not empty of dead seqs', (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ ...EMPTY_MANIFEST, format: 3, dead_packed: 'gA' }));
  assert.throws(() => loadManifest(dir), /cannot read/);
});
