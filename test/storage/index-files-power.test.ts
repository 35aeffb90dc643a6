// Guarantee: a segment's side files (its text index and its child index) are durable before any
// manifest lists the segment. Under the power-loss model of test/support/fs-recorder.ts (after a cut,
// a folder holds the entries of its last fsync and a file the bytes of its last fsync), at every cut
// of a workload with seals and merges, every segment the surviving manifest lists has beside it a
// whole, current text index (trigram sets and token index) and a whole Parquet child index (its magic at both ends, the footer inside
// the file): none needs the rebuild on open (which would cover a missing one, at the cost of reading
// the segment). One workload run serves both checks.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { childIndexPath } from '../../src/storage/indexes/child-index.js';
import { parseTextIndex, textIndexPath, tokenIndexPath } from '../../src/storage/indexes/text-index.js';
import { tokenFileSound } from '../../src/storage/indexes/token-index.js';
import { tempDir } from '../support/helpers.js';
import { PowerJournal } from '../support/power-image.js';
import { nodeEntry } from '../support/node-entry.js';

/** Whether the bytes are a whole Parquet file: PAR1, a body, the footer's length, PAR1. */
function wholeParquet(buf: Buffer): boolean {
  if (buf.length < 12 || buf.toString('latin1', 0, 4) !== 'PAR1' || buf.toString('latin1', buf.length - 4) !== 'PAR1') return false;
  const footer = buf.readUInt32LE(buf.length - 8);
  return footer > 0 && footer + 12 <= buf.length;
}

test('at every power cut, each listed segment has its text index and its child index', { timeout: 180_000 }, () => {
  const base = tempDir();
  const journalDir = join(base, 'journal');
  const r = spawnSync(
    process.execPath,
    [...nodeEntry('test/support/power-workload.ts'), journalDir, join(base, 'data'), 'mixed', '11', '30'],
    { encoding: 'utf8', timeout: 120_000, env: { ...process.env, TL_TEXT_INDEX: '1' } },
  );
  assert.equal(r.status, 0, `the writer failed: ${r.stderr}`);
  const root = (JSON.parse(readFileSync(join(journalDir, 'acks.ndjson'), 'utf8').split('\n')[0]!) as { root: string }).root;
  const journal = PowerJournal.load(journalDir, root);
  const image = join(base, 'image');
  let listed = 0;
  for (let k = 0; k <= journal.events.length; k++) {
    journal.build(k, image, (name) => name === 'LOCK');
    const manifest = join(image, 'manifest.json');
    if (!existsSync(manifest) || readFileSync(manifest).length === 0) continue;
    const m = JSON.parse(readFileSync(manifest, 'utf8')) as { segments: { file: string; row_groups: [number, number, number][] }[] };
    for (const s of m.segments) {
      const text = textIndexPath(join(image, s.file));
      const ix = existsSync(text) ? parseTextIndex(readFileSync(text)) : null;
      assert.ok(ix, `cut after event ${k}: ${s.file} is listed without a whole text index`);
      assert.deepEqual(
        ix.rows,
        s.row_groups.map((g) => g[2]),
        `cut after event ${k}: ${s.file}'s text index has the segment's row groups`,
      );
      const tok = tokenIndexPath(join(image, s.file));
      const tokBytes = existsSync(tok) ? readFileSync(tok) : null;
      assert.ok(tokBytes && tokenFileSound(tokBytes), `cut after event ${k}: ${s.file} is listed without a whole token index`);
      assert.equal(
        tokBytes.readUInt32LE(4),
        s.row_groups.reduce((n, g) => n + g[2], 0),
        `cut after event ${k}: ${s.file}'s token index has the segment's rows`,
      );
      const kids = childIndexPath(join(image, s.file));
      assert.ok(
        existsSync(kids) && wholeParquet(readFileSync(kids)),
        `cut after event ${k}: ${s.file} is listed without a whole child index`,
      );
      listed++;
    }
  }
  assert.ok(listed > 20, `segments checked: ${listed}`);
});
