// Guarantees: a server being built holds the open's background work that waits for a pause in
// questions (here the id filter's cover of what its checkpoint missed) until it is ready, and for a
// pause after: `tracelake serve`'s first questions, asked at once, do not meet it however long the start
// took. It still runs once questions pause.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { internalsOf } from '../../src/engine/internals.js';
import { TraceStore } from '../../src/engine/trace-store.js';
import { buildServer } from '../../src/server/build-server.js';
import { CHECKPOINT } from '../../src/storage/indexes/store-id-filter.js';
import { tempDir, toolRows } from '../support/helpers.js';

const PAUSE_MS = 1_500;

test("a server being built holds the open's background work until it is ready, and a pause after", async (t) => {
  const dir = tempDir(t);
  const options = { threads: 1, autoCompact: false };
  {
    const store = await TraceStore.open(dir, options);
    const records = internalsOf(store).records;
    for (let i = 0; i < 2; i++) {
      await records.append(toolRows(i * 2_000, 2_000), true);
      await records.seal();
    }
    await store.close();
  }
  rmSync(join(dir, CHECKPOINT), { force: true }); // every segment is left for the background to cover
  const store = await TraceStore.open(dir, { ...options, mergePauseMs: PAUSE_MS });
  const records = internalsOf(store).records;
  t.after(() => store.close());
  const openedAt = performance.now();
  const app = buildServer({ store, logger: false, viewer: false });
  t.after(() => app.close());
  // A start longer than the pause: without the server's hold the cover would start meanwhile.
  await new Promise((r) => setTimeout(r, PAUSE_MS + 300));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const listenedAt = performance.now();
  await new Promise((r) => setTimeout(r, 300));
  const uncovered = records.jsSizes()['idFilterUncovered'];
  // Only meaningful while the pause since the listen has not run out (a stalled machine could pass it).
  if (performance.now() - listenedAt < PAUSE_MS) assert.equal(uncovered, 2, 'nothing covered within a pause of the listen');
  assert.ok(listenedAt - openedAt > PAUSE_MS);
  await records.idFilterSettled();
  assert.equal(records.jsSizes()['idFilterUncovered'], 0, 'covered once questions paused');
});
