// Guarantees: `tracelake serve --no-merges` (and TRACELAKE_AUTO_COMPACT=0) serves a folder as it is:
// small segments sealed while logging stay as they are, where a server without the flag merges them
// in the pause after logging (the same load, measured first, so the wait covers a merge's time).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadManifest } from '../../src/storage/manifest/manifest.js';
import { jsonCaller, tempDir } from '../support/helpers.js';
import { serveChild } from '../support/serve-child.js';
import { waitFor } from '../support/wait-for.js';

async function serveAndLog(t: TestContext, args: string[], env: Record<string, string>): Promise<string> {
  const dir = join(tempDir(t), 'data');
  const key = `tl_nomerge_${Date.now()}`;
  // Small memory tables: every request or two seals a segment.
  const { url } = await serveChild(t, dir, ['--no-ui', ...args], {
    TRACELAKE_API_KEY: key,
    TRACELAKE_MEM_TABLE_BYTES: String(64 * 1024),
    ...env,
  });
  const call = jsonCaller(url, key);
  const project = (await call('POST', '/projects', { name: 'p' })).body as { id: string };
  const stream = (await call('POST', `/projects/${project.id}/log_streams`, { name: 's' })).body as { id: string };
  for (let r = 0; r < 12; r++) {
    const res = await call('POST', `/projects/${project.id}/traces`, {
      log_stream_id: stream.id,
      reliable: true,
      traces: Array.from({ length: 20 }, (_, i) => ({
        name: `r${r}-${i}`,
        input: 'x'.repeat(4000),
        spans: [{ type: 'llm', name: 'chat', input: 'q', output: 'a' }],
      })),
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  }
  return dir;
}

/** Segments written since the folder began, and those listed now (fewer once a merge replaced some). */
function segments(dir: string): { written: number; listed: number } {
  const m = loadManifest(dir);
  return { written: m.next_segment - 1, listed: m.segments.length };
}

test('serve --no-merges leaves sealed segments as they are; without it the same load merges', { timeout: 240_000 }, async (t) => {
  const t0 = Date.now();
  const merging = await serveAndLog(t, [], {});
  await waitFor(() => segments(merging).written > segments(merging).listed, { limitMs: 120_000, what: 'a merge without the flag' });
  const mergeMs = Date.now() - t0;

  for (const [args, env] of [
    [['--no-merges'], {}],
    [[], { TRACELAKE_AUTO_COMPACT: '0' }],
  ] as const) {
    const t1 = Date.now();
    const dir = await serveAndLog(t, [...args], env);
    // At least as long as the server without the flag took from its start to its first merge.
    await sleep(Math.max(0, mergeMs - (Date.now() - t1)) + 2000);
    const s = segments(dir);
    assert.ok(s.written > 4, `the load sealed several segments (${s.written})`);
    assert.equal(s.listed, s.written, `${args.join(' ') || JSON.stringify(env)}: every segment written is still listed`);
  }
});
