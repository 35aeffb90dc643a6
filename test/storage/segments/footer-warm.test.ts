// After an open the live segments' footers, and their top lists files', are read once in the
// background (DuckDB keeps them), unless warmFooters is false; a file gone from under it only ends
// the warm-up (no warning, the open stands).
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { Database } from '../../../src/db/database.js';
import { internalsOf } from '../../../src/engine/internals.js';
import { TraceStore } from '../../../src/engine/trace-store.js';
import { topListsPath } from '../../../src/storage/indexes/top-lists.js';
import type { ManifestState } from '../../../src/storage/manifest/manifest.js';
import { compile } from '../../../src/query/sql.js';
import { tempDir } from '../../support/helpers.js';
import { llmTraces } from '../../support/metric-pages.js';

/** A closed store of three sealed batches, each with top lists. */
async function written(t: TestContext): Promise<{ dir: string; files: string[]; lists: string[] }> {
  const dir = tempDir(t);
  const store = await TraceStore.open(dir, { threads: 1, autoCompact: false, topListMinRows: 0 });
  const projectId = store.createProject({ name: 'p' }).id;
  const log_stream_id = store.createLogStream(projectId, 'default').id;
  for (let k = 0; k < 3; k++) {
    await store.logTraces(projectId, { log_stream_id, traces: llmTraces(k * 1000, 40) } as never);
    await store.flush();
  }
  await store.close();
  const m = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as ManifestState;
  const files = m.segments.map((g) => join(dir, g.file));
  const lists = m.segments.filter((g) => g.top_lists).map((g) => topListsPath(join(dir, g.file)));
  return { dir, files, lists };
}

/** The files named by the footers' warm-up statements until the test ends. */
function watchWarmUp(t: TestContext): Set<string> {
  const named = new Set<string>();
  const original = Database.prototype.all;
  Database.prototype.all = function (this: Database, q) {
    const c = compile(q);
    if (c.text.includes('count(*) AS n FROM read_parquet(') && c.text.includes('union_by_name = true')) {
      for (const p of c.params) if (Array.isArray(p)) for (const f of p) named.add(String(f));
    }
    return original.call(this, q);
  };
  t.after(() => {
    Database.prototype.all = original;
  });
  return named;
}

test("an open reads every live segment's footer and its top lists file's once, in the background", async (t) => {
  const { dir, files, lists } = await written(t);
  assert.ok(files.length >= 4 && lists.length >= 3, `${files.length} segments, ${lists.length} lists`);
  const named = watchWarmUp(t);
  const store = await TraceStore.open(dir, { threads: 1, autoCompact: false });
  await internalsOf(store).records.footersWarmed();
  assert.deepEqual([...named].sort(), [...files, ...lists].sort());
  await store.close();
});

test('warmFooters false reads none; a file gone from under the warm-up only ends it', async (t) => {
  const { dir, files } = await written(t);
  const named = watchWarmUp(t);
  const off = await TraceStore.open(dir, { threads: 1, autoCompact: false, warmFooters: false });
  await internalsOf(off).records.footersWarmed();
  assert.equal(named.size, 0);
  await off.close();
  // A segment file removed behind the store's back: the warm-up's statement fails and it stops, quietly.
  rmSync(files[0]!);
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.message);
  process.on('warning', onWarning);
  t.after(() => process.off('warning', onWarning));
  const store = await TraceStore.open(dir, { threads: 1, autoCompact: false, indexRepair: 'held' });
  await internalsOf(store).records.footersWarmed();
  assert.ok(named.has(files[0]!), 'the warm-up asked for the missing file');
  assert.deepEqual(warnings, []);
  await store.close();
});

test('the warm-up waits for a pause in questions (the open counts as one), then reads every footer', async (t) => {
  const { dir, files, lists } = await written(t);
  const named = watchWarmUp(t);
  const store = await TraceStore.open(dir, { threads: 1, autoCompact: false, mergePauseMs: 300 });
  const projectId = store.findProjects()[0]!.id;
  const until = performance.now() + 900;
  while (performance.now() < until) {
    await store.count('span', projectId, {});
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.equal(named.size, 0, 'no footer warm-up while questions come');
  await internalsOf(store).records.footersWarmed();
  assert.deepEqual([...named].sort(), [...files, ...lists].sort());
  await store.close();
});
