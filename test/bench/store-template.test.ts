// The peer harness's copy of a template store (--data-dir) links the segment files instead of copying
// them (100M spans: ~30 GB). Safe only if nothing a copy does changes a file of the template: deletes,
// new records, seals and compaction on the copy must leave every template file as it was, and a
// second copy must answer as the first did before its changes.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { copyStore, ensureTemplate, openCopy } from '../../bench/peers/store-template.js';
import { TracelakePeer } from '../../bench/peers/tracelake-peer.js';
import { questionById, spanBatches } from '../../bench/workload.js';

function digests(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.set(p.slice(dir.length), createHash('sha256').update(readFileSync(p)).digest('hex'));
    }
  };
  walk(dir);
  return out;
}

test('a copy of a template shares its segment files, and nothing done to the copy changes the template', async () => {
  const root = mkdtempSync(join(tmpdir(), 'tl-template-'));
  try {
    const tpl = join(root, 'tpl');
    const info = await ensureTemplate(tpl, 3000, 7, 500, () => {});
    const before = digests(join(tpl, 'tracelake'));
    assert.ok(
      [...before.keys()].some((f) => f.endsWith('.parquet')),
      'the template has segments',
    );

    const count = questionById('count-tree');
    const del = questionById('delete-filter');
    const first = new TracelakePeer();
    await first.adopt(await openCopy(tpl, info, join(root, 'a')));
    const seg = [...before.keys()].find((f) => f.endsWith('.parquet'))!;
    assert.equal(
      statSync(join(root, 'a', 'tracelake', seg)).ino,
      statSync(join(tpl, 'tracelake', seg)).ino,
      'segments are linked, not copied',
    );
    const counted = await first.ask(count, 0);
    assert.ok(counted.count! > 0);
    // Change the copy every way the harness and a store can: deletes, new spans, seal, compaction.
    const deleted = await first.ask(del, 0);
    assert.ok(deleted.count! > 0, 'the delete removed spans');
    await first.ask(del, 1);
    for (const batch of spanBatches({ spans: 600, seed: 8, batchSpans: 600 })) await first.insert(batch);
    await first.finishLoad();
    assert.ok((await first.ask(count, 0)).count !== counted.count, 'the copy changed');
    await first.close();

    assert.deepEqual(digests(join(tpl, 'tracelake')), before, 'every template file is as it was');
    const second = new TracelakePeer();
    await second.adopt(await openCopy(tpl, info, join(root, 'b')));
    assert.deepEqual(await second.ask(count, 0), counted);
    await second.close();

    const n = copyStore(join(tpl, 'tracelake'), join(root, 'c'));
    assert.ok(n.linked > 0 && n.copied > 0, `linked ${n.linked}, copied ${n.copied}`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
