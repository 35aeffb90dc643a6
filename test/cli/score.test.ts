// Guarantees: `tracelake score` scores the records of a log stream that its filter selects with the
// named scorer, against the folder, and says what it did; an unknown scorer fails with the reason.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../../scripts/binary/config.js';
import { TraceStore } from '../../src/engine/trace-store.js';
import { tempDir } from '../support/helpers.js';
import { nodeEntry } from '../support/node-entry.js';

const cli = (args: string[]) =>
  spawnSync(process.execPath, [...nodeEntry(join(ROOT, 'src', 'cli.ts')), ...args], { cwd: ROOT, encoding: 'utf8' });

test('tracelake score scores the filtered records of a log stream', async () => {
  const dir = join(tempDir(), 'data');
  const store = await TraceStore.open(dir);
  const project = store.createProject({ name: 'cli-project' });
  const stream = store.createLogStream(project.id, 'main');
  await store.logTraces(project.id, {
    log_stream_id: stream.id,
    traces: ['keep', 'keep', 'skip'].map((n, i) => ({
      type: 'trace',
      name: `t${i}`,
      input: 'q',
      spans: [{ type: 'llm', name: n, input: 'q', output: `the same answer ${i}`, dataset_output: `the same answer ${i}` }],
    })) as never,
  });
  await store.close();
  const filter = JSON.stringify([{ type: 'text', column_id: 'name', operator: 'eq', value: 'keep' }]);
  const run = cli(['score', '--data', dir, '--project', 'cli-project', '--log-stream', 'main', '--scorer', 'bleu', '--filter', filter]);
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stderr, /done: 2 success/);
  const again = await TraceStore.open(dir);
  try {
    const page = await again.search('span', project.id, { log_stream_id: stream.id, limit: 10 });
    const scored = (page.records as Record<string, any>[]).map((r) => [r['name'], r['metrics']['bleu'] ?? null]).sort();
    assert.deepEqual(scored, [
      ['keep', 1],
      ['keep', 1],
      ['skip', null],
    ]);
  } finally {
    await again.close();
  }
  const bad = cli(['score', '--data', dir, '--project', 'cli-project', '--log-stream', 'main', '--scorer', 'no_such_scorer']);
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /no scorer with id or name "no_such_scorer"/);
});
