// Guarantee: memory DuckDB frees in bulk (a Parquet row group written and the buffers read for it: a
// merge does little else) goes back to the allocator's pool for reuse and to the system, instead of
// piling up as free pages while the COPY runs. With DuckDB's default threshold (512 MiB) a merge-like
// COPY of 240k rows of ~1.3 KB peaked ~245 MiB above where it began; on the merge database
// (openMergeDatabase, which sets it) ~125 MiB (the bound here is 180). Measured in child processes of their own.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { tempDir } from '../support/helpers.js';

const run = (mode: string, dir: string) => {
  const child = spawnSync(process.execPath, ['--import', 'tsx', 'test/support/copy-rss.ts', mode, dir], { encoding: 'utf8' });
  assert.equal(child.status, 0, child.stderr);
  return child.stdout;
};

test("a merge-like COPY's peak memory stays near its row group, not its freed buffers", { timeout: 120_000 }, (t) => {
  const dir = tempDir(t);
  run('prepare', dir);
  const { before, peak } = JSON.parse(run('copy', dir).trim().split('\n').at(-1)!) as { before: number; peak: number };
  assert.ok(peak - before < 180, `peak RSS ${Math.round(peak - before)} MiB above the start (${Math.round(before)} MiB)`);
});
