// Guarantees: `tracelake sql` prints the rows of a read-only query (JSON lines, JSON or CSV) and
// refuses a write with a clear message and a failing exit status; beside a process that holds the
// folder, `sql` and `export` read it read-only (by themselves, or with --read-only).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../../scripts/binary/config.js';
import { TraceStore } from '../../src/engine/trace-store.js';
import { everyKindTrace, tempDir } from '../support/helpers.js';
import { startWriter } from '../support/read-only-writer-client.js';
import { nodeEntry } from '../support/node-entry.js';

const cli = (args: string[]) =>
  spawnSync(process.execPath, [...nodeEntry(join(ROOT, 'src', 'cli.ts')), ...args], { cwd: ROOT, encoding: 'utf8' });

async function folderWithTraces(n: number): Promise<string> {
  const dir = join(tempDir(), 'data');
  const store = await TraceStore.open(dir);
  const project = store.createProject({ name: 'cli-project' });
  const stream = store.createLogStream(project.id, 'main');
  await store.logTraces(project.id, {
    log_stream_id: stream.id,
    traces: Array.from({ length: n }, (_, i) => everyKindTrace(`t${i}`) as any),
  });
  await store.close();
  return dir;
}

test('tracelake sql prints rows and refuses writes', async () => {
  const dir = await folderWithTraces(2);
  const lines = cli(['sql', 'SELECT type, count(*) AS n FROM spans WHERE type = $1 GROUP BY type', '--param', 'llm', '--data', dir]);
  assert.equal(lines.status, 0, lines.stderr);
  assert.deepEqual(
    lines.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l)),
    [{ type: 'llm', n: 2 }],
  );
  const csv = cli([
    'sql',
    'SELECT p.name, count(*) AS n FROM traces t JOIN projects p ON p.id = t.project_id GROUP BY 1',
    '--format',
    'csv',
    '--data',
    dir,
  ]);
  assert.equal(csv.status, 0, csv.stderr);
  assert.equal(csv.stdout, 'name,n\ncli-project,2\n');
  const write = cli(['sql', 'DELETE FROM projects', '--data', dir]);
  assert.notEqual(write.status, 0);
  assert.match(write.stderr, /only read-only queries/);
});

test('tracelake export writes the selected records; no progress bar when stderr is no terminal', async () => {
  const dir = await folderWithTraces(3);
  const out = join(tempDir(), 'spans.jsonl');
  const filter = JSON.stringify({ filter: { type: 'text', column_id: 'type', operator: 'eq', value: 'llm' } });
  const res = cli([
    'export',
    '--project',
    'cli-project',
    '--log-stream',
    'main',
    '--level',
    'span',
    '--filter-tree',
    filter,
    '--format',
    'jsonl',
    '--out',
    out,
    '--data',
    dir,
  ]);
  assert.equal(res.status, 0, res.stderr);
  assert.equal(res.stderr, `exported 3 records to ${out}\n`);
  const rows = readFileSync(out, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(
    rows.map((r) => r.type),
    ['llm', 'llm', 'llm'],
  );
  const missing = cli(['export', '--project', 'nope', '--out', out, '--data', dir]);
  assert.notEqual(missing.status, 0);
  assert.match(missing.stderr, /no project named nope/);
});

test('tracelake import reads an export into a new folder, creating the project and log stream', async () => {
  const dir = await folderWithTraces(2);
  const file = join(tempDir(), 'all.arrow');
  assert.equal(cli(['export', '--project', 'cli-project', '--format', 'arrow', '--out', file, '--data', dir]).status, 0);
  const target = join(tempDir(), 'target');
  const res = cli(['import', file, '--project', 'copy', '--log-stream', 'restored', '--data', target]);
  assert.equal(res.status, 0, res.stderr);
  assert.match(res.stderr, /^imported \d+ records into copy\/restored\n$/);
  const count = cli([
    'sql',
    "SELECT count(*) AS n FROM spans s JOIN runs r ON r.id = s.run_id WHERE r.name = 'restored'",
    '--data',
    target,
  ]);
  assert.deepEqual(JSON.parse(count.stdout), { n: 12 });
});

test('tracelake retention sets and reads retention_days of a project and a log stream', async () => {
  const dir = await folderWithTraces(1);
  const set = cli(['retention', 'set', '--project', 'cli-project', '--days', '30', '--data', dir]);
  assert.equal(set.status, 0, set.stderr);
  assert.deepEqual(JSON.parse(set.stdout), { retention_days: 30, effective_retention_days: 30 });
  const get = cli(['retention', 'get', '--project', 'cli-project', '--log-stream', 'main', '--data', dir]);
  assert.deepEqual(JSON.parse(get.stdout), { retention_days: null, effective_retention_days: 30 });
  const bad = cli(['retention', 'set', '--project', 'cli-project', '--days', '0', '--data', dir]);
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /retention_days/);
});

test('beside a writer that holds the folder, tracelake sql and export read it read-only (by themselves or with --read-only)', async (t) => {
  const dir = join(tempDir(t), 'data');
  const writer = await startWriter(t, dir);
  await writer.send({ op: 'setup' });
  await writer.send({ op: 'log', n: 2, tag: 'a' });
  await writer.send({ op: 'flush' });
  await writer.send({ op: 'log', n: 1, tag: 'b' });
  const count = 'SELECT count(*)::INTEGER AS n FROM traces';
  const plain = cli(['sql', count, '--data', dir]);
  assert.equal(plain.status, 0, plain.stderr);
  assert.deepEqual(JSON.parse(plain.stdout), { n: 3 });
  assert.match(plain.stderr, /reading it read-only beside that process/);
  const explicit = cli(['sql', count, '--read-only', '--data', dir]);
  assert.equal(explicit.status, 0, explicit.stderr);
  assert.deepEqual(JSON.parse(explicit.stdout), { n: 3 });
  assert.equal(explicit.stderr, '');
  const out = join(tempDir(t), 'traces.jsonl');
  const exported = cli([
    'export',
    '--project',
    'live',
    '--level',
    'trace',
    '--format',
    'jsonl',
    '--out',
    out,
    '--read-only',
    '--data',
    dir,
  ]);
  assert.equal(exported.status, 0, exported.stderr);
  assert.deepEqual(
    readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).name)
      .sort(),
    ['a-0', 'a-1', 'b-0', 'chat', 'chat', 'chat'],
    'the traces with their spans',
  );
  // Import writes: it still needs the folder to itself.
  const imported = cli(['import', out, '--project', 'live', '--log-stream', 'main', '--data', dir]);
  assert.notEqual(imported.status, 0);
});
